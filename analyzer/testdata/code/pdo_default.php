<?php
// pdo_pgsql runs PDO::prepare() and PDO::query() as named server-side
// statements unless emulation is on.

$default = new PDO("pgsql:host=db;dbname=app;options='--application_name=worker'"); // want protocol-prepare:info
$log->info("connect to pgsql:host=db;dbname=app");
