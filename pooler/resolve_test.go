package pooler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
)

// TestStatementsResolveAgainstTheClient runs the same statement text for
// clients under which it means different things, on a pool of 1 so that
// all share one server: each must get what it gets without the pooler.
func TestStatementsResolveAgainstTheClient(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 60*time.Second)
	for _, q := range []string{
		`DROP SCHEMA IF EXISTS rs_a, rs_b CASCADE`,
		`CREATE SCHEMA rs_a`, `CREATE SCHEMA rs_b`,
		`CREATE TABLE rs_a.t (v int)`, `INSERT INTO rs_a.t VALUES (1)`,
		`CREATE TABLE rs_b.t (v text)`, `INSERT INTO rs_b.t VALUES ('b')`,
	} {
		if err := srv.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = srv.Exec(context.Background(), `DROP SCHEMA IF EXISTS rs_a, rs_b CASCADE`) })

	for _, policy := range []Policy{PolicyPreserve, PolicyReset} {
		t.Run("temp tables/"+string(policy), func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 1, OnSessionState: policy, Classifier: sessionstate.New()})
			// Sequential clients, each with its own temporary table of
			// another type under the same name, running the same text.
			for i, typ := range []string{"int", "text", "timestamptz[]", "int"} {
				c := tp.connect(t, pgx.QueryExecModeCacheStatement)
				if policy == PolicyReset {
					// Under reset the temporary table lasts one
					// transaction.
					tx, err := c.Begin(ctx)
					if err != nil {
						t.Fatal(err)
					}
					checkTemp(ctx, t, tx, i, typ)
					if err := tx.Rollback(ctx); err != nil {
						t.Fatal(err)
					}
				} else {
					checkTemp(ctx, t, c, i, typ)
				}
				c.Close(ctx)
			}
		})
	}

	t.Run("startup search_path", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1, Classifier: sessionstate.New()})
		a := tp.connectParams(t, pgx.QueryExecModeCacheStatement, map[string]string{"search_path": "rs_a"})
		b := tp.connectParams(t, pgx.QueryExecModeCacheStatement, map[string]string{"search_path": "rs_b"})
		for range 3 {
			checkPath(ctx, t, a, "1")
			checkPath(ctx, t, b, "b")
		}
	})

	for _, policy := range []Policy{PolicyPreserve, PolicyReset} {
		t.Run("SET search_path/"+string(policy), func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 1, OnSessionState: policy, Classifier: sessionstate.New()})
			a := tp.connect(t, pgx.QueryExecModeCacheStatement)
			b := tp.connect(t, pgx.QueryExecModeCacheStatement)
			if policy == PolicyReset {
				// Under reset a SET lasts one transaction.
				for _, c := range []struct {
					conn *pgx.Conn
					path string
					want string
				}{{a, "rs_a", "1"}, {b, "rs_b", "b"}, {a, "rs_a", "1"}, {b, "rs_b", "b"}} {
					tx, err := c.conn.Begin(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := tx.Exec(ctx, "SET search_path = "+c.path); err != nil {
						t.Fatal(err)
					}
					checkPath(ctx, t, tx, c.want)
					if err := tx.Commit(ctx); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if _, err := a.Exec(ctx, "SET search_path = rs_a"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Exec(ctx, "SET search_path = rs_b"); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				checkPath(ctx, t, a, "1")
				checkPath(ctx, t, b, "b")
			}
			// The settings are read back when the server is released: the
			// statements are then named by their value and shared by
			// clients with the same path.
			c := tp.connect(t, pgx.QueryExecModeCacheStatement)
			if _, err := c.Exec(ctx, "SET search_path = rs_a"); err != nil {
				t.Fatal(err)
			}
			checkPath(ctx, t, c, "1")
			checkPath(ctx, t, b, "b")
		})
	}

	t.Run("SET ROLE", func(t *testing.T) {
		for _, q := range []string{
			`DROP ROLE IF EXISTS rs_role`,
			`CREATE ROLE rs_role`,
			`CREATE SCHEMA rs_role AUTHORIZATION rs_role`,
			`CREATE TABLE rs_role.t (v text)`, `INSERT INTO rs_role.t VALUES ('role')`,
			`GRANT USAGE ON SCHEMA rs_role TO rs_role`, `GRANT SELECT ON rs_role.t TO rs_role`,
		} {
			if err := srv.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = srv.Exec(context.Background(), `DROP SCHEMA IF EXISTS rs_role CASCADE`)
			_ = srv.Exec(context.Background(), `DROP ROLE IF EXISTS rs_role`)
		})
		tp := startProxy(t, srv, Config{PoolSize: 1, Classifier: sessionstate.New()})
		// search_path "$user", public: the role picks the schema.
		a := tp.connectParams(t, pgx.QueryExecModeCacheStatement, map[string]string{"search_path": `"$user", rs_a`})
		b := tp.connectParams(t, pgx.QueryExecModeCacheStatement, map[string]string{"search_path": `"$user", rs_a`})
		if _, err := b.Exec(ctx, "SET ROLE rs_role"); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			checkPath(ctx, t, a, "1")
			checkPath(ctx, t, b, "role")
		}
	})
}

