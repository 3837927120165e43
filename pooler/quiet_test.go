package pooler_test

// Clients that hold a server and go quiet: pinned by session state, idle
// inside a transaction, or waiting for a long query while another
// client's wait for a server times out. Each case runs on the loop with
// epoll and bridged, with pools of 1 and 2 servers, with the real
// session-state classifier (internal/sessionstate, which the package's own
// tests cannot import).
//
// A quiet client is one with nothing to read for a while: its loop has
// given back its read buffer (between transactions) and the janitor has
// looked at it (quietGap is longer than one of its ticks).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// quietGap is longer than one janitor tick.
const quietGap = 1500 * time.Millisecond

var quietKeys atomic.Int64

type quietProxy struct {
	*pooler.Proxy
	// key is the advisory lock key of this test (tests run in parallel
	// on one PostgreSQL).
	key  int64
	url  string
	srv  *pgtest.Server
	stop func() time.Duration
}

// startQuiet starts a proxy in transaction mode with the real classifier
// on relay with pool size size; waitTimeout is query_wait_timeout.
func startQuiet(t *testing.T, relay pooler.Relay, size int, waitTimeout time.Duration) *quietProxy {
	return startWith(t, pooler.Config{Relay: relay, PoolSize: size, QueryWaitTimeout: waitTimeout})
}

// startWith starts a proxy with cfg and the real classifier.
func startWith(t testing.TB, cfg pooler.Config) *quietProxy {
	t.Helper()
	srv := pgtest.Shared(t)
	level := slog.LevelWarn
	var out io.Writer = io.Discard
	if os.Getenv("POOLER_TEST_DEBUG") != "" {
		out, level = os.Stderr, slog.LevelDebug
	}
	cfg.Upstream = srv.SocketURL(pgtest.SuperUser)
	cfg.Classifier = sessionstate.New()
	cfg.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	p, port := proxytest.Listen(t, cfg)
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background()) }()
	stopped := false
	qp := &quietProxy{Proxy: p, srv: srv, key: 7000 + quietKeys.Add(1),
		url: fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, port, pgtest.Database)}
	// stop shuts the proxy down and returns how long that took.
	qp.stop = func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		select {
		case <-done:
		case <-time.After(25 * time.Second):
			t.Errorf("the proxy did not stop; what it still held:\n%s", proxytest.Stuck(p))
		}
		if n := p.Snapshot().InvalidMoves; n != 0 {
			t.Errorf("%d client moves refused by the engine's state machine", n)
		}
		return time.Since(start)
	}
	t.Cleanup(func() { qp.stop() })
	return qp
}

func (qp *quietProxy) conn(t *testing.T) *pgx.Conn {
	t.Helper()
	return qp.connApp(t, "", pgx.QueryExecModeSimpleProtocol)
}

// answered runs sql on c and fails the test unless it returns want within
// a few seconds.
func answered(t *testing.T, c *pgx.Conn, sql, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got string
	if err := c.QueryRow(ctx, sql).Scan(&got); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if got != want {
		t.Fatalf("%s = %q, want %q", sql, got, want)
	}
}

func exec(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// settled waits until no client is active or waiting and no server is
// active, and fails the test with the pooler's state otherwise.
func (qp *quietProxy) settled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		snap := qp.Snapshot()
		busy := 0
		for _, pl := range snap.Pools {
			busy += pl.ClientsActive + pl.ClientsWaiting + pl.ServersActive + pl.ServersUsed
			if pl.ServersActive+pl.ServersIdle+pl.ServersUsed+pl.ServersLogin > pl.Size {
				t.Fatalf("pool %s/%s has more servers than its size: %+v", pl.Database, pl.User, pl)
			}
		}
		if snap.InvalidMoves != 0 {
			t.Fatalf("%d client moves refused by the engine's state machine", snap.InvalidMoves)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pooler did not settle: %+v", snap.Pools)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freshClientServed checks that a new client gets an answer at once and
// that it finds no temp table t and no advisory lock qp.key held
// elsewhere: whatever the quiet client left was cleaned.
func (qp *quietProxy) freshClientServed(t *testing.T) {
	t.Helper()
	c := qp.conn(t)
	answered(t, c, "SELECT 'served'", "served")
	answered(t, c, "SELECT coalesce(to_regclass('pg_temp.t')::text, 'none')", "none")
	answered(t, c, fmt.Sprintf("SELECT pg_try_advisory_lock(%d)::text", qp.key), "true")
	answered(t, c, fmt.Sprintf("SELECT pg_advisory_unlock(%d)::text", qp.key), "true")
	c.Close(context.Background())
}

var quietRelays = []pooler.Relay{pooler.RelayLoop, pooler.RelayBridged}

func forQuiet(t *testing.T, f func(t *testing.T, relay pooler.Relay, size int)) {
	for _, relay := range quietRelays {
		for _, size := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/pool%d", relay, size), func(t *testing.T) {
				t.Parallel()
				f(t, relay, size)
			})
		}
	}
}

