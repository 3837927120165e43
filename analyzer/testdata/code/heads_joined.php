<?php
// SQL heads that code completes with values.
function enterTenant(PDO $pdo, string $tz, string $schema): void
{
    $pdo->exec("SET TIME ZONE '" . $tz . "'"); // want session-set:info
    $pdo->exec("SET search_path TO " . $schema); // want session-set:critical
    $pdo->exec("SET LOCAL search_path TO " . $schema);
}
