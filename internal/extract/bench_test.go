package extract

import (
	"bytes"
	"testing"
)

// benchSnippets are representative chunks of each language, repeated to
// build a generated file of about 1 MiB.
var benchSnippets = map[Language]string{
	Go: "// Lock takes the advisory lock; it's \"safe\".\nfunc (s *Store) Lock(ctx context.Context, id int64) error {\n" +
		"\t_, err := s.db.ExecContext(ctx, \"SELECT pg_advisory_lock($1)\", id)\n\tq := `\n\t\tSELECT *\n\t\tFROM jobs\n\t\tWHERE id = $1`\n" +
		"\tlog.Printf(\"could not SET timeout: %v\\n\", err)\n\treturn s.run(ctx, \"UPDATE jobs SET state = 'done' \"+\n\t\t\"WHERE id = $1\", q, x/2)\n}\n",
	Python: "def lock(cur, job_id):\n    \"\"\"Take the lock; it's 'safe'.\"\"\"\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (job_id,))  # lock\n" +
		"    q = f\"SELECT * FROM {table} WHERE id = {job_id!r}\"\n    cur.execute(\n        'UPDATE jobs SET state = %(s)s '\n        \"WHERE id = %(id)s\", params)\n    return x / 2\n",
	Ruby: "# Takes the lock; it's \"safe\".\ndef lock(id)\n  connection.execute(\"SELECT pg_advisory_lock(#{id})\")\n  sql = <<~SQL\n    SELECT *\n      FROM jobs\n    WHERE id = #{id}\n  SQL\n" +
		"  x = %q(SET a = 1) + 'b'\n  y = total / 2 if s =~ /x\"y/\n  logger.warn \"could not SET timeout\"\nend\n",
	JavaScript: "// Takes the lock; it's \"safe\".\nexport async function lock(db, id) {\n  await db.query('SELECT pg_advisory_lock($1)', [id]);\n" +
		"  const q = sql`SELECT * FROM ${table} WHERE id = ${id}`;\n  const r = s.replace(/\"/g, '') + \"UPDATE jobs \" +\n    'SET state = 1';\n  return total / 2 / n;\n}\n",
	Java: "/** Takes the lock; it's \"safe\". */\npublic void lock(long id) throws SQLException {\n  stmt.execute(\"SELECT pg_advisory_lock(?)\");\n" +
		"  String q = \"\"\"\n      SELECT *\n        FROM jobs\n      WHERE id = ?\n      \"\"\";\n  char c = '\"';\n  log.warn(\"could not SET timeout {}\", e);\n  String u = \"UPDATE jobs \" +\n      \"SET state = 1\";\n}\n",
	Kotlin: "// Takes the lock; it's \"safe\".\nfun lock(id: Long) {\n  db.execute(\"SELECT pg_advisory_lock($id)\")\n" +
		"  val q = \"\"\"\n      SELECT *\n        FROM jobs\n      WHERE id = ${id + 1}\n      \"\"\".trimIndent()\n  val u = \"UPDATE jobs \" +\n      \"SET state = 1\"\n}\n",
	Elixir: "# Takes the lock; it's \"safe\".\ndef lock(id) do\n  Repo.query!(\"SELECT pg_advisory_lock($1)\", [id])\n" +
		"  q = \"\"\"\n  SELECT *\n    FROM jobs\n  WHERE id = #{id}\n  \"\"\"\n  s = ~s(SET a = 1) <> \"b\"\n  Logger.warn(\"could not SET timeout\")\nend\n",
	PHP: "<?php\n// Takes the lock; it's \"safe\".\nfunction lock(PDO $pdo, int $id): void {\n  $pdo->query(\"SELECT pg_advisory_lock($id)\");\n" +
		"  $q = <<<SQL\n      SELECT *\n        FROM jobs\n      WHERE id = {$ids[0]}\n      SQL;\n  $u = 'UPDATE jobs ' .\n      \"SET state = 1\" . $x / 2;\n  error_log('could not SET timeout');\n}\n",
	Rust: "/// Takes the lock; it's \"safe\".\npub async fn lock<'a>(pool: &'a PgPool, id: i64) -> Result<(), Error> {\n" +
		"    sqlx::query(\"SELECT pg_advisory_lock($1)\").bind(id).execute(pool).await?;\n    let q = format!(r#\"\n        SELECT *\n          FROM {table}\n        WHERE id = $1\"#);\n" +
		"    let u = concat!(\"UPDATE jobs \", \"SET state = 1\");\n    let c = '\"';\n    tracing::warn!(%id, \"could not SET timeout: {}\", x / 2);\n    Ok(())\n}\n",
	CSharp: "/// <summary>Takes the lock; it's \"safe\".</summary>\npublic async Task LockAsync(NpgsqlConnection conn, long id) {\n" +
		"    await using var cmd = new NpgsqlCommand(\"SELECT pg_advisory_lock(@id)\", conn);\n    var q = $\"\"\"\n        SELECT *\n          FROM {table}\n        WHERE id = @id\n        \"\"\";\n" +
		"    var u = @\"UPDATE jobs \" + $\"SET state = {s}\";\n    char c = '\"';\n#if DEBUG\n    _logger.LogWarning(\"could not SET timeout: {Id}\", x / 2);\n#endif\n}\n",
}

func benchmarkLanguage(b *testing.B, lang Language) {
	snippet := benchSnippets[lang]
	src := bytes.Repeat([]byte(snippet), (1<<20)/len(snippet)+1)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Literals(lang, src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGo(b *testing.B)         { benchmarkLanguage(b, Go) }
func BenchmarkPython(b *testing.B)     { benchmarkLanguage(b, Python) }
func BenchmarkRuby(b *testing.B)       { benchmarkLanguage(b, Ruby) }
func BenchmarkJavaScript(b *testing.B) { benchmarkLanguage(b, JavaScript) }
func BenchmarkJava(b *testing.B)       { benchmarkLanguage(b, Java) }
func BenchmarkKotlin(b *testing.B)     { benchmarkLanguage(b, Kotlin) }
func BenchmarkElixir(b *testing.B)     { benchmarkLanguage(b, Elixir) }
func BenchmarkPHP(b *testing.B)        { benchmarkLanguage(b, PHP) }
func BenchmarkRust(b *testing.B)       { benchmarkLanguage(b, Rust) }
func BenchmarkCSharp(b *testing.B)     { benchmarkLanguage(b, CSharp) }

// TestBenchSnippets checks that the benchmark inputs exercise the lexers.
func TestBenchSnippets(t *testing.T) {
	for lang, s := range benchSnippets {
		lits, comments, err := Literals(lang, []byte(s))
		if err != nil || len(lits) < 3 || len(comments) < 1 {
			t.Errorf("%s: %d literals, %d comments, %v", lang, len(lits), len(comments), err)
		}
		if err := checkInvariants([]byte(s), lits, comments); err != nil {
			t.Errorf("%s: %v", lang, err)
		}
	}
}