// A client pinned by session state goes quiet, then asks again; after it
// leaves, its server is clean and the next client is served at once.
// (settled waits for the clean too: with a pool of two the next client
// gets the other server, and an advisory lock is seen by every session
// until the clean has released it.)
func TestQuietPinnedClient(t *testing.T) {
	cases := []struct {
		name, setup, check, want string
	}{
		{"temp table", "CREATE TEMP TABLE t(i int)", "SELECT count(*)::text FROM t", "0"},
		{"advisory lock", "SELECT pg_advisory_lock(%d)", "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND objid = %d AND pid = pg_backend_pid()", "1"},
		{"listen", "LISTEN ch", "SELECT 'answered'", "answered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forQuiet(t, func(t *testing.T, relay pooler.Relay, size int) {
				qp := startQuiet(t, relay, size, 10*time.Second)
				c := qp.conn(t)
				setup, check := tc.setup, tc.check
				if tc.name == "advisory lock" {
					setup, check = fmt.Sprintf(setup, qp.key), fmt.Sprintf(check, qp.key)
				}
				exec(t, c, setup)
				time.Sleep(quietGap)
				answered(t, c, check, tc.want)
				time.Sleep(quietGap)
				answered(t, c, check, tc.want)
				c.Close(context.Background())
				qp.settled(t)
				qp.freshClientServed(t)
				if d := qp.stop(); d > 3*time.Second {
					t.Fatalf("shutdown took %v", d)
				}
			})
		})
	}
}

// A LISTENing client that is quiet gets a notification sent meanwhile,
// then its next query is answered.
func TestQuietListenerGetsNotification(t *testing.T) {
	forQuiet(t, func(t *testing.T, relay pooler.Relay, size int) {
		qp := startQuiet(t, relay, size, 10*time.Second)
		c := qp.conn(t)
		exec(t, c, "LISTEN quiet_ch")
		time.Sleep(quietGap)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := qp.srv.Exec(ctx, "NOTIFY quiet_ch, 'hello'"); err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer wcancel()
		n, err := c.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		if n.Channel != "quiet_ch" || n.Payload != "hello" {
			t.Fatalf("notification %+v", n)
		}
		time.Sleep(quietGap)
		answered(t, c, "SELECT 'answered'", "answered")
		exec(t, c, "UNLISTEN *")
		c.Close(context.Background())
		qp.settled(t)
		qp.freshClientServed(t)
	})
}

// A client goes quiet inside a transaction, then finishes it.
func TestQuietInTransaction(t *testing.T) {
	forQuiet(t, func(t *testing.T, relay pooler.Relay, size int) {
		qp := startQuiet(t, relay, size, 10*time.Second)
		c := qp.conn(t)
		exec(t, c, "BEGIN")
		time.Sleep(quietGap)
		answered(t, c, "SELECT 'answered'", "answered")
		time.Sleep(quietGap)
		exec(t, c, "COMMIT")
		answered(t, c, "SELECT 'after'", "after")
		c.Close(context.Background())
		qp.settled(t)
		qp.freshClientServed(t)
		if d := qp.stop(); d > 3*time.Second {
			t.Fatalf("shutdown took %v", d)
		}
	})
}