type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkTemp creates a temporary table rs_tmp with a column of type typ
// and reads it back with a prepared statement whose text every client
// shares.
func checkTemp(ctx context.Context, t *testing.T, c querier, i int, typ string) {
	t.Helper()
	if _, err := c.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE rs_tmp (v %s)", typ)); err != nil {
		t.Fatalf("client %d: %v", i, err)
	}
	var val string
	switch typ {
	case "int":
		val = fmt.Sprint(i)
	case "text":
		val = fmt.Sprintf("t%d", i)
	default:
		val = "{}"
	}
	if _, err := c.Exec(ctx, "INSERT INTO rs_tmp VALUES ($1::text::"+typ+")", val); err != nil {
		t.Fatalf("client %d: %v", i, err)
	}
	var got string
	if err := c.QueryRow(ctx, "SELECT v::text FROM rs_tmp").Scan(&got); err != nil {
		t.Fatalf("client %d (%s): %v", i, typ, err)
	}
	var v any
	if err := c.QueryRow(ctx, "SELECT * FROM rs_tmp").Scan(&v); err != nil {
		t.Fatalf("client %d (%s) SELECT *: %v", i, typ, err)
	}
	if got != val {
		t.Fatalf("client %d: got %q, want %q", i, got, val)
	}
}

// checkPath reads column v of the table t the client's search_path finds.
func checkPath(ctx context.Context, t *testing.T, c querier, want string) {
	t.Helper()
	var got any
	if err := c.QueryRow(ctx, "SELECT v FROM t").Scan(&got); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// TestStatementInvalidation changes a table's columns between executions
// of a statement every client shares (pool of 1): each client's statement
// fails with the 0A000 it gets without the pooler, and its next prepare
// really prepares again, whether the change went through the pooler or
// not.
func TestStatementInvalidation(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 60*time.Second)
	for _, q := range []string{`DROP TABLE IF EXISTS inv`, `CREATE TABLE inv (a int)`, `INSERT INTO inv VALUES (1)`} {
		if err := srv.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = srv.Exec(context.Background(), `DROP TABLE IF EXISTS inv`) })
	tp := startProxy(t, srv, Config{PoolSize: 1, Classifier: sessionstate.New()})
	a := tp.connect(t, pgx.QueryExecModeCacheStatement)
	b := tp.connect(t, pgx.QueryExecModeCacheStatement)
	cols := func(c *pgx.Conn) (int, error) {
		rows, err := c.Query(ctx, "SELECT * FROM inv")
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := len(rows.FieldDescriptions())
		for rows.Next() {
		}
		return n, rows.Err()
	}
	for _, c := range []*pgx.Conn{a, b} {
		if n, err := cols(c); err != nil || n != 1 {
			t.Fatalf("before: %d columns, %v", n, err)
		}
	}

	// Through the pooler: each client's statement fails once, as it does
	// directly, and the statement prepared again works; a client that
	// prepares the text after the change gets no error.
	if _, err := a.Exec(ctx, "ALTER TABLE inv ADD COLUMN b int"); err != nil {
		t.Fatal(err)
	}
	for i, c := range []*pgx.Conn{a, b} {
		if _, err := cols(c); sqlState(err) != "0A000" {
			t.Fatalf("client %d, first execution after ALTER through the pooler: %v, want 0A000", i, err)
		}
		if n, err := cols(c); err != nil || n != 2 {
			t.Fatalf("client %d prepared again: %d columns, %v", i, n, err)
		}
	}
	if n, err := cols(tp.connect(t, pgx.QueryExecModeCacheStatement)); err != nil || n != 2 {
		t.Fatalf("new client after ALTER: %d columns, %v", n, err)
	}

	// Elsewhere: the same.
	if err := srv.Exec(ctx, "ALTER TABLE inv ADD COLUMN c int"); err != nil {
		t.Fatal(err)
	}
	for i, c := range []*pgx.Conn{a, b} {
		if _, err := cols(c); sqlState(err) != "0A000" {
			t.Fatalf("client %d, first execution after a change made elsewhere: %v, want 0A000", i, err)
		}
		if n, err := cols(c); err != nil || n != 3 {
			t.Fatalf("client %d prepared again: %d columns, %v", i, n, err)
		}
	}

	// The same with the protocol by hand: Close, then Parse again.
	pc := tp.connect(t, pgx.QueryExecModeExec).PgConn()
	prepare(ctx, t, pc, "byhand", "SELECT * FROM inv")
	if err := srv.Exec(ctx, "ALTER TABLE inv DROP COLUMN c"); err != nil {
		t.Fatal(err)
	}
	if rr := pc.ExecPrepared(ctx, "byhand", nil, nil, nil).Read(); sqlState(rr.Err) != "0A000" {
		t.Fatalf("after DROP COLUMN elsewhere: %v, want 0A000", rr.Err)
	}
	if err := pc.Deallocate(ctx, "byhand"); err != nil {
		t.Fatal(err)
	}
	prepare(ctx, t, pc, "byhand", "SELECT * FROM inv")
	rr := pc.ExecPrepared(ctx, "byhand", nil, nil, nil).Read()
	if rr.Err != nil || len(rr.FieldDescriptions) != 2 {
		t.Fatalf("prepared again: %d columns, %v", len(rr.FieldDescriptions), rr.Err)
	}
}
