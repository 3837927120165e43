package sessionstate_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// soak sets the soak test's size: the default keeps the suite quick;
// -soak runs the full soak (200 clients for 30 s).
var soak = flag.Bool("soak", false, "run TestSoak with 200 clients for 30 s")

// The leak suite: the seed experiments run through the pooler in
// transaction mode, with each session-state policy, against PostgreSQL.

type proxy struct {
	*pooler.Proxy
	url string
}

func start(t *testing.T, srv *pgtest.Server, policy pooler.Policy, poolSize int) *proxy {
	t.Helper()
	p, port := proxytest.Start(t, pooler.Config{
		Upstream:       srv.SocketURL(pgtest.SuperUser),
		PoolSize:       poolSize,
		Classifier:     sessionstate.New(),
		OnSessionState: policy,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, 10*time.Second)
	return &proxy{p, fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, port, pgtest.Database)}
}

func (p *proxy) conn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

var policies = []pooler.Policy{pooler.PolicyPreserve, pooler.PolicyReset, pooler.PolicyReject, pooler.PolicyAllow}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// (a) 5 clients SET work_mem and leave; 50 new clients SHOW work_mem.
func TestLeakSet(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range policies {
		for _, size := range []int{1, 20} {
			t.Run(fmt.Sprintf("%s/pool%d", policy, size), func(t *testing.T) {
				p := start(t, srv, policy, size)
				ctx := context.Background()
				for range 5 {
					c := p.conn(t)
					_, err := c.Exec(ctx, "SET work_mem = '64MB'")
					if policy == pooler.PolicyReject {
						if sqlState(err) != "0A000" {
							t.Fatalf("reject: SET gave %v, want 0A000", err)
						}
						// The connection stays usable.
						if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
							t.Fatalf("after the refusal: %v", err)
						}
					} else if err != nil {
						t.Fatal(err)
					}
					c.Close(ctx)
				}
				seen := 0
				for range 50 {
					c := p.conn(t)
					var wm string
					if err := c.QueryRow(ctx, "SHOW work_mem").Scan(&wm); err != nil {
						t.Fatal(err)
					}
					if wm == "64MB" {
						seen++
					}
					c.Close(ctx)
				}
				want := 0
				if policy == pooler.PolicyAllow {
					want = 50 // PgBouncer's behaviour, documented
					if size == 20 {
						want = -1 // some: depends on which servers the 5 used
					}
				}
				if want >= 0 && seen != want {
					t.Fatalf("%d of 50 new clients saw work_mem = 64MB, want %d", seen, want)
				}
				if want < 0 && seen == 0 {
					t.Fatalf("allow: no client saw the leak; the pooler is not passing SET through")
				}
				t.Logf("%d/50 saw the SET", seen)
			})
		}
	}
}