// Clients hold every server in transactions with a long query while more
// clients wait for a server and time out: the holders' COMMITs are
// answered, the waiters get a clean query_wait_timeout, and a new client
// is served at once afterwards.
func TestLongQueryWhileWaitersTimeOut(t *testing.T) {
	forQuiet(t, func(t *testing.T, relay pooler.Relay, size int) {
		const clients = 10
		qp := startQuiet(t, relay, size, time.Second)
		// Every client logs in first (login needs no server once the
		// pool knows the server's parameters).
		warm := qp.conn(t)
		answered(t, warm, "SELECT 'warm'", "warm")
		warm.Close(context.Background())
		conns := make([]*pgx.Conn, clients)
		for i := range conns {
			conns[i] = qp.conn(t)
		}
		var mu sync.Mutex
		commits, timeouts := 0, 0
		var other []error
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				_, err := c.Exec(ctx, "BEGIN")
				if err == nil {
					_, err = c.Exec(ctx, "SELECT pg_sleep(1.6)")
				}
				if err == nil {
					_, err = c.Exec(ctx, "COMMIT")
				}
				mu.Lock()
				defer mu.Unlock()
				var pe *pgconn.PgError
				switch {
				case err == nil:
					commits++
				case errors.As(err, &pe) && pe.Code == "08P01" && pe.Message == "query_wait_timeout":
					timeouts++
				default:
					other = append(other, err)
				}
			}()
		}
		wg.Wait()
		if len(other) > 0 || commits != size || timeouts != clients-size {
			t.Fatalf("%d commits (want %d), %d query_wait_timeout (want %d), other errors: %v",
				commits, size, timeouts, clients-size, other)
		}
		qp.settled(t)
		start := time.Now()
		qp.freshClientServed(t)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("a new client waited %v", d)
		}
		if d := qp.stop(); d > 3*time.Second {
			t.Fatalf("shutdown took %v", d)
		}
	})
}

// TestIdleTransactionTimeout: a client idle inside a transaction longer
// than idle_transaction_timeout is closed with FATAL "idle transaction
// timeout"; its server is closed (its transaction ends with it) and the
// next client gets a server at once (pool of 1). A client busy in a long query is not idle,
// and one idle between transactions is not touched by this timeout. With
// client_idle_timeout, a client idle outside a transaction is closed.
func TestIdleTransactionTimeout(t *testing.T) {
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, IdleTransactionTimeout: 1500 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			table := fmt.Sprintf("itx_%d", qp.key)
			direct, err := pgx.Connect(ctx, qp.srv.SocketURL(pgtest.SuperUser))
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close(ctx)
			if _, err := direct.Exec(ctx, "CREATE TABLE "+table+" (i int)"); err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if _, err := direct.Exec(ctx, "DROP TABLE "+table); err != nil {
					t.Errorf("DROP TABLE: %v (a transaction left open?)", err)
				}
			}()

			busy := qp.conn(t)
			exec(t, busy, "BEGIN")
			answered(t, busy, "SELECT pg_sleep(2.5)::text", "") // longer than the timeout, but not idle
			exec(t, busy, "COMMIT")

			between := qp.conn(t)
			time.Sleep(2500 * time.Millisecond) // idle between transactions: untouched
			answered(t, between, "SELECT 'still here'", "still here")

			a := qp.conn(t)
			exec(t, a, "BEGIN")
			exec(t, a, "INSERT INTO "+table+" VALUES (1)")
			time.Sleep(3 * time.Second)
			if got := pendingError(t, a); !strings.Contains(got, "idle transaction timeout") {
				t.Fatalf("after the timeout the client holds %q, want FATAL idle transaction timeout", got)
			}
			b := qp.conn(t)
			answered(t, b, "SELECT count(*)::text FROM "+table, "0") // rolled back, server free
			qp.settled(t)
		})
	}
}

// pendingError reads what the pooler sent an idle client on its own (a
// FATAL before it closed the connection) from the client's socket: pgx
// would fail its next write on the closed connection without reading it,
// where libpq shows it.
func pendingError(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	nc := c.PgConn().Conn()
	// Read until the pooler closes the connection: at once when it has,
	// and on a loaded machine a timeout may take longer than its limit.
	nc.SetReadDeadline(time.Now().Add(15 * time.Second))
	b, _ := io.ReadAll(nc)
	return string(b)
}

