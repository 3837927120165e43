package pooler

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestSQLDeallocateWhereTheServerLacksTheStatement runs the SQL
// DEALLOCATE of a client's protocol statement on a server that does not
// hold it under the pooler's name, or holds an old copy the pooler means
// to close (doomed by a rollback), or in a failed transaction: the answer
// is PostgreSQL's own, as if the client had the server to itself, and no
// answer is ever lost (a pooler's Parse that failed ahead of a simple
// Query used to make PostgreSQL skip the Query, and the client waited for
// good).
func TestSQLDeallocateWhereTheServerLacksTheStatement(t *testing.T) {
	srv := pgtest.Shared(t)
	// One server that holds one statement at a time: preparing another
	// evicts the last.
	cfg := Config{PoolSize: 1, MaxPreparedStatements: 1}
	exec := func(ctx context.Context, c *pgconn.PgConn, sql string) error {
		_, err := c.Exec(ctx, sql).ReadAll()
		return err
	}
	mustExec := func(ctx context.Context, t *testing.T, c *pgconn.PgConn, sql string) {
		t.Helper()
		if err := exec(ctx, c, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	t.Run("evicted", func(t *testing.T) {
		tp := startProxy(t, srv, cfg)
		ctx := testCtx(t, 20*time.Second)
		a := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, a, "a", "SELECT $1::text")
		prepare(ctx, t, a, "b", "SELECT 'b'::text") // evicts a's
		mustExec(ctx, t, a, "DEALLOCATE a")
		if _, err := execText(ctx, a, "a", "x"); sqlState(err) != "26000" {
			t.Fatalf("after DEALLOCATE: want 26000, got %v", err)
		}
		if got, err := execText(ctx, a, "b"); err != nil || got != "b" {
			t.Fatalf("b: %q, %v", got, err)
		}
	})

	t.Run("doomed by another client's rollback", func(t *testing.T) {
		tp := startProxy(t, srv, cfg)
		ctx := testCtx(t, 20*time.Second)
		a := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		e := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, a, "a", "SELECT $1::text")
		prepare(ctx, t, a, "b", "SELECT 'b'::text") // evicts a's
		// The same text, prepared first on the server in a transaction
		// that is rolled back: the server still holds it, and the pooler
		// closes it before the next extended-protocol message.
		mustExec(ctx, t, e, "BEGIN")
		prepare(ctx, t, e, "e", "SELECT $1::text")
		if err := exec(ctx, e, "SELECT 1/0"); sqlState(err) != "22012" {
			t.Fatalf("SELECT 1/0: %v", err)
		}
		mustExec(ctx, t, e, "ROLLBACK")
		mustExec(ctx, t, a, "DEALLOCATE a")
		if _, err := execText(ctx, a, "a", "x"); sqlState(err) != "26000" {
			t.Fatalf("after DEALLOCATE: want 26000, got %v", err)
		}
		if got, err := execText(ctx, e, "e", "still"); err != nil || got != "still" {
			t.Fatalf("the other client's statement: %q, %v", got, err)
		}
	})

	for _, tc := range []struct {
		held     bool
		extended bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		held := tc.held
		name := map[bool]string{true: "held", false: "evicted"}[held] + ", " + map[bool]string{true: "extended", false: "simple"}[tc.extended]
		t.Run("in a failed transaction, "+name, func(t *testing.T) {
			tp := startProxy(t, srv, cfg)
			ctx := testCtx(t, 20*time.Second)
			a := tp.connect(t, pgx.QueryExecModeExec).PgConn()
			prepare(ctx, t, a, "c", "SELECT 'c'::text")
			if !held {
				prepare(ctx, t, a, "d", "SELECT 'd'::text") // evicts c's
			}
			mustExec(ctx, t, a, "BEGIN")
			if err := exec(ctx, a, "SELECT 1/0"); sqlState(err) != "22012" {
				t.Fatalf("SELECT 1/0: %v", err)
			}
			// PostgreSQL refuses the command and keeps the statement.
			dealloc := func(sql string) error {
				if tc.extended {
					return a.ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
				}
				return exec(ctx, a, sql)
			}
			if err := dealloc("DEALLOCATE c"); sqlState(err) != "25P02" {
				t.Fatalf("DEALLOCATE in a failed transaction: want 25P02, got %v", err)
			}
			mustExec(ctx, t, a, "ROLLBACK")
			if got, err := execText(ctx, a, "c"); err != nil || got != "c" {
				t.Fatalf("c after the refused DEALLOCATE: %q, %v", got, err)
			}
			if err := dealloc("DEALLOCATE c"); err != nil {
				t.Fatalf("DEALLOCATE c: %v", err)
			}
			if _, err := execText(ctx, a, "c"); sqlState(err) != "26000" {
				t.Fatalf("after DEALLOCATE: want 26000, got %v", err)
			}
			// The server holds nothing of c's under its name now.
			prepare(ctx, t, a, "c2", "SELECT 'c'::text")
			if got, err := execText(ctx, a, "c2"); err != nil || got != "c" {
				t.Fatalf("c2: %q, %v", got, err)
			}
		})
	}
}
