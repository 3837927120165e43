package pooler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	_ "github.com/lib/pq"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// poolStats returns the prepared-statement counters of the test pool.
func (tp *testProxy) poolStats() (clientParses, serverParses, binds, evictions int64) {
	tp.mu.Lock()
	pl := tp.pools[poolKey{database: pgtest.Database, user: pgtest.SuperUser}]
	tp.mu.Unlock()
	if pl == nil {
		return
	}
	return pl.stats.clientParses.Load(), pl.stats.serverParses.Load(), pl.stats.binds.Load(), pl.stats.evictions.Load()
}

// TestPreparedPgxModes runs pgx in every mode that prepares statements
// (named cached statements, cached descriptions, and describe-exec, which
// Parses the unnamed statement in one round trip and Binds it in the
// next) with 50 goroutines on a pool of 2, checking every result.
func TestPreparedPgxModes(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 2})
			ctx := testCtx(t, 120*time.Second)
			var wg sync.WaitGroup
			for i := range 50 {
				c := tp.connect(t, mode)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range 60 {
						// Five statement texts, so clients share them and
						// servers hold several.
						q := fmt.Sprintf("SELECT $1::int + %d, $2::text", r%5)
						var n int
						var s string
						arg := i*1000 + r
						if err := c.QueryRow(ctx, q, arg, fmt.Sprint(i)).Scan(&n, &s); err != nil {
							t.Errorf("client %d query %d: %v", i, r, err)
							return
						}
						if n != arg+r%5 || s != fmt.Sprint(i) {
							t.Errorf("client %d query %d: got %d %q, want %d %q", i, r, n, s, arg+r%5, fmt.Sprint(i))
							return
						}
						if r%20 == 19 {
							// A transaction with a prepared statement inside.
							tx, err := c.Begin(ctx)
							if err != nil {
								t.Error(err)
								return
							}
							if err := tx.QueryRow(ctx, "SELECT $1::int * 2", arg).Scan(&n); err != nil || n != arg*2 {
								t.Errorf("client %d in transaction: %d, %v", i, n, err)
								tx.Rollback(ctx)
								return
							}
							if err := tx.Commit(ctx); err != nil {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			cp, sp, binds, _ := tp.poolStats()
			t.Logf("client parses %d, server parses %d, binds %d", cp, sp, binds)
			if mode == pgx.QueryExecModeCacheStatement && sp >= cp {
				t.Errorf("server parses %d not fewer than client parses %d: statements are not shared", sp, cp)
			}
			if binds < 50*60 {
				t.Errorf("%d binds counted, want at least %d", binds, 50*60)
			}
		})
	}
}

