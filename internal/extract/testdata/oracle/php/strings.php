<!DOCTYPE html>
<title>Don't "parse" this</title>
<?php
use Doctrine\DBAL\Connection;
use Illuminate\Support\Facades\DB;

/**
 * Jobs; it's "safe".
 */
#[Attribute(Attribute::TARGET_CLASS), Table(name: 'jobs', schema: "app")]
final class JobRepository
{
    private const TABLE = 'jobs';

    public function __construct(private \PDO $pdo, private Connection $conn) {}

    public function claim(int $id, string $schema, array $ids): void
    {
        $this->pdo->exec('SET statement_timeout = \'5s\''); // it's "quoted"
        $this->pdo->query("SELECT pg_advisory_lock($id)");
        $stmt = $this->pdo->prepare("SELECT * FROM {$schema}.jobs WHERE id = :id AND tag = '\x41\101\u{1F600}\e'");
        $stmt->execute(['id' => $id]);
        DB::statement('SET search_path TO ' . $schema . ', public');
        DB::select("SELECT * FROM ${schema}.jobs WHERE id IN (" . implode(',', $ids) . ')');
        DB::unprepared(<<<SQL
            LISTEN jobs_{$schema};
            NOTIFY jobs, 'it''s "here"';
            SQL);
        DB::insert('INSERT INTO jobs (id, note) VALUES (?, ?)', [$id, "a\tb\\c\$d\"e"]);
        DB::update(<<<'SQL'
          UPDATE jobs SET state = 'done' WHERE id = $1 -- {$not} interpolated
          SQL, [$id]);
        DB::delete("DELETE FROM jobs WHERE id = $ids[0] OR id = $ids[1] OR x = {$this->conn->x}");
        $this->conn->executeStatement("DISCARD ALL");
        $this->conn->executeQuery(<<<"SQL"
        SELECT *
          FROM jobs
         WHERE a = $id
        SQL);
        $this->conn->fetchAllAssociative('SELECT 1');
        $this->conn->fetchAssociative("SELECT 2 WHERE x = '$this->schema'");
        $this->conn->fetchOne('SELECT 3');
        $this->conn->fetchAllNumeric("SELECT 4 /* $ */ {x}");
        $res = pg_query($db, "SELECT set_config('app.tenant', '$schema', false)");
        $res = pg_query_params($db, 'SELECT * FROM jobs WHERE id = $1', [$id]);
        $res = pg_prepare($db, 'claim', 'SELECT pg_try_advisory_lock($1)');
        pg_send_query($db, "CREATE TEMP TABLE batch (id bigint)");
        # a hash comment with 'quotes'
        $tabs = <<<EOT
		tab
		  indented
		EOT;
        $empty = <<<EOT
        EOT;
        $bin = b'x' . B"y$id" . b<<<EOT
          z
          EOT;
        $shell = `ls {$dir} "x"`;
        $x = $a?->b . "c$a?->d" . 'e';
        $n = 1.5 . '.' . .5 . "f";
        $s = "{$a['k']["j"]} {$f(fn() => "}")} ${a} ${b['c']} $$c {$d}";
        $esc = "\\{$x} \{$x} \$x {\$x} \\\$x";
        $q = 'a' /* '; */ . "b";
        echo <<<HTML
        <p>{$x}</p>
        HTML . PHP_EOL;
    }
}
?>
<p>it's <?= htmlspecialchars("SELECT 'x'") ?></p>
<?php if ($a): ?><b>"</b><?php endif ?>
<?xml version="1.0"?>
<?php
$last = 'end';
