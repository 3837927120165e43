package pooler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// capWorkload runs clients (one per entry of users × dbs, n each) that
// each run rounds short transactions, while a monitor counts the backends
// of the roles in pg_stat_activity; it returns the most seen at once per
// group (as group sums the counts) and fails on a client error.
func capWorkload(t *testing.T, tp *testProxy, direct *pgx.Conn, clients [][2]string, rounds int, countSQL string) int {
	t.Helper()
	ctx := testCtx(t, 90*time.Second)
	var peak atomic.Int64
	stop := make(chan struct{})
	monDone := make(chan error, 1)
	go func() {
		for {
			var n int64
			if err := direct.QueryRow(ctx, countSQL).Scan(&n); err != nil {
				monDone <- err
				return
			}
			if n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				monDone <- nil
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	conns := make([]*pgx.Conn, len(clients))
	for i, ud := range clients {
		conns[i] = tp.connectAs(t, ud[0], ud[1])
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	var served atomic.Int64
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				tx, err := c.Begin(ctx)
				if err == nil {
					_, err = tx.Exec(ctx, "SELECT pg_sleep(0.02)")
				}
				if err == nil {
					err = tx.Commit(ctx)
				}
				if err != nil {
					errs <- err
					return
				}
				served.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-monDone; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Errorf("client: %v", err)
	}
	if int(served.Load()) != len(conns)*rounds {
		t.Errorf("%d of %d transactions served", served.Load(), len(conns)*rounds)
	}
	return int(peak.Load())
}

// TestCapDBConnections: max_db_connections caps the servers of one
// database over two pools (two users) in pg_stat_activity while clients
// queue, and every client is served; the cap was reached (so it is the
// cap, not the load, that held the count). The cap is set with SET, as
// RELOAD would.
func TestCapDBConnections(t *testing.T) {
	srv := pgtest.Shared(t)
	createRoles(t, srv, "cap_a", "cap_b")
	for _, relay := range opsRelays {
		t.Run(string(relay), func(t *testing.T) {
			tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, Relay: relay, PoolSize: 4})
			direct := directConn(t, srv)
			if _, err := tp.adminConn(t).Exec(testCtx(t, 10*time.Second), "SET max_db_connections = 3"); err != nil {
				t.Fatal(err)
			}
			var clients [][2]string
			for range 6 {
				clients = append(clients, [2]string{"cap_a", pgtest.Database}, [2]string{"cap_b", pgtest.Database})
			}
			peak := capWorkload(t, tp, direct, clients, 15,
				fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE datname = '%s' AND usename IN ('cap_a', 'cap_b')", pgtest.Database))
			if peak != 3 {
				t.Fatalf("peak server connections of the database %d, want the cap 3 reached and never exceeded", peak)
			}
			if !backendsSettle(t, direct, fmt.Sprintf("datname = '%s' AND usename IN ('cap_a', 'cap_b')", pgtest.Database), 3) {
				t.Error("more than 3 servers after the load")
			}
		})
	}
}

// backendsSettle reports whether the backends matching where number at
// most n (after a moment for closed ones to exit).
func backendsSettle(t *testing.T, direct *pgx.Conn, where string, n int) bool {
	ctx := testCtx(t, 10*time.Second)
	return waitFor(3*time.Second, func() bool {
		var got int
		if err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE "+where).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got <= n
	})
}

// TestCapUserConnections: max_user_connections caps one user's servers
// over two databases; a per-database max_db_connections ([databases]
// entry) caps one database below the global setting.
func TestCapUserConnections(t *testing.T) {
	srv := pgtest.Shared(t)
	createRoles(t, srv, "cap_u")
	const db2 = "cap_db2"
	createDatabase(t, srv, db2)
	for _, relay := range opsRelays {
		t.Run(string(relay), func(t *testing.T) {
			tp := startProxy(t, srv, Config{Relay: relay, PoolSize: 4, MaxUserConnections: 3,
				Databases: map[string]Database{pgtest.Database: {}, db2: {MaxDBConnections: 2}}})
			direct := directConn(t, srv)
			var clients [][2]string
			for range 4 {
				clients = append(clients, [2]string{"cap_u", pgtest.Database}, [2]string{"cap_u", db2})
			}
			peak := capWorkload(t, tp, direct, clients, 10, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'cap_u'")
			if peak != 3 {
				t.Fatalf("peak server connections of the user %d, want the cap 3 reached and never exceeded", peak)
			}
			var user []string
			for _, r := range tp.showUsers().rows {
				if r[0] == "cap_u" {
					user = r
				}
			}
			if user == nil {
				t.Fatal("SHOW USERS has no row for cap_u")
			}
			if n, _ := strconv.Atoi(user[3]); user[2] != "3" || n < 1 || n > 3 {
				t.Errorf("SHOW USERS row of cap_u %v, want max_user_connections 3 and 1 to 3 connections", user)
			}
			found := false
			for _, r := range tp.showDatabases(tp.Snapshot()).rows {
				if r[0] == db2 {
					found = true
					if r[10] != "2" {
						t.Errorf("SHOW DATABASES %s max_connections %q, want its entry's 2", db2, r[10])
					}
				}
			}
			if !found {
				t.Errorf("SHOW DATABASES has no row for %s", db2)
			}
		})
	}
}

// TestCapPerDatabase: a [databases] entry's max_db_connections holds in
// pg_stat_activity.
func TestCapPerDatabase(t *testing.T) {
	srv := pgtest.Shared(t)
	createRoles(t, srv, "cap_a", "cap_b")
	tp := startProxy(t, srv, Config{PoolSize: 4, MaxDBConnections: 10,
		Databases: map[string]Database{pgtest.Database: {MaxDBConnections: 2}}})
	direct := directConn(t, srv)
	var clients [][2]string
	for range 4 {
		clients = append(clients, [2]string{"cap_a", pgtest.Database}, [2]string{"cap_b", pgtest.Database})
	}
	peak := capWorkload(t, tp, direct, clients, 10,
		fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE datname = '%s' AND usename IN ('cap_a', 'cap_b')", pgtest.Database))
	if peak != 2 {
		t.Fatalf("peak %d, want the entry's cap 2 reached and never exceeded", peak)
	}
}

// TestCapEvictedServerExits: a server closed to make room under a cap
// (max_db_connections 1: a client of a second pool of the database waits
// while the first pool's server is idle) keeps its slot until its backend
// has exited, which the pooler learns from the end of the stream after it
// sent Terminate: while the fake server holds the ended session open, the
// first pool still counts the server and the waiting client has not logged
// a new one in; once the session is closed, the client is served, and the
// server never had two sessions at once.
func TestCapEvictedServerExits(t *testing.T) {
	for _, relay := range opsRelays {
		t.Run(string(relay), func(t *testing.T) {
			ended, exit := make(chan struct{}, 1), make(chan struct{})
			f := startFakeServerEnd(t, func() {
				ended <- struct{}{}
				<-exit
			})
			tp := startProxy(t, nil, Config{Relay: relay, PoolSize: 2, MaxDBConnections: 1,
				Upstream: fmt.Sprintf("postgres://fake@127.0.0.1:%d/fake?sslmode=disable", f.port)})
			tp.exitWait.Store(int64(time.Minute)) // no bound while the test holds the session
			ctx := testCtx(t, 30*time.Second)
			a := tp.connectAs(t, "cap_a", "capdb")
			if _, err := a.Exec(ctx, "ok", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatal(err)
			}
			// b's login needs a server of its own pool: the cap is full,
			// and a's idle server is evicted.
			type conn struct {
				c   *pgx.Conn
				err error
			}
			bc := make(chan conn, 1)
			go func() {
				c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://cap_b@127.0.0.1:%d/capdb?sslmode=disable", tp.port))
				bc <- conn{c, err}
			}()
			select {
			case <-ended:
			case <-ctx.Done():
				t.Fatal("a's server was not closed to make room for b")
			}
			tp.mu.Lock()
			pa, pb := tp.pools[poolKey{"capdb", "cap_a"}], tp.pools[poolKey{"capdb", "cap_b"}]
			tp.mu.Unlock()
			pa.lock()
			openA := pa.open
			pa.unlock()
			pb.lock()
			openB, waitingB := pb.open, pb.waiters.Len()
			pb.unlock()
			if openA != 1 || openB != 0 || waitingB != 1 || pa.dbCap.n.Load() != 1 {
				t.Errorf("while the evicted server's session is open: a's pool has %d servers, b's %d and %d waiting, the cap counts %d; want 1, 0, 1 waiting, 1",
					openA, openB, waitingB, pa.dbCap.n.Load())
			}
			close(exit)
			b := <-bc
			if b.err != nil {
				t.Fatalf("b's login after the evicted server's session closed: %v", b.err)
			}
			defer b.c.Close(context.Background())
			if _, err := b.c.Exec(ctx, "ok", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatal(err)
			}
			if n := f.peak.Load(); n != 1 {
				t.Errorf("the server had %d sessions at once under max_db_connections 1", n)
			}
		})
	}
}

// TestQueryTimeout: a query that runs longer than query_timeout ends with
// FATAL "query timeout"; its backend's query is cancelled and the server
// closed, and the pool (of one) serves the next client; a query shorter
// than the timeout is untouched, and a client waiting for a server waits
// no longer than the timeout either. The timeout is 2 s: every other
// statement of the test runs under it too, and on a loaded machine under
// the race detector a BEGIN or COMMIT has taken over a second.
func TestQueryTimeout(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, relay := range opsRelays {
		t.Run(string(relay), func(t *testing.T) {
			const limit = 2 * time.Second
			tp := startProxy(t, srv, Config{Relay: relay, PoolSize: 1, QueryTimeout: limit})
			ctx := testCtx(t, 60*time.Second)
			direct := directConn(t, srv)
			a := tp.connect(t, pgx.QueryExecModeExec)
			if _, err := a.Exec(ctx, "SELECT pg_sleep(0.3)"); err != nil {
				t.Fatalf("a query shorter than the timeout: %v", err)
			}
			var pid int
			if err := a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := a.Exec(ctx, "SELECT pg_sleep(30)")
			took := time.Since(start)
			if sqlState(err) != "08P01" || !strings.Contains(err.Error(), "query timeout") {
				t.Fatalf("pg_sleep(30) with query_timeout %s: %v, want FATAL 08P01 query timeout", limit, err)
			}
			if took < limit || took > limit+5*time.Second {
				t.Errorf("the query was closed after %s, want %s and a little", took, limit)
			}
			if !backendGone(t, direct, pid) {
				t.Errorf("backend %d still there after the query timeout", pid)
			}
			b := tp.connect(t, pgx.QueryExecModeExec)
			var one int
			if err := b.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("the next client: %v", err)
			}
			// A wait for a server is bounded by query_timeout too (the
			// query wait timeout is the default two minutes here).
			if _, err := b.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			c := tp.connect(t, pgx.QueryExecModeExec)
			start = time.Now()
			_, err = c.Exec(ctx, "SELECT 1")
			if took := time.Since(start); sqlState(err) != "08P01" || took < limit-100*time.Millisecond || took > limit+5*time.Second {
				t.Fatalf("a client waiting for the busy pool: %v after %s, want 08P01 after about %s", err, took, limit)
			}
			if _, err := b.Exec(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAdminReloadCaps: RELOAD puts max_db_connections, query_timeout and
// stats_users into force as SET does: after it, a second client of a
// database capped at one server waits (though the pool has room) and its
// wait ends at the query timeout.
func TestAdminReloadCaps(t *testing.T) {
	srv := pgtest.Shared(t)
	createRoles(t, srv, "ops_stats")
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, PoolSize: 4,
		Reload: func(c *Config) error {
			c.MaxDBConnections, c.QueryTimeout, c.StatsUsers = 1, time.Second, []string{"ops_stats"}
			return nil
		}})
	took, err := reloadThenQueue(t, tp)
	if sqlState(err) != "08P01" || took < 900*time.Millisecond || took > 5*time.Second {
		t.Fatalf("a second client over the reloaded cap of 1: %v after %s, want 08P01 after about 1s", err, took)
	}
	adminShow(t, tp.consoleAs(t, "ops_stats"), "SHOW POOLS")
}
