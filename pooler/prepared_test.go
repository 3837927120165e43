package pooler

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestPreparedStatementsToday documents the behaviour of prepared
// statements that outlive a round trip in transaction mode before the
// prepared-statement issue: they pass through unchanged, so they work
// only while the client happens to get the same server. With two clients
// on one server, the second client's Parse of the same name fails with
// 42P05 (already exists) and pgx's DescribeExec mode, which Parses the
// unnamed statement in one round trip and Binds it in the next, can find
// another client's unnamed statement.
func TestPreparedStatementsToday(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := a.PgConn().Prepare(ctx, "s1", "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	// Both clients share the single server: b sees a's statement.
	_, err := b.PgConn().Prepare(ctx, "s1", "SELECT 2", nil)
	if sqlState(err) != "42P05" {
		t.Fatalf("today a second client's Parse of the same name fails with 42P05; got %v", err)
	}
	// The unnamed statement across round trips: a Parses/Describes, b
	// Parses its own unnamed statement, a Binds and Executes — and runs b's.
	if _, err := a.PgConn().Prepare(ctx, "", "SELECT 'a'::text", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PgConn().Prepare(ctx, "", "SELECT 'b'::text", nil); err != nil {
		t.Fatal(err)
	}
	res := a.PgConn().ExecPrepared(ctx, "", nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := string(res.Rows[0][0]); got != "b" {
		t.Fatalf("today a's Bind of the unnamed statement runs b's statement; got %q", got)
	}
	a.PgConn().Exec(ctx, "DEALLOCATE ALL").ReadAll()
}
