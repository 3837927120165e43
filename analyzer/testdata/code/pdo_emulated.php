<?php
// Emulated prepares: PDO sends the statement text with the values in it,
// no server-side statement.

$pdo = new \PDO('pgsql:host=db;dbname=app');
$pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
