package pooler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestPgxNoCrossTalk runs 50 goroutines, each with its own client, on a
// pool of 2 servers in every pgx exec mode that keeps no statement across
// round trips; each checks it gets its own results.
//
// With three event loops, servers and clients also move between loops.
func TestPgxNoCrossTalk(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, loops := range []int{0, 3} {
		tp := startProxy(t, srv, Config{PoolSize: 2, Loops: loops})
		if loops > 0 && tp.cfg.Relay == RelayLoop && len(tp.loopsStarted()) != loops {
			t.Fatalf("%d loops running, want %d", len(tp.loopsStarted()), loops)
		}
		pgxNoCrossTalk(t, tp, fmt.Sprintf("loops=%d/", loops))
	}
}

func pgxNoCrossTalk(t *testing.T, tp *testProxy, prefix string) {
	modes := []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheDescribe}
	for _, mode := range modes {
		t.Run(prefix+mode.String(), func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			const clients, rounds = 50, 20
			conns := make([]*pgx.Conn, clients)
			for i := range conns {
				conns[i] = tp.connect(t, mode)
			}
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for i, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						want := fmt.Sprintf("client %d round %d", i, r)
						var got string
						var n int
						if err := c.QueryRow(ctx, "SELECT $1::text, $2::int * 2", want, i*1000+r).Scan(&got, &n); err != nil {
							errs <- fmt.Errorf("%s: %w", want, err)
							return
						}
						if got != want || n != (i*1000+r)*2 {
							errs <- fmt.Errorf("%s: got %q, %d (cross-talk)", want, got, n)
							return
						}
						// A multi-row result in a transaction.
						tx, err := c.Begin(ctx)
						if err != nil {
							errs <- err
							return
						}
						rows, err := tx.Query(ctx, "SELECT g, $1::int FROM generate_series(1, 5) g", i)
						if err != nil {
							errs <- err
							return
						}
						k := 0
						for rows.Next() {
							var g, id int
							rows.Scan(&g, &id)
							k++
							if g != k || id != i {
								errs <- fmt.Errorf("%s: row %d = (%d, %d)", want, k, g, id)
							}
						}
						if err := rows.Err(); err != nil || k != 5 {
							errs <- fmt.Errorf("%s: %d rows, %v", want, k, err)
							return
						}
						if err := tx.Commit(ctx); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if open := tp.poolOpen(); open > 2 {
				t.Errorf("%d servers open, pool size is 2", open)
			}
		})
	}
}

// poolOpen returns the number of servers of the superuser's pool.
func (tp *testProxy) poolOpen() int {
	return tp.superPool(func(pl *pool) int { return pl.open })
}

// superPool returns f of the superuser's pool, locked, or 0 when there is
// no such pool yet.
func (tp *testProxy) superPool(f func(*pool) int) int {
	tp.mu.Lock()
	pl := tp.pools[poolKey{database: pgtest.Database, user: pgtest.SuperUser}]
	tp.mu.Unlock()
	if pl == nil {
		return 0
	}
	pl.lock()
	defer pl.unlock()
	return f(pl)
}