// TestPreparedLibPQ runs lib/pq through a pool of 2: queries with
// arguments (the unnamed statement, Parse/Describe/Sync then
// Bind/Execute/Sync) and db.Prepare (a named statement used many times),
// 50 goroutines each.
func TestPreparedLibPQ(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	db, err := sql.Open("postgres", tp.url(pgtest.SuperUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(50)
	db.SetMaxIdleConns(50)
	ctx := testCtx(t, 120*time.Second)
	stmt, err := db.PrepareContext(ctx, "SELECT $1::int * 3, $2::text || 'x'")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 60 {
				arg := i*1000 + r
				var n int
				var s string
				if err := db.QueryRowContext(ctx, "SELECT $1::int + 7, $2::text", arg, "a"+fmt.Sprint(i)).Scan(&n, &s); err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				if n != arg+7 || s != "a"+fmt.Sprint(i) {
					t.Errorf("client %d: got %d %q", i, n, s)
					return
				}
				if err := stmt.QueryRowContext(ctx, arg, fmt.Sprint(i)).Scan(&n, &s); err != nil {
					t.Errorf("client %d prepared: %v", i, err)
					return
				}
				if n != arg*3 || s != fmt.Sprint(i)+"x" {
					t.Errorf("client %d prepared: got %d %q", i, n, s)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPgbenchPrepared runs pgbench -S -M prepared with 20 clients through
// a pool of 5: every client prepares the same statement under the same
// name. (Not the TPC-B script: pgbench prepares with a blocking PQprepare
// that stalls its whole thread, so with fewer servers than clients per
// thread, clients holding a server mid-transaction never get to go on —
// a deadlock of pgbench's own, whatever the pooler does.)
func TestPgbenchPrepared(t *testing.T) {
	srv := pgtest.Shared(t)
	pgbench := tool(t, srv, "pgbench")
	init := exec.Command(pgbench, "-i", "-q", "-s", "1", srv.SocketURL(pgtest.SuperUser))
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	tp := startProxy(t, srv, Config{PoolSize: 5})
	out, err := exec.Command(pgbench, "-n", "-S", "-M", "prepared", "-c", "20", "-j", "2", "-t", "500", tp.url(pgtest.SuperUser, "")).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	s := checkPgbench(t, out, 10000)
	cp, sp, binds, _ := tp.poolStats()
	t.Logf("%s; client parses %d, server parses %d, binds %d", firstLine(s, "tps"), cp, sp, binds)
	// One statement, prepared once per client and once per server.
	if cp != 20 || sp > 5 {
		t.Errorf("client parses %d (want 20), server parses %d (want ≤ 5)", cp, sp)
	}
}

// prepare Parses and Describes a named statement on a raw connection.
func prepare(ctx context.Context, t *testing.T, c *pgconn.PgConn, name, sql string) {
	t.Helper()
	if _, err := c.Prepare(ctx, name, sql, nil); err != nil {
		t.Fatalf("prepare %s: %v", name, err)
	}
}

// execText executes a prepared statement and returns its single text value.
func execText(ctx context.Context, c *pgconn.PgConn, name string, args ...string) (string, error) {
	var params [][]byte
	for _, a := range args {
		params = append(params, []byte(a))
	}
	res := c.ExecPrepared(ctx, name, params, nil, nil).Read()
	if res.Err != nil {
		return "", res.Err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return "", fmt.Errorf("want one value, got %v", res.Rows)
	}
	return string(res.Rows[0][0]), nil
}

func TestPreparedStatementCases(t *testing.T) {
	srv := pgtest.Shared(t)

	t.Run("same text under many names", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		for i := range 10 {
			c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
			name := fmt.Sprintf("mine_%d", i)
			prepare(ctx, t, c, name, "SELECT $1::text || '!'")
			if got, err := execText(ctx, c, name, fmt.Sprint(i)); err != nil || got != fmt.Sprint(i)+"!" {
				t.Fatalf("client %d: %q, %v", i, got, err)
			}
		}
		if cp, sp, _, _ := tp.poolStats(); cp != 10 || sp != 1 {
			t.Fatalf("client parses %d (want 10), server parses %d (want 1: one shared statement)", cp, sp)
		}
	})

	t.Run("same name, different queries", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		a := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		b := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, a, "s1", "SELECT 'a'::text")
		prepare(ctx, t, b, "s1", "SELECT 'b'::text")
		for range 3 {
			if got, err := execText(ctx, a, "s1"); err != nil || got != "a" {
				t.Fatalf("a: %q, %v", got, err)
			}
			if got, err := execText(ctx, b, "s1"); err != nil || got != "b" {
				t.Fatalf("b: %q, %v", got, err)
			}
		}
	})

	t.Run("eviction with a bound of 2", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1, MaxPreparedStatements: 2})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		for i := range 5 {
			prepare(ctx, t, c, fmt.Sprintf("e%d", i), fmt.Sprintf("SELECT '%d'::text", i))
		}
		for r := range 3 {
			for i := range 5 {
				if got, err := execText(ctx, c, fmt.Sprintf("e%d", i)); err != nil || got != fmt.Sprint(i) {
					t.Fatalf("round %d e%d: %q, %v", r, i, got, err)
				}
			}
		}
		_, _, _, ev := tp.poolStats()
		if ev == 0 {
			t.Fatal("no evictions counted")
		}
		// The server holds at most 2 of the pooler's statements.
		c2 := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
		var n int
		if err := c2.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'pgpc_%'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 2 {
			t.Fatalf("server holds %d statements, bound 2", n)
		}
	})

	t.Run("a Parse that fails", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		if _, err := c.Prepare(ctx, "bad", "SELEC 1", nil); sqlState(err) != "42601" {
			t.Fatalf("want a syntax error, got %v", err)
		}
		// The failed name is free again.
		prepare(ctx, t, c, "bad", "SELECT 'fixed'::text")
		if got, err := execText(ctx, c, "bad"); err != nil || got != "fixed" {
			t.Fatalf("%q, %v", got, err)
		}
		// A pipeline: a good Parse, a bad one, then Bind/Execute of the
		// good one, one Sync: the error comes in order and the rest of
		// the pipeline is skipped, as PostgreSQL does.
		p := c.StartPipeline(ctx)
		p.SendPrepare("good", "SELECT 'good'::text", nil)
		p.SendPrepare("worse", "SELECT FROM WHERE", nil)
		p.SendQueryPrepared("good", nil, nil, nil)
		if err := p.Sync(); err != nil {
			t.Fatal(err)
		}
		r, err := p.GetResults()
		if _, ok := r.(*pgconn.StatementDescription); !ok || err != nil {
			t.Fatalf("first result: %T %v", r, err)
		}
		if _, err := p.GetResults(); sqlState(err) != "42601" {
			t.Fatalf("second result: want 42601, got %v", err)
		}
		for {
			r, err := p.GetResults()
			if err != nil {
				t.Fatalf("after the error: %v", err)
			}
			if _, ok := r.(*pgconn.PipelineSync); ok {
				break
			}
			if r == nil {
				t.Fatal("no Sync result")
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if got, err := execText(ctx, c, "good"); err != nil || got != "good" {
			t.Fatalf("good after pipeline: %q, %v", got, err)
		}
		prepare(ctx, t, c, "worse", "SELECT 'worse'::text")
		if got, err := execText(ctx, c, "worse"); err != nil || got != "worse" {
			t.Fatalf("worse re-prepared: %q, %v", got, err)
		}
	})

	t.Run("Close then Parse again under the same name", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, c, "s", "SELECT 'one'::text")
		if got, err := execText(ctx, c, "s"); err != nil || got != "one" {
			t.Fatalf("%q, %v", got, err)
		}
		if err := c.Deallocate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if _, err := execText(ctx, c, "s"); sqlState(err) != "26000" {
			t.Fatalf("closed statement: want 26000, got %v", err)
		}
		prepare(ctx, t, c, "s", "SELECT 'two'::text")
		if got, err := execText(ctx, c, "s"); err != nil || got != "two" {
			t.Fatalf("%q, %v", got, err)
		}
	})

	t.Run("a duplicate name is refused like PostgreSQL does", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, c, "d", "SELECT 'first'::text")
		if _, err := c.Prepare(ctx, "d", "SELECT 'second'::text", nil); sqlState(err) != "42P05" {
			t.Fatalf("want 42P05, got %v", err)
		}
		if got, err := execText(ctx, c, "d"); err != nil || got != "first" {
			t.Fatalf("%q, %v", got, err)
		}
	})

	t.Run("DEALLOCATE ALL", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		other := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, c, "x", "SELECT 'x'::text")
		prepare(ctx, t, other, "y", "SELECT 'y'::text")
		if _, err := c.Exec(ctx, "DEALLOCATE ALL").ReadAll(); err != nil {
			t.Fatal(err)
		}
		if _, err := execText(ctx, c, "x"); sqlState(err) != "26000" {
			t.Fatalf("after DEALLOCATE ALL: want 26000, got %v", err)
		}
		// The other client's statement is prepared again where needed.
		if got, err := execText(ctx, other, "y"); err != nil || got != "y" {
			t.Fatalf("other client: %q, %v", got, err)
		}
		prepare(ctx, t, c, "x", "SELECT 'x2'::text")
		if got, err := execText(ctx, c, "x"); err != nil || got != "x2" {
			t.Fatalf("%q, %v", got, err)
		}
		if _, err := c.Exec(ctx, "DISCARD ALL").ReadAll(); err != nil {
			t.Fatal(err)
		}
		prepare(ctx, t, c, "x", "SELECT 'x3'::text")
		if got, err := execText(ctx, c, "x"); err != nil || got != "x3" {
			t.Fatalf("after DISCARD ALL: %q, %v", got, err)
		}
	})

	t.Run("DEALLOCATE ALL in the extended protocol", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		other := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, c, "x", "SELECT 'x'::text")
		prepare(ctx, t, other, "y", "SELECT 'y'::text")
		if _, err := c.ExecParams(ctx, "DEALLOCATE ALL", nil, nil, nil, nil).Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := execText(ctx, c, "x"); sqlState(err) != "26000" {
			t.Fatalf("after DEALLOCATE ALL: want 26000, got %v", err)
		}
		// The server lost "y" too: the pooler prepares it again.
		if got, err := execText(ctx, other, "y"); err != nil || got != "y" {
			t.Fatalf("other client: %q, %v", got, err)
		}
		prepare(ctx, t, c, "x", "SELECT 'x2'::text")
		if got, err := execText(ctx, c, "x"); err != nil || got != "x2" {
			t.Fatalf("%q, %v", got, err)
		}
	})

	// psycopg 3 with libpq before 17 drops the statements it prepared
	// with the SQL command, in the simple or the extended protocol; the
	// server knows them by the pooler's names.
	for _, proto := range []string{"simple", "extended"} {
		t.Run("SQL DEALLOCATE of a protocol statement, "+proto, func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 1})
			ctx := testCtx(t, 30*time.Second)
			c := tp.connect(t, pgx.QueryExecModeExec).PgConn()
			other := tp.connect(t, pgx.QueryExecModeExec).PgConn()
			prepare(ctx, t, c, "_pg3_0", "SELECT 'shared'::text")
			prepare(ctx, t, c, "Mixed Case", "SELECT 'mixed'::text")
			prepare(ctx, t, other, "o", "SELECT 'shared'::text") // the same server statement
			dealloc := func(sql string) error {
				if proto == "simple" {
					_, err := c.Exec(ctx, sql).ReadAll()
					return err
				}
				res := c.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
				if res.Err == nil && res.CommandTag.String() != "DEALLOCATE" {
					return fmt.Errorf("tag %q", res.CommandTag.String())
				}
				return res.Err
			}
			if err := dealloc("DEALLOCATE _PG3_0"); err != nil {
				t.Fatalf("DEALLOCATE: %v", err)
			}
			if err := dealloc(`deallocate prepare "Mixed Case" ;`); err != nil {
				t.Fatalf("DEALLOCATE PREPARE quoted: %v", err)
			}
			if _, err := execText(ctx, c, "_pg3_0"); sqlState(err) != "26000" {
				t.Fatalf("after DEALLOCATE: want 26000, got %v", err)
			}
			// A name the client never prepared is the server's to refuse.
			if err := dealloc("DEALLOCATE nosuch"); sqlState(err) != "26000" {
				t.Fatalf("DEALLOCATE of an unknown name: want 26000, got %v", err)
			}
			// The other client's statement, dropped on the server with it,
			// is prepared there again.
			if got, err := execText(ctx, other, "o"); err != nil || got != "shared" {
				t.Fatalf("other client: %q, %v", got, err)
			}
			prepare(ctx, t, c, "_pg3_0", "SELECT 'again'::text")
			if got, err := execText(ctx, c, "_pg3_0"); err != nil || got != "again" {
				t.Fatalf("prepared again: %q, %v", got, err)
			}
		})
	}

	// psycopg 3's pipeline mode: the error of an Execute reaches the
	// client (after a Flush) before it sends the rest of the pipeline and
	// its Sync. PostgreSQL skips all of that; the pooler must expect no
	// response for it and undo what it would have done.
	t.Run("messages sent after an error, before the Sync", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		other := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		prepare(ctx, t, other, "o", "SELECT 'cached'::text") // the server has it
		fe, conn := rawLogin(t, tp, nil)
		defer conn.Close()
		fe.Send(&pgproto3.Parse{Name: "keep", Query: "SELECT 'keep'::text"})
		fe.Send(&pgproto3.Sync{})
		fe.Flush()
		expectTypes(t, fe, "ParseComplete", "ReadyForQuery")
		// random() keeps the planner from folding the division: the error
		// comes from Execute.
		fe.Send(&pgproto3.Parse{Query: "SELECT 1/(random() * 0)::int"})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Flush{})
		fe.Flush()
		expectTypes(t, fe, "ParseComplete", "BindComplete")
		if e := receiveError(t, fe); e.Code != "22012" {
			t.Fatalf("want 22012, got %s %s", e.Code, e.Message)
		}
		// The rest of the pipeline: a new statement, one the server has
		// cached under the pooler's name, a Close, a Bind, then the Sync.
		fe.Send(&pgproto3.Parse{Name: "late", Query: "SELECT 'late'::text"})
		fe.Send(&pgproto3.Parse{Name: "late2", Query: "SELECT 'cached'::text"})
		fe.Send(&pgproto3.Close{ObjectType: 'S', Name: "keep"})
		fe.Send(&pgproto3.Bind{PreparedStatement: "late"})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		fe.Flush()
		expectTypes(t, fe, "ReadyForQuery")
		// The server went back to the pool (one server: other gets it).
		if got, err := execText(ctx, other, "o"); err != nil || got != "cached" {
			t.Fatalf("other client after the skipped pipeline: %q, %v", got, err)
		}
		// The skipped Parses prepared nothing, the skipped Close closed
		// nothing.
		for _, name := range []string{"late", "late2"} {
			fe.Send(&pgproto3.Bind{PreparedStatement: name})
			fe.Send(&pgproto3.Sync{})
			fe.Flush()
			if e := receiveError(t, fe); e.Code != "26000" {
				t.Fatalf("%s after its Parse was skipped: want 26000, got %s %s", name, e.Code, e.Message)
			}
			expectTypes(t, fe, "ReadyForQuery")
			fe.Send(&pgproto3.Parse{Name: name, Query: "SELECT 'again'::text"})
			fe.Send(&pgproto3.Sync{})
			fe.Flush()
			expectTypes(t, fe, "ParseComplete", "ReadyForQuery")
		}
		fe.Send(&pgproto3.Bind{PreparedStatement: "keep"})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		fe.Flush()
		expectTypes(t, fe, "BindComplete", "DataRow", "CommandComplete", "ReadyForQuery")
	})

	t.Run("Describe and Bind on a server that lacks the statement", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 2})
		ctx := testCtx(t, 30*time.Second)
		fe, conn := rawLogin(t, tp, nil)
		defer conn.Close()
		fe.Send(&pgproto3.Parse{Name: "desc", Query: "SELECT $1::int AS n, 'v'::text AS t"})
		fe.Send(&pgproto3.Sync{})
		fe.Flush()
		expectTypes(t, fe, "ParseComplete", "ReadyForQuery")
		// b holds the only server so far inside a transaction, so the raw
		// client gets a new one, which has never seen "desc".
		b := tp.connect(t, pgx.QueryExecModeExec)
		tx, err := b.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		fe.Send(&pgproto3.Describe{ObjectType: 'S', Name: "desc"})
		fe.Send(&pgproto3.Sync{})
		fe.Flush()
		expectTypes(t, fe, "ParameterDescription", "RowDescription", "ReadyForQuery")
		if tp.poolOpen() != 2 {
			t.Fatalf("%d servers open, want 2 (the Describe ran on a second one)", tp.poolOpen())
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		// Both servers are free again: Bind and Execute on whichever comes.
		fe.Send(&pgproto3.Bind{PreparedStatement: "desc", Parameters: [][]byte{[]byte("5")}})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		fe.Flush()
		expectTypes(t, fe, "BindComplete", "DataRow", "CommandComplete", "ReadyForQuery")
	})

	t.Run("the unnamed statement across round trips", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1})
		ctx := testCtx(t, 30*time.Second)
		a := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		b := tp.connect(t, pgx.QueryExecModeExec).PgConn()
		if _, err := a.Prepare(ctx, "", "SELECT 'a'::text", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Prepare(ctx, "", "SELECT 'b'::text", nil); err != nil {
			t.Fatal(err)
		}
		if got, err := execText(ctx, a, ""); err != nil || got != "a" {
			t.Fatalf("a's Bind of its unnamed statement: %q, %v", got, err)
		}
		if got, err := execText(ctx, b, ""); err != nil || got != "b" {
			t.Fatalf("b's Bind of its unnamed statement: %q, %v", got, err)
		}
		// A simple Query drops the unnamed statement, for a client as in
		// PostgreSQL, even when another client's is on the server.
		if _, err := a.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Prepare(ctx, "", "SELECT 'b2'::text", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := execText(ctx, a, ""); sqlState(err) != "26000" {
			t.Fatalf("a's unnamed statement after a simple Query: want 26000, got %v", err)
		}
	})
}