// (f) A's SET follows A to its later transactions, even on another
// server, and no other client sees it (preserve).
func TestPreserveSetFollowsClient(t *testing.T) {
	srv := pgtest.Shared(t)
	p := start(t, srv, pooler.PolicyPreserve, 2)
	ctx := context.Background()
	a := p.conn(t)
	b := p.conn(t)
	if _, err := a.Exec(ctx, "SET work_mem = '77MB'"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "SET search_path = pg_catalog, public"); err != nil {
		t.Fatal(err)
	}
	pids := map[int]bool{}
	for i := range 20 {
		// b holds a server inside a transaction now and then, so a moves.
		var tx pgx.Tx
		if i%2 == 0 {
			var err error
			if tx, err = b.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		var wm, sp string
		var pid int
		if err := a.QueryRow(ctx, "SELECT current_setting('work_mem'), current_setting('search_path'), pg_backend_pid()").Scan(&wm, &sp, &pid); err != nil {
			t.Fatal(err)
		}
		pids[pid] = true
		if wm != "77MB" || sp != "pg_catalog, public" {
			t.Fatalf("a's settings on server %d: work_mem %s, search_path %s", pid, wm, sp)
		}
		var bwm string
		q := b.QueryRow
		if tx != nil {
			q = tx.QueryRow
		}
		if err := q(ctx, "SHOW work_mem").Scan(&bwm); err != nil {
			t.Fatal(err)
		}
		if bwm == "77MB" {
			t.Fatal("b sees a's work_mem")
		}
		if tx != nil {
			tx.Commit(ctx)
		}
	}
	if len(pids) < 2 {
		t.Logf("a ran on %d server(s) only", len(pids))
	}
	// A RESET is followed too.
	if _, err := a.Exec(ctx, "RESET work_mem"); err != nil {
		t.Fatal(err)
	}
	var wm string
	a.QueryRow(ctx, "SHOW work_mem").Scan(&wm)
	if wm == "77MB" {
		t.Fatal("RESET work_mem did not follow a")
	}
}

// (b) A holds pg_advisory_lock(42): B does not get it (preserve), and
// after both leave no advisory lock is left (preserve, reset); reject
// refuses the lock; allow shows PgBouncer's leak.
func TestLeakAdvisoryLock(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range policies {
		for _, size := range []int{2, 20} {
			t.Run(fmt.Sprintf("%s/pool%d", policy, size), func(t *testing.T) {
				p := start(t, srv, policy, size)
				ctx := context.Background()
				a := p.conn(t)
				b := p.conn(t)
				var ok bool
				err := a.QueryRow(ctx, "SELECT pg_advisory_lock(42) IS NULL").Scan(&ok)
				if policy == pooler.PolicyReject {
					if sqlState(err) != "0A000" {
						t.Fatalf("want 0A000, got %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&ok); err != nil {
					t.Fatal(err)
				}
				if policy == pooler.PolicyPreserve && ok {
					t.Fatal("preserve: b got a's lock")
				}
				if ok && policy != pooler.PolicyAllow {
					b.Exec(ctx, "SELECT pg_advisory_unlock_all()")
				}
				a.Close(ctx)
				b.Close(ctx)
				direct := directConn(t, srv)
				var n int
				deadline := time.Now().Add(5 * time.Second)
				for {
					direct.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&n)
					if n == 0 || policy == pooler.PolicyAllow || time.Now().After(deadline) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				if policy == pooler.PolicyAllow {
					// PgBouncer's behaviour: the lock outlives both clients on
					// the pooled server.
					if n == 0 {
						t.Fatal("allow: the lock did not outlive its clients")
					}
					p.Shutdown(ctx) // closes the server, and the lock with it
					return
				}
				if n != 0 {
					t.Fatalf("%d advisory locks left after both clients left", n)
				}
			})
		}
	}
}

// A takes an advisory lock and unlocks another key, both keys parameters
// the pooler cannot see: PostgreSQL releases nothing, so A still holds its
// lock and stays on its server (preserve); B, on the pool's other server,
// does not get the lock. A pooler that paired the unlock with the lock
// from their text alone would let B onto A's server, where the lock is
// B's too.
func TestLeakAdvisoryLockUnseenKeys(t *testing.T) {
	srv := pgtest.Shared(t)
	p := start(t, srv, pooler.PolicyPreserve, 2)
	ctx := context.Background()
	a := p.conn(t)
	b := p.conn(t)
	var ok bool
	if _, err := a.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(4242)); err != nil {
		t.Fatal(err)
	}
	if err := a.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", int64(4243)).Scan(&ok); err != nil || ok {
		t.Fatalf("unlock of a key never locked: %v, %v", ok, err)
	}
	if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock(4242)").Scan(&ok); err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatal("b got the lock a still holds: a's server was given to b")
	}
	if err := a.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", int64(4242)).Scan(&ok); err != nil || !ok {
		t.Fatalf("a's unlock of its own key: %v, %v", ok, err)
	}
	if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock(4242)").Scan(&ok); err != nil || !ok {
		t.Fatalf("b after a's unlock: %v, %v", ok, err)
	}
	if _, err := b.Exec(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
		t.Fatal(err)
	}
}