// TestPgxBatches sends pipelined batches (Parse/Bind/Execute × N, one
// Sync) from several clients on a pool of 2.
func TestPgxBatches(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheDescribe} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			var wg sync.WaitGroup
			for i := range 10 {
				c := tp.connect(t, mode)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range 10 {
						b := &pgx.Batch{}
						for j := range 20 {
							b.Queue("SELECT $1::int", i*10000+r*100+j)
						}
						br := c.SendBatch(ctx, b)
						for j := range 20 {
							var n int
							if err := br.QueryRow().Scan(&n); err != nil {
								t.Errorf("client %d: %v", i, err)
								br.Close()
								return
							}
							if n != i*10000+r*100+j {
								t.Errorf("client %d: got %d, want %d", i, n, i*10000+r*100+j)
							}
						}
						if err := br.Close(); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestTransactionStaysOnOneServer checks that every statement of a
// transaction runs on the same server while other clients are busy, and
// that an error inside a transaction keeps the server until ROLLBACK.
func TestTransactionStaysOnOneServer(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 3})
	ctx := testCtx(t, 60*time.Second)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		c := tp.connect(t, pgx.QueryExecModeExec)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Exec(ctx, "SELECT pg_backend_pid()"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	c := tp.connect(t, pgx.QueryExecModeExec)
	for range 5 {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var first int
		tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&first)
		for range 20 {
			var pid int
			if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if pid != first {
				t.Fatalf("transaction moved from backend %d to %d", first, pid)
			}
		}
		// An error: the transaction is aborted on its server.
		if _, err := tx.Exec(ctx, "SELECT 1/0"); sqlState(err) != "22012" {
			t.Fatalf("division by zero: %v", err)
		}
		_, err = tx.Exec(ctx, "SELECT 1")
		if sqlState(err) != "25P02" {
			t.Fatalf("statement after an error in a transaction: got %v, want 25P02 (the server must still be attached)", err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if c.PgConn().TxStatus() != 'I' {
			t.Fatalf("status after ROLLBACK %q", c.PgConn().TxStatus())
		}
	}
}

// TestCopyBothWays runs COPY FROM STDIN and COPY TO STDOUT through the
// pool, in and out of transactions, with a failing COPY in between.
func TestCopyBothWays(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 60*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	other := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS copytest; CREATE TABLE copytest (id int, name text)"); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&in, "%d\tname %d with some padding to make the data larger than one buffer\n", i, i)
	}
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(in.String()), "COPY copytest FROM STDIN")
	if err != nil || tag.RowsAffected() != 5000 {
		t.Fatalf("COPY FROM: %v, %v", tag, err)
	}
	// The other client works between the two COPYs on the single server.
	if _, err := other.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	tag, err = c.PgConn().CopyTo(ctx, &out, "COPY (SELECT * FROM copytest ORDER BY id) TO STDOUT")
	if err != nil || tag.RowsAffected() != 5000 {
		t.Fatalf("COPY TO: %v, %v", tag, err)
	}
	if out.String() != in.String() {
		t.Fatal("COPY TO returned other data than COPY FROM stored")
	}
	// A COPY with bad data fails, and the connection stays usable.
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("x\ty\n"), "COPY copytest FROM STDIN")
	if sqlState(err) != "22P02" {
		t.Fatalf("bad COPY: %v", err)
	}
	// COPY inside a transaction, rolled back.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, strings.NewReader("9999\tx\n"), "COPY copytest FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	var n int
	if err := other.QueryRow(ctx, "SELECT count(*) FROM copytest").Scan(&n); err != nil || n != 5000 {
		t.Fatalf("count = %d, %v", n, err)
	}
	c.Exec(ctx, "DROP TABLE copytest")
}

// TestPipelineFlush speaks the protocol directly: Parse/Bind/Execute and
// Flush without Sync get their responses, the server stays with the client
// (another client waits) until the Sync, then a pipeline of three Syncs.
func TestPipelineFlush(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	fe, conn := rawLogin(t, tp, nil)
	defer conn.Close()
	other := tp.connect(t, pgx.QueryExecModeExec)

	fe.Send(&pgproto3.Parse{Query: "SELECT 1"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Flush{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expectTypes(t, fe, "ParseComplete", "BindComplete", "DataRow", "CommandComplete")

	done := make(chan error, 1)
	go func() { _, err := other.Exec(ctx, "SELECT 2"); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("another client ran on the server during an unsynced extended query (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	for i := range 3 {
		fe.Send(&pgproto3.Parse{Query: fmt.Sprintf("SELECT %d", i)})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
	}
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		expectTypes(t, fe, "ParseComplete", "BindComplete", "DataRow", "CommandComplete", "ReadyForQuery")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

var _ = context.Background

// TestBatchWithError: a pipelined batch whose middle statement fails
// (the server skips to the Sync) leaves the server clean for the next
// client on a pool of 1.
func TestBatchWithError(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	for range 5 {
		batch := &pgx.Batch{}
		batch.Queue("SELECT 1")
		batch.Queue("SELECT 1/0")
		batch.Queue("SELECT 3")
		err := a.SendBatch(ctx, batch).Close()
		if sqlState(err) != "22012" {
			t.Fatalf("batch: %v", err)
		}
		var n int
		if err := b.QueryRow(ctx, "SELECT 4").Scan(&n); err != nil || n != 4 {
			t.Fatalf("other client after a failed batch: %d, %v", n, err)
		}
		if err := a.QueryRow(ctx, "SELECT 5").Scan(&n); err != nil || n != 5 {
			t.Fatalf("same client after a failed batch: %d, %v", n, err)
		}
	}
}

// poolWaiting is the number of clients waiting for a server of the
// superuser's pool.
func (tp *testProxy) poolWaiting() int {
	return tp.superPool(func(pl *pool) int { return pl.waiters.Len() })
}
