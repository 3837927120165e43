package pooler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// backendPID returns the process ID of the server c's statement runs on.
func backendPID(t *testing.T, ctx context.Context, c *pgx.Conn) int32 {
	t.Helper()
	var pid int32
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestVanishInTransactionCloses: in transaction mode a server whose client
// left inside a transaction (status T, or E after an error) is closed, not
// rolled back and handed on: the next client of a pool of 1 runs on
// another backend, and the pooler logged one in for it. A client that left
// between transactions leaves its server to the next (the control: the
// assertion can fail).
func TestVanishInTransactionCloses(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 60*time.Second)

	leave := func(status string) (pid int32) {
		a := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
		if status != "I" {
			if _, err := a.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
		}
		pid = backendPID(t, ctx, a)
		if status == "E" {
			if _, err := a.Exec(ctx, "SELECT 1/0"); err == nil {
				t.Fatal("1/0 did not fail")
			}
		}
		if err := a.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	for _, tc := range []struct {
		status string
		reuse  bool
	}{{"I", true}, {"T", false}, {"E", false}, {"I", true}} {
		before := tp.Snapshot().ServersOpened
		pa := leave(tc.status)
		b := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
		pb := backendPID(t, ctx, b)
		b.Close(ctx)
		opened := tp.Snapshot().ServersOpened - before
		switch {
		case tc.reuse && pb != pa:
			t.Errorf("left with status %s: the next client got server %d, not %d", tc.status, pb, pa)
		case !tc.reuse && pb == pa:
			t.Errorf("left with status %s: its server %d was handed to the next client", tc.status, pa)
		}
		if tc.reuse && opened > 1 || !tc.reuse && opened != 1 {
			// With reuse, at most the first round's login.
			t.Errorf("left with status %s: %d servers logged in for the next client", tc.status, opened)
		}
	}
}

// TestVanishInTransactionStatements: protocol statements that a client
// prepared inside the transaction it left are not seen by the next client
// of the server (psycopg's tests count pg_prepared_statements), with a
// pool of 1 and pgx's statement cache.
func TestVanishInTransactionStatements(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 60*time.Second)
	count := func(c *pgx.Conn) int {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements", pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	a := tp.connect(t, pgx.QueryExecModeCacheStatement)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for i := range 3 {
		if err := tx.QueryRow(ctx, "SELECT $1::int + 40", i).Scan(&got); err != nil || got != i+40 {
			t.Fatalf("prepared statement in the transaction: %d, %v", got, err)
		}
	}
	if n := count(a); n != 1 {
		t.Fatalf("the client that prepared sees %d statements, want 1", n)
	}
	a.Close(ctx) // inside the transaction

	b := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
	if n := count(b); n != 0 {
		t.Errorf("the next client sees %d statements it did not prepare", n)
	}
	_, sp, _, _ := tp.poolStats()
	if sp != 1 {
		t.Errorf("%d server parses, want 1", sp)
	}
}

// TestVanishLoginCost measures the server logins that closing a server
// whose client left inside a transaction costs: n clients in turn on a
// pool of 1, each BEGIN; SELECT 1; gone, then n that COMMIT before they go.
// It reports logins per client (the first client of each run logs in
// anyway).
func TestVanishLoginCost(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 120*time.Second)
	const n = 20
	run := func(commit bool) (logins float64, each time.Duration) {
		start := time.Now()
		before := tp.Snapshot().ServersOpened
		for range n {
			c := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
			for _, q := range []string{"BEGIN", "SELECT 1"} {
				if _, err := c.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if commit {
				if _, err := c.Exec(ctx, "COMMIT"); err != nil {
					t.Fatal(err)
				}
			}
			c.Close(ctx)
		}
		return float64(tp.Snapshot().ServersOpened-before) / n, time.Since(start) / n
	}
	left, leftEach := run(false)
	committed, committedEach := run(true)
	t.Logf("server logins per client: %.2f leaving inside a transaction (%v a client), %.2f committing first (%v a client); %d clients each",
		left, leftEach.Round(10*time.Microsecond), committed, committedEach.Round(10*time.Microsecond), n)
	if left != 1 {
		t.Errorf("%.2f logins per client that left inside a transaction, want 1 (each server closed)", left)
	}
	if committed > 1.0/n {
		t.Errorf("%.2f logins per client that committed, want at most the first's", committed)
	}
}