// What a rolled-back transaction undid is still there: A's DROP of its
// temporary table and its UNLISTEN inside a transaction it rolls back
// change nothing on the server, so A stays on its server (preserve) and
// B, on the pool's other server, sees neither.
func TestLeakRolledBackUndo(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, tc := range []struct{ make, undo string }{
		{"CREATE TEMP TABLE rb_tmp (x int)", "DROP TABLE rb_tmp"},
		{"LISTEN rb_chan", "UNLISTEN rb_chan"},
		{"LISTEN rb_chan", "UNLISTEN *"},
	} {
		t.Run(tc.undo, func(t *testing.T) {
			p := start(t, srv, pooler.PolicyPreserve, 2)
			ctx := context.Background()
			a := p.conn(t)
			b := p.conn(t)
			for _, q := range []string{tc.make, "BEGIN", tc.undo, "ROLLBACK"} {
				if _, err := a.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			var temp bool
			var chans int
			if err := b.QueryRow(ctx, "SELECT to_regclass('pg_temp.rb_tmp') IS NOT NULL, (SELECT count(*) FROM pg_listening_channels())").Scan(&temp, &chans); err != nil {
				t.Fatal(err)
			}
			if temp || chans != 0 {
				t.Fatalf("b sees a's temporary table %v, %d channels: a's server was given to b", temp, chans)
			}
			if err := a.QueryRow(ctx, "SELECT to_regclass('pg_temp.rb_tmp') IS NOT NULL, (SELECT count(*) FROM pg_listening_channels())").Scan(&temp, &chans); err != nil {
				t.Fatal(err)
			}
			if made := strings.HasPrefix(tc.make, "CREATE"); temp != made || (chans == 1) == made {
				t.Fatalf("a lost its state: temporary table %v, %d channels", temp, chans)
			}
		})
	}
}

// (h) A is killed (its socket closed, no Terminate) while it holds an
// advisory lock inside a transaction and between transactions: the lock is
// gone before the server serves anyone else.
func TestAdvisoryLockHolderKilled(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range policies {
		t.Run(string(policy), func(t *testing.T) {
			p := start(t, srv, policy, 1)
			ctx := context.Background()
			for _, inTx := range []bool{false, true} {
				a := p.conn(t)
				if inTx {
					if _, err := a.Exec(ctx, "BEGIN"); err != nil {
						t.Fatal(err)
					}
				}
				_, err := a.Exec(ctx, "SELECT pg_advisory_lock(7)")
				if policy == pooler.PolicyReject {
					if sqlState(err) != "0A000" {
						t.Fatalf("reject: %v", err)
					}
					a.Close(ctx)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				a.PgConn().Conn().Close() // killed
				b := p.conn(t)
				var ok bool
				if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock(7)").Scan(&ok); err != nil {
					t.Fatal(err)
				}
				// Under allow, outside a transaction, the lock stays on the
				// only server and b, on that same server, takes it again:
				// PgBouncer's "granted twice".
				if !ok {
					t.Fatalf("in transaction %v: the killed client's lock outlived it", inTx)
				}
				var held int
				b.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()").Scan(&held)
				b.Exec(ctx, "SELECT pg_advisory_unlock_all()")
				b.Close(ctx)
				if policy == pooler.PolicyAllow && !inTx && held == 0 {
					t.Fatal("allow: the killed client's lock did not stay on the server")
				}
			}
		})
	}
}

// (c) LISTEN: under preserve others never listen and A still gets the
// NOTIFY; reset cleans the server, reject refuses, allow leaks.
func TestListen(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range policies {
		for _, size := range []int{2, 20} {
			t.Run(fmt.Sprintf("%s/pool%d", policy, size), func(t *testing.T) {
				p := start(t, srv, policy, size)
				ctx := context.Background()
				a := p.conn(t)
				_, err := a.Exec(ctx, "LISTEN jobs")
				if policy == pooler.PolicyReject {
					if sqlState(err) != "0A000" {
						t.Fatalf("reject: LISTEN gave %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				leaked := 0
				for range 5 {
					o := p.conn(t)
					var chans []string
					if err := o.QueryRow(ctx, "SELECT coalesce(array_agg(c), '{}') FROM pg_listening_channels() c").Scan(&chans); err != nil {
						t.Fatal(err)
					}
					if len(chans) != 0 {
						leaked++
					}
					if _, err := o.Exec(ctx, "NOTIFY jobs, 'hello'"); err != nil {
						t.Fatal(err)
					}
					o.Close(ctx)
				}
				switch policy {
				case pooler.PolicyAllow:
					// PgBouncer's behaviour: the LISTEN stays on whichever
					// server ran it, and other clients land there.
					if size == 2 && leaked == 0 {
						t.Fatal("allow: no other client inherited the LISTEN")
					}
					return
				case pooler.PolicyReset:
					// The server was cleaned when A's transaction ended.
					if leaked != 0 {
						t.Fatalf("reset: %d other clients listen on jobs", leaked)
					}
					return
				}
				if leaked != 0 {
					t.Fatalf("preserve: %d other clients listen on jobs", leaked)
				}
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				n, err := a.WaitForNotification(wctx)
				if err != nil {
					t.Fatalf("a got no notification: %v", err)
				}
				if n.Channel != "jobs" || n.Payload != "hello" {
					t.Fatalf("notification %+v", n)
				}
			})
		}
	}
}

// (d) and (g): temp tables and WITH HOLD cursors stay usable by A in later
// transactions and invisible to others (preserve).
func TestTempTableAndHoldCursor(t *testing.T) {
	srv := pgtest.Shared(t)
	p := start(t, srv, pooler.PolicyPreserve, 2)
	ctx := context.Background()
	a := p.conn(t)
	b := p.conn(t)
	if _, err := a.Exec(ctx, "CREATE TEMP TABLE scratch (n int)"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := a.Exec(ctx, "INSERT INTO scratch VALUES ($1)", i); err != nil {
			t.Fatalf("a's temp table in a later transaction: %v", err)
		}
		var n int
		err := b.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'scratch' AND pg_table_is_visible(oid)").Scan(&n)
		if err != nil || n != 0 {
			t.Fatalf("b sees a temp table scratch (%d, %v)", n, err)
		}
	}
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DECLARE c CURSOR WITH HOLD FOR SELECT n FROM scratch ORDER BY n"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, "FETCH 1 FROM c").Scan(&n); err != nil || n != 0 {
		t.Fatalf("FETCH from a WITH HOLD cursor after COMMIT: %d, %v", n, err)
	}
	if _, err := a.Exec(ctx, "CLOSE c"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "DROP TABLE scratch"); err != nil {
		t.Fatal(err)
	}
}

// (e) after SET ROLE by A, no other client ever runs as that role.
func TestSetRole(t *testing.T) {
	srv := pgtest.Shared(t)
	direct := directConn(t, srv)
	ctx := context.Background()
	direct.Exec(ctx, "DROP ROLE IF EXISTS leak_role")
	if _, err := direct.Exec(ctx, "CREATE ROLE leak_role"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Exec(context.Background(), "DROP ROLE IF EXISTS leak_role") })
	for _, policy := range policies {
		t.Run(string(policy), func(t *testing.T) {
			p := start(t, srv, policy, 1)
			a := p.conn(t)
			_, err := a.Exec(ctx, "SET ROLE leak_role")
			if policy == pooler.PolicyReject {
				if sqlState(err) != "0A000" {
					t.Fatalf("reject: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cu string
			a.QueryRow(ctx, "SELECT current_user").Scan(&cu)
			if policy == pooler.PolicyPreserve && cu != "leak_role" {
				t.Fatalf("preserve: a runs as %s after SET ROLE", cu)
			}
			leaked := 0
			for range 10 {
				o := p.conn(t)
				if err := o.QueryRow(ctx, "SELECT current_user").Scan(&cu); err != nil {
					t.Fatal(err)
				}
				if cu == "leak_role" {
					leaked++
				}
				o.Close(ctx)
			}
			if policy == pooler.PolicyAllow {
				// PgBouncer's behaviour: every later client of the only
				// server runs as a's role.
				if leaked != 10 {
					t.Fatalf("allow: %d of 10 clients ran as a's role, want 10 (the leak)", leaked)
				}
				p.Shutdown(ctx)
				return
			}
			if leaked != 0 {
				t.Fatalf("%d other clients run as a's role", leaked)
			}
		})
	}
}

// The soak: many clients doing a random mix of the above, then nothing is
// left anywhere.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test skipped in -short mode")
	}
	srv := pgtest.Shared(t)
	p := start(t, srv, pooler.PolicyPreserve, 5)
	ctx := context.Background()
	clients, dur := 40, 3*time.Second
	if *soak {
		clients, dur = 200, 30*time.Second
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fail := func(f string, a ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	end := time.Now().Add(dur)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			wm := fmt.Sprintf("%dkB", 1001+2*i) // never a whole MB
			var c *pgx.Conn
			connect := func() bool {
				var err error
				if c, err = pgx.Connect(ctx, p.url); err != nil {
					fail("connect: %v", err)
					return false
				}
				if _, err := c.Exec(ctx, "SET work_mem = '"+wm+"'"); err != nil {
					fail("set: %v", err)
					return false
				}
				return true
			}
			if !connect() {
				return
			}
			defer func() { c.Close(ctx) }()
			for time.Now().Before(end) {
				switch rng.IntN(7) {
				case 0:
					var got string
					if err := c.QueryRow(ctx, "SHOW work_mem").Scan(&got); err != nil || got != wm {
						fail("client %d: work_mem %q (want %s), %v", i, got, wm, err)
						return
					}
				case 1:
					c.Exec(ctx, fmt.Sprintf("SELECT pg_advisory_lock(%d)", 1000+i))
					c.Exec(ctx, "SELECT 1")
					c.Exec(ctx, fmt.Sprintf("SELECT pg_advisory_unlock(%d)", 1000+i))
				case 2:
					c.Exec(ctx, "LISTEN soak")
					c.Exec(ctx, "NOTIFY soak")
					c.Exec(ctx, "UNLISTEN soak")
				case 3:
					c.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS t (n int)")
					c.Exec(ctx, "INSERT INTO t VALUES (1)")
					c.Exec(ctx, "DROP TABLE t")
				case 4:
					tx, err := c.Begin(ctx)
					if err == nil {
						tx.Exec(ctx, "SET LOCAL statement_timeout = '5s'")
						tx.Exec(ctx, "DECLARE h CURSOR WITH HOLD FOR SELECT 1")
						tx.Commit(ctx)
						c.Exec(ctx, "FETCH h")
						c.Exec(ctx, "CLOSE h")
					}
				case 5:
					// Killed while holding state: the socket just closes.
					c.Exec(ctx, fmt.Sprintf("SELECT pg_advisory_lock(%d)", 1000+i))
					c.Exec(ctx, "LISTEN soak_killed")
					c.PgConn().Conn().Close()
					c.Close(ctx)
					if !connect() {
						return
					}
				default:
					c.Exec(ctx, "SELECT 1")
				}
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	direct := directConn(t, srv)
	time.Sleep(200 * time.Millisecond)
	var locks int
	direct.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&locks)
	if locks != 0 {
		t.Errorf("%d advisory locks left", locks)
	}
	// Every pooled server is back at the defaults: five clients inside a
	// transaction each hold one of the pool's five servers.
	var txs []pgx.Tx
	for range 5 {
		c := p.conn(t)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
		var got string
		var chans, temps, cursors int
		tx.QueryRow(ctx, "SHOW work_mem").Scan(&got)
		tx.QueryRow(ctx, "SELECT count(*) FROM pg_listening_channels()").Scan(&chans)
		tx.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relpersistence = 't' AND pg_table_is_visible(oid)").Scan(&temps)
		tx.QueryRow(ctx, "SELECT count(*) FROM pg_cursors WHERE is_holdable").Scan(&cursors)
		if got != "4MB" || chans != 0 || temps != 0 || cursors != 0 {
			t.Errorf("a pooled server has work_mem %s, %d channels, %d temp tables, %d cursors", got, chans, temps, cursors)
		}
	}
	for _, tx := range txs {
		tx.Rollback(ctx)
	}
}

func directConn(t *testing.T, srv *pgtest.Server) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestDynamicSetConfig: set_config with the parameter's name as a query
// parameter. The pooler cannot know which setting changed: under preserve
// the client keeps its server (and sees its setting), under reset the
// server is reset entirely; nobody else ever sees it.
func TestDynamicSetConfig(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range []pooler.Policy{pooler.PolicyPreserve, pooler.PolicyReset} {
		t.Run(string(policy), func(t *testing.T) {
			p := start(t, srv, policy, 1)
			ctx := context.Background()
			a := p.conn(t)
			var v string
			if err := a.QueryRow(ctx, "SELECT set_config($1, '65MB', false)", "work_mem").Scan(&v); err != nil {
				t.Fatal(err)
			}
			if policy == pooler.PolicyPreserve {
				a.QueryRow(ctx, "SHOW work_mem").Scan(&v)
				if v != "65MB" {
					t.Fatalf("preserve: a sees work_mem %s", v)
				}
			}
			a.Close(ctx)
			for range 3 {
				o := p.conn(t)
				o.QueryRow(ctx, "SHOW work_mem").Scan(&v)
				if v == "65MB" {
					t.Fatal("another client sees a's set_config")
				}
				o.Close(ctx)
			}
		})
	}
}

// TestLargeQuerySet: a simple Query larger than the pooler's read buffer
// that also SETs: it is classified like any other, so the SET follows its
// client and reaches no one else (preserve), or is refused (reject).
func TestLargeQuerySet(t *testing.T) {
	srv := pgtest.Shared(t)
	big := "SET work_mem = '67MB'; SELECT length('" + strings.Repeat("x", 20000) + "')"
	for _, policy := range []pooler.Policy{pooler.PolicyPreserve, pooler.PolicyReject} {
		t.Run(string(policy), func(t *testing.T) {
			p := start(t, srv, policy, 1)
			ctx := context.Background()
			a := p.conn(t)
			_, err := a.PgConn().Exec(ctx, big).ReadAll()
			if policy == pooler.PolicyReject {
				if sqlState(err) != "0A000" {
					t.Fatalf("reject: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			a.Close(ctx)
			o := p.conn(t)
			var v string
			o.QueryRow(ctx, "SHOW work_mem").Scan(&v)
			if v == "67MB" {
				t.Fatal("the SET inside a large Query reached another client")
			}
		})
	}
}

// (d) under the other policies: reset drops A's temp table when its
// transaction's server goes back, reject refuses it, allow lets the next
// client of the server see it (PgBouncer's behaviour).
func TestTempTableOtherPolicies(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range []pooler.Policy{pooler.PolicyReset, pooler.PolicyReject, pooler.PolicyAllow} {
		t.Run(string(policy), func(t *testing.T) {
			p := start(t, srv, policy, 1)
			ctx := context.Background()
			a := p.conn(t)
			_, err := a.Exec(ctx, "CREATE TEMP TABLE scratch_other (n int)")
			if policy == pooler.PolicyReject {
				if sqlState(err) != "0A000" {
					t.Fatalf("reject: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b := p.conn(t)
			var n int
			b.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'scratch_other' AND pg_table_is_visible(oid)").Scan(&n)
			if policy == pooler.PolicyAllow {
				if n != 1 {
					t.Fatal("allow: b does not see a's temp table on the shared server (the leak)")
				}
				p.Shutdown(ctx)
				return
			}
			if n != 0 {
				t.Fatal("reset: b sees a's temp table")
			}
			if _, err := a.Exec(ctx, "INSERT INTO scratch_other VALUES (1)"); sqlState(err) != "42P01" {
				t.Fatalf("reset: a's temp table should be gone in its next transaction, got %v", err)
			}
		})
	}
}

// (g) under the other policies: reset closes a WITH HOLD cursor when its
// transaction's server goes back, reject refuses it, allow leaves it for
// the next client of the server.
func TestHoldCursorOtherPolicies(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, policy := range []pooler.Policy{pooler.PolicyReset, pooler.PolicyReject, pooler.PolicyAllow} {
		t.Run(string(policy), func(t *testing.T) {
			p := start(t, srv, policy, 1)
			ctx := context.Background()
			a := p.conn(t)
			_, err := a.Exec(ctx, "BEGIN; DECLARE held_other CURSOR WITH HOLD FOR SELECT 1; COMMIT")
			if policy == pooler.PolicyReject {
				if sqlState(err) != "0A000" {
					t.Fatalf("reject: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b := p.conn(t)
			var n int
			b.QueryRow(ctx, "SELECT count(*) FROM pg_cursors WHERE name = 'held_other'").Scan(&n)
			if policy == pooler.PolicyAllow {
				if n != 1 {
					t.Fatal("allow: b does not see a's cursor on the shared server (the leak)")
				}
				p.Shutdown(ctx)
				return
			}
			if n != 0 {
				t.Fatal("reset: b sees a's cursor")
			}
			if _, err := a.Exec(ctx, "FETCH held_other"); sqlState(err) != "34000" {
				t.Fatalf("reset: a's cursor should be closed in its next transaction, got %v", err)
			}
		})
	}
}
