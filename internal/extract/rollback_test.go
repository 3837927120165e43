package extract

import (
	"strings"
	"testing"
)

// TestGoTestTransactionHelpers checks which Go functions hand out a
// transaction that is always rolled back.
func TestGoTestTransactionHelpers(t *testing.T) {
	src := `package dbtest

func TestTx[T any](ctx context.Context, tb testing.TB, d Driver[T]) (T, string) {
	execTx, err := d.GetExecutor().Begin(ctx)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = execTx.Rollback(ctx) })
	return d.UnwrapTx(execTx), "s"
}

func Committed(ctx context.Context, pool *pgxpool.Pool) (pgx.Tx, error) {
	tx, err := pool.Begin(ctx)
	defer tx.Rollback(ctx)
	return tx, tx.Commit(ctx)
}

func NotReturned(tb testing.TB) {
	tx, _ := pool.Begin(ctx)
	tb.Cleanup(func() { tx.Rollback(ctx) })
}
`
	got := TestTransactionHelpers(Go, []byte(src))
	if len(got) != 1 || got[0] != "go:TestTx" {
		t.Errorf("helpers %v, want [go:TestTx]", got)
	}
}

// TestRolledBackTransactions checks which literals the rolled-back spans
// of test helpers cover: the marker literal "IN" must be inside one,
// "OUT" outside all.
func TestRolledBackTransactions(t *testing.T) {
	for _, tt := range []struct {
		name string
		lang Language
		file string
		src  string
	}{
		{"go cleanup", Go, "a_test.go", `func h(t *testing.T) { tx, _ := c.Begin(ctx); t.Cleanup(func() { tx.Rollback(ctx) }); tx.Exec(ctx, "IN"); c.Exec(ctx, "OUT") }`},
		{"go committed", Go, "a.go", `func h() error { tx, _ := c.Begin(ctx); defer tx.Rollback(ctx); tx.Exec(ctx, "OUT"); return tx.Commit(ctx) }`},
		{"go no rollback", Go, "a.go", `func h() { tx, _ := c.Begin(ctx); tx.Exec(ctx, "OUT") }`},
		{"go receiver chain", Go, "a_test.go", `func h(t *testing.T) { tx, _ := d.GetExecutor().Begin(ctx); t.Cleanup(func() { tx.Rollback(ctx) }); tx.Exec(ctx, "IN") }`},
		{"go helper of the file", Go, "db_test.go", `func TestTx(tb testing.TB) pgx.Tx { tx, _ := pool.Begin(ctx); tb.Cleanup(func() { tx.Rollback(ctx) }); return tx }
func TestA(t *testing.T) { tx := TestTx(t); tx.Exec(ctx, "IN") }
func TestB(t *testing.T) { tx := TestTx(t); tx.Exec(ctx, "OUT"); tx.Commit(ctx) }`},
		{"go other function", Go, "a_test.go", `func h() { tx, _ := c.Begin(ctx); defer tx.Rollback(ctx); tx.Exec(ctx, "IN") }
func g() { tx, _ := c.Begin(ctx); tx.Exec(ctx, "OUT"); tx.Commit(ctx) }`},
		{"rust dropped", Rust, "t.rs", `async fn f() { let mut tx = pool.begin().await?; q("IN").execute(&mut *tx).await?; } fn g() { q("OUT"); }`},
		{"rust committed", Rust, "t.rs", `async fn f() { let mut tx = pool.begin().await?; q("OUT").execute(&mut *tx).await?; tx.commit().await }`},
		{"java autocommit true", Java, "A.java", `void f() { conn.setAutoCommit(false); st.execute("OUT"); conn.setAutoCommit(true); conn.rollback(); }`},
		{"php field", PHP, "ATest.php", `<?php class A { function setUp() { $this->pdo->beginTransaction(); } function t() { $this->pdo->exec("IN"); } function tearDown() { $this->pdo->rollBack(); } }`},
		{"php committed", PHP, "A.php", `<?php function f($pdo) { $pdo->beginTransaction(); $pdo->exec("OUT"); $pdo->commit(); $pdo->rollBack(); }`},
		{"python force", Python, "t.py", "def f(conn):\n    with conn.transaction(force_rollback=True):\n        conn.execute(\"IN\")\n    conn.execute(\"OUT\")\n"},
		{"python no force", Python, "t.py", "def f(conn):\n    with conn.transaction():\n        conn.execute(\"OUT\")\n    conn.rollback()\n"},
		{"ruby conditional raise", Ruby, "a_spec.rb", "DB.transaction do\n  DB.run(\"OUT\")\n  raise Sequel::Rollback if dry\nend\n"},
		{"ruby raise", Ruby, "a_spec.rb", "DB.transaction do\n  DB.run(\"IN\")\n  raise Sequel::Rollback\nend\nDB.run(\"OUT\")\n"},
		{"elixir rollback", Elixir, "a_test.exs", "Repo.transaction(fn ->\n  Repo.query!(\"IN\")\n  Repo.rollback(:x)\nend)\nRepo.query!(\"OUT\")\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spans := RolledBackSpans(tt.lang, tt.file, []byte(tt.src), nil)
			for _, w := range []string{`"IN"`, `"OUT"`} {
				at := strings.Index(tt.src, w)
				if at < 0 {
					continue
				}
				in := false
				for _, s := range spans {
					in = in || s.Start <= at && at < s.End
				}
				if in != (w == `"IN"`) {
					t.Errorf("%s inside a rolled-back span: %v (spans %v)", w, in, spans)
				}
			}
		})
	}
}
