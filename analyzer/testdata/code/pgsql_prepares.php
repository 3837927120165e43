<?php
// PHP's PostgreSQL driver APIs that keep named server-side prepared
// statements, next to the forms that do not.

function named($conn, $id)
{
    pg_prepare($conn, "find_user", 'SELECT * FROM users WHERE id = $1'); // want protocol-prepare:info
    pg_execute($conn, "find_user", [$id]);
    pg_send_prepare($conn, 'count_users', 'SELECT count(*) FROM users'); // want protocol-prepare:info
    $name = uniqid('stmt-', true);
    pg_send_prepare($conn, $name, 'SELECT 1'); // want protocol-prepare:info
}

function unnamed($conn, $id)
{
    pg_prepare($conn, "", 'SELECT * FROM users WHERE id = $1');
    pg_query_params($conn, 'SELECT * FROM users WHERE id = $1', [$id]);
    $db->pg_prepare("x"); // a method of that name, not the function
}

function pdo()
{
    $pdo = new PDO('pgsql:host=db;dbname=app', 'app', getenv('PGPASSWORD'), [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_EMULATE_PREPARES => false, // want protocol-prepare:info
    ]);
    return $pdo;
}

class ProvidesSQL
{
    public static function provideStatements()
    {
        return [['SET search_path TO tenant']];
    }

    public function testSearchPath()
    {
        $pdo = Mockery::mock(PDO::class);
        $pdo->expects('exec')->with('SET search_path TO tenant');
    }
}
