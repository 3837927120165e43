<!-- Job list; it's "rendered" around the code below. -->
<?php

use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Log;

final class JobRepository
{
    public function __construct(private PDO $pdo, private $conn, private string $schema) {}

    public function claim(int $id, string $tenant): void
    {
        $this->pdo->exec("SET search_path TO {$this->schema}, public"); // want session-set:critical
        $this->pdo->query('SELECT pg_advisory_lock(' . $id . ')'); // want advisory-lock-session
        $stmt = $this->pdo->prepare('SELECT * FROM jobs WHERE id = :id AND tenant = ?');
        Log::info("SET ROLE skipped for $tenant");
        error_log('LISTEN failed');
        echo "LISTEN jobs";
        die("DISCARD ALL");
        DB::statement(<<<SQL
            CREATE TEMP TABLE batch AS -- want temp-table
            SELECT * FROM jobs WHERE tenant = $tenant
            SQL);
        DB::select('SELECT set_config(\'app.tenant\', ?, true)', [$tenant]);
        DB::unprepared('LISTEN jobs'); # want listen
        // pgpoolcheck:ignore listen this worker connects to the server directly
        DB::unprepared('LISTEN direct');
        DB::unprepared('UNLISTEN direct'); # pgpoolcheck:ignore listen connects to the server directly
        DB::update(<<<'SQL'
          UPDATE jobs SET state = 'claimed' WHERE id = $1
          SQL, [$id]);
        $this->conn->executeStatement("DECLARE c CURSOR WITH HOLD FOR SELECT 1"); // want cursor-with-hold
        $this->conn->fetchOne('SELECT ' . 'lastval()'); // want sequence-session
        pg_query($db, "SET statement_timeout = '5s'"); // want session-set
        pg_query_params($db, 'SELECT * FROM jobs WHERE id = $1', [$id]);
        pg_prepare($db, 'claim', 'PREPARE claim AS SELECT 1'); // want sql-prepare protocol-prepare:info
        pg_send_query($db, "LOAD 'auto_explain'"); // want session-load
        $sql = 'ALTER DATABASE ' . db_name() . ' SET work_mem = 1';
        $sql = 'UPDATE jobs';
        $sql .= " SET state = 'done'";
        $this->pdo->exec($sql);
        throw new RuntimeException('DISCARD failed');
    }

    // English text and other databases' syntax that parse as SET or
    // RESET of a name PostgreSQL has no parameter for: no finding.
    public function labels(): array
    {
        return [
            'reset' => Lang::get('Reset Password'),
            'update' => 'SET #count = :inc',
            'mysql' => 'SET foreign_key_checks = 0',
            'tenant' => "SET app.tenant_id = '7'", // want session-set:critical
        ];
    }
}
?>
<p>SET ROLE admin</p>