// TestPreparedDisabled checks that MaxPreparedStatements < 0 passes
// prepared statements through unchanged (PgBouncer before 1.21): two
// clients on one server then collide on a name.
func TestPreparedDisabled(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1, MaxPreparedStatements: -1})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := a.PgConn().Prepare(ctx, "s1", "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PgConn().Prepare(ctx, "s1", "SELECT 2", nil); sqlState(err) != "42P05" {
		t.Fatalf("want 42P05 with the feature off, got %v", err)
	}
	a.PgConn().Exec(ctx, "DEALLOCATE ALL").ReadAll()
}

// TestPreparedRawProtocol checks message order on the wire: a Parse of a
// statement the server already has is answered by the pooler itself, in
// order, and a Flush after it gets the answer out.
func TestPreparedRawProtocol(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	first := tp.connect(t, pgx.QueryExecModeExec).PgConn()
	ctx := testCtx(t, 30*time.Second)
	prepare(ctx, t, first, "shared", "SELECT 42")
	fe, conn := rawLogin(t, tp, nil)
	defer conn.Close()
	// The server has "SELECT 42" already: the ParseComplete is the pooler's.
	fe.Send(&pgproto3.Parse{Name: "mine", Query: "SELECT 42"})
	fe.Send(&pgproto3.Flush{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expectTypes(t, fe, "ParseComplete")
	fe.Send(&pgproto3.Bind{PreparedStatement: "mine"})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Close{ObjectType: 'S', Name: "mine"})
	fe.Send(&pgproto3.Parse{Name: "again", Query: "SELECT 42"})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expectTypes(t, fe, "BindComplete", "DataRow", "CommandComplete", "CloseComplete", "ParseComplete", "ReadyForQuery")
	fe.Send(&pgproto3.Bind{PreparedStatement: "mine"})
	fe.Send(&pgproto3.Sync{})
	fe.Flush()
	if e := receiveError(t, fe); e.Code != "26000" {
		t.Fatalf("Bind of a closed statement: %s %s", e.Code, e.Message)
	}
	expectTypes(t, fe, "ReadyForQuery")
}

// TestFetchStatementNotReused: PostgreSQL crashes the backend (and with
// it every session of the server) when a statement parsed as FETCH while
// its cursor was open is described after the cursor was closed. A client
// that prepares the same FETCH again after closing its cursor, as pgx's
// statement cache does after an error, must get the server's error, not
// a crash: the pooler never answers such a Parse from its cache.
func TestFetchStatementNotReused(t *testing.T) {
	srv := pgtest.New(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	c, err := pgconn.Connect(ctx, tp.url(pgtest.SuperUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("DECLARE c CURSOR WITH HOLD FOR SELECT g FROM generate_series(1, 10) g")
	if _, err := c.Prepare(ctx, "s1", "FETCH 3 FROM c", nil); err != nil {
		t.Fatalf("FETCH prepared while the cursor is open: %v", err)
	}
	exec("CLOSE c")
	if _, err := c.Prepare(ctx, "s2", "FETCH 3 FROM c", nil); err != nil {
		t.Fatalf("FETCH prepared again after CLOSE: %v", err)
	}
	err = c.ExecPrepared(ctx, "s2", nil, nil, nil).Read().Err
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "34000" {
		t.Fatalf("FETCH run after CLOSE: %v; want the server's 34000 (cursor does not exist)", err)
	}
	exec("SELECT 1")
	direct, err := pgconn.Connect(ctx, srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatalf("PostgreSQL after the FETCH: %v", err)
	}
	defer direct.Close(ctx)
	if _, err := direct.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
		t.Fatalf("PostgreSQL after the FETCH: %v", err)
	}
}