func TestClientIdleTimeout(t *testing.T) {
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, ClientIdleTimeout: 1500 * time.Millisecond})
			a := qp.conn(t)
			answered(t, a, "SELECT 'a'", "a")
			for range 3 { // active: kept
				time.Sleep(700 * time.Millisecond)
				answered(t, a, "SELECT 'a'", "a")
			}
			time.Sleep(3 * time.Second)
			if got := pendingError(t, a); !strings.Contains(got, "client_idle_timeout") {
				t.Fatalf("after idling the client holds %q, want FATAL client_idle_timeout", got)
			}
			qp.settled(t)
		})
	}
}

// TestStartupParametersCarried: in transaction mode under preserve and
// reset a startup parameter (search_path, statement_timeout) follows its
// client to every server it gets and never reaches another client (pool
// of 1, interleaved); under allow it is refused as PgBouncer refuses it.
func TestStartupParametersCarried(t *testing.T) {
	for _, relay := range quietRelays {
		for _, policy := range []pooler.Policy{pooler.PolicyPreserve, pooler.PolicyReset} {
			t.Run(fmt.Sprintf("%s/%s", relay, policy), func(t *testing.T) {
				t.Parallel()
				qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: policy})
				cfg, err := pgx.ParseConfig(qp.url)
				if err != nil {
					t.Fatal(err)
				}
				cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
				cfg.RuntimeParams["search_path"] = "startup_path"
				cfg.RuntimeParams["statement_timeout"] = "123s"
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				a, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					t.Fatalf("startup parameters refused: %v", err)
				}
				defer a.Close(ctx)
				b := qp.conn(t)
				for range 3 {
					answered(t, a, "SHOW search_path", "startup_path")
					answered(t, a, "SHOW statement_timeout", "123s")
					answered(t, b, "SHOW search_path", `"$user", public`)
					answered(t, b, "SHOW statement_timeout", "0")
				}
				exec(t, a, "SET statement_timeout = '7s'")
				answered(t, b, "SHOW statement_timeout", "0")
				want := "7s"
				if policy == pooler.PolicyReset {
					want = "123s" // reset drops the SET, the startup value stays
				}
				answered(t, a, "SHOW statement_timeout", want)
				qp.settled(t)
			})
		}
	}
	t.Run("allow", func(t *testing.T) {
		qp := startWith(t, pooler.Config{PoolSize: 1, OnSessionState: pooler.PolicyAllow})
		cfg, _ := pgx.ParseConfig(qp.url)
		cfg.RuntimeParams["search_path"] = "startup_path"
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			c.Close(ctx)
			t.Fatal("a startup search_path was accepted under allow")
		}
		if !strings.Contains(err.Error(), "unsupported startup parameter: search_path") {
			t.Fatalf("under allow: %v", err)
		}
	})
}

// TestDropIfExistsIsNoHazard: DROP TABLE IF EXISTS of a plain table is
// neither refused under reject nor counted as a temp-table hazard, nor does
// it pin under preserve; pgbench -i runs through the reject policy.
func TestDropIfExistsIsNoHazard(t *testing.T) {
	qp := startWith(t, pooler.Config{PoolSize: 1, OnSessionState: pooler.PolicyReject})
	c := qp.conn(t)
	table := fmt.Sprintf("plain_%d", qp.key)
	exec(t, c, "DROP TABLE IF EXISTS "+table)
	exec(t, c, "CREATE TABLE "+table+" (i int)")
	exec(t, c, "DROP TABLE IF EXISTS "+table)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE t_"+table+" (i int)"); err == nil {
		t.Fatal("CREATE TEMP TABLE was not refused under reject")
	}
	for _, h := range qp.Hazards() {
		if h.Rule == "temp-table" && h.Action != "rejected" {
			t.Errorf("hazard counted for a plain DROP: %+v", h)
		}
	}
	pgbench := qp.srv.Tool("pgbench")
	if pgbench == "" {
		pgtest.Optional(t, "pgbench", "install PostgreSQL's client programs", "not found")
	}
	out, err := osexec.CommandContext(ctx, pgbench, "-i", "-s", "1", "--quiet", qp.url).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench -i through the reject policy: %v\n%s", err, out)
	}
	direct, err := pgx.Connect(ctx, qp.srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	direct.Exec(ctx, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
	qp.settled(t)
}