// TestStaleSharedStatements: a protocol statement planned against a type
// that a rollback or a schema change made through the pooler took away is
// never handed to another client (psycopg's test_change_type*: "cache
// lookup failed for type N"). Pool of 1, pgx's statement cache; each case
// ends with a client that prepares the same text after type e was made
// again.
func TestStaleSharedStatements(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 60*time.Second)
	for i, tc := range []struct {
		name string
		// run makes type e (as %T) and leaves it as the case says; the
		// statement "SELECT $1::T::text" is prepared inside.
		run []string
	}{
		{"rollback", []string{"BEGIN", "CREATE TYPE %T AS ENUM ('x', 'y')", "prepare", "ROLLBACK"}},
		{"rollback to savepoint", []string{"BEGIN", "SAVEPOINT s", "CREATE TYPE %T AS ENUM ('x', 'y')", "prepare",
			"ROLLBACK TO s", "COMMIT"}},
		{"failed transaction", []string{"BEGIN", "CREATE TYPE %T AS ENUM ('x', 'y')", "prepare", "fail", "COMMIT"}},
		{"drop and create again", []string{"CREATE TYPE %T AS ENUM ('x', 'y')", "prepare", "DROP TYPE %T",
			"CREATE TYPE %T AS ENUM ('x', 'y')", "DROP TYPE %T"}},
		{"drop in a transaction", []string{"CREATE TYPE %T AS ENUM ('x', 'y')", "BEGIN", "DROP TYPE %T",
			"CREATE TYPE %T AS ENUM ('x', 'y')", "prepare", "COMMIT", "DROP TYPE %T"}},
		{"rename", []string{"CREATE TYPE %T AS ENUM ('x', 'y')", "prepare", "ALTER TYPE %T RENAME TO %T_old", "DROP TYPE %T_old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := fmt.Sprintf("stale_e_%d_%d", tp.port, i)
			q := "SELECT $1::" + typ + "::text"
			a := tp.connect(t, pgx.QueryExecModeCacheStatement)
			for _, step := range tc.run {
				var err error
				switch step {
				case "prepare":
					var got string
					if err = a.QueryRow(ctx, q, "x").Scan(&got); err == nil && got != "x" {
						t.Fatalf("%s = %q", q, got)
					}
				case "fail":
					_, err = a.Exec(ctx, "SELECT 1/0")
					if err == nil {
						t.Fatal("1/0 did not fail")
					}
					err = nil
				default:
					_, err = a.Exec(ctx, strings.ReplaceAll(step, "%T", typ), pgx.QueryExecModeSimpleProtocol)
				}
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
			a.Close(ctx)
			b := tp.connect(t, pgx.QueryExecModeCacheStatement)
			if _, err := b.Exec(ctx, "CREATE TYPE "+typ+" AS ENUM ('x', 'y')"); err != nil {
				t.Fatal(err)
			}
			defer b.Exec(ctx, "DROP TYPE "+typ)
			for range 2 {
				var got string
				if err := b.QueryRow(ctx, q, "y").Scan(&got); err != nil || got != "y" {
					t.Fatalf("the next client's %s: %q, %v", q, got, err)
				}
			}
		})
	}
}

// TestLeftStatementsUnseen: statements whose clients all left are closed
// before the server serves its next client, so that a client counting
// pg_prepared_statements (with the extended protocol, as drivers do) sees
// only the statements held by clients still connected. Pool of 1.
func TestLeftStatementsUnseen(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 60*time.Second)
	const count = "SELECT count(*) FROM pg_prepared_statements WHERE name != ''"
	counted := func(c *pgx.Conn) int {
		var n int
		if err := c.QueryRow(ctx, count, pgx.QueryExecModeExec).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	use := func(c *pgx.Conn, q string) {
		var n int
		if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	stay := tp.connect(t, pgx.QueryExecModeCacheStatement)
	use(stay, "SELECT $1::int + 1")
	for i := range 3 {
		a := tp.connect(t, pgx.QueryExecModeCacheStatement)
		use(a, "SELECT $1::int + 2")
		use(a, fmt.Sprintf("SELECT $1::int + %d", 10+i))
		if n := counted(a); n != 3 {
			t.Fatalf("a client with two statements sees %d, want 3 with the other client's", n)
		}
		a.Close(ctx)
	}
	b := tp.connect(t, pgx.QueryExecModeCacheStatement)
	if n := counted(b); n != 1 {
		t.Errorf("the next client sees %d statements, want 1 (held by the client still connected)", n)
	}
	use(stay, "SELECT $1::int + 1") // still there, or prepared again
	_, sp, _, _ := tp.poolStats()
	t.Logf("server parses: %d", sp)
}
