package pooler

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// opsRelays are the relays the operations tests run under.
var opsRelays = []Relay{RelayLoop, RelayBridged}

// createRoles makes login roles for the tests (trust on the test server).
func createRoles(t *testing.T, srv *pgtest.Server, names ...string) {
	t.Helper()
	ctx := testCtx(t, 20*time.Second)
	for _, n := range names {
		if err := srv.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') THEN CREATE ROLE %s LOGIN; END IF; END $$`, n, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// createDatabase makes a database for the tests, once.
func createDatabase(t *testing.T, srv *pgtest.Server, name string) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	direct := directConn(t, srv)
	var n int
	if err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		if err := srv.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
	}
}

// connectAs connects a client of the proxy as user to database db.
func (tp *testProxy) connectAs(t *testing.T, user, db string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, tp.port, db))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	c, err := pgx.ConnectConfig(testCtx(t, 20*time.Second), cfg)
	if err != nil {
		t.Fatalf("connect as %s to %s: %v", user, db, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// consoleAs opens a console session as user.
func (tp *testProxy) consoleAs(t *testing.T, user string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(tp.adminURL(user))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(testCtx(t, 20*time.Second), cfg)
	if err != nil {
		t.Fatalf("console as %s: %v", user, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// backendGone waits until pid is no longer in pg_stat_activity.
func backendGone(t *testing.T, direct *pgx.Conn, pid int) bool {
	t.Helper()
	ctx := testCtx(t, 20*time.Second)
	return waitFor(5*time.Second, func() bool {
		var n int
		if err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

// sentBeforeClose reads what the pooler sent a client on its own before
// it closed the connection (a FATAL), from the client's socket.
func sentBeforeClose(c *pgx.Conn) string {
	nc := c.PgConn().Conn()
	nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	b, _ := io.ReadAll(nc)
	return string(b)
}

// isSocket reports whether fd is a socket of this process.
func isSocket(fd string) bool {
	target, err := os.Readlink("/proc/self/fd/" + fd)
	return err == nil && strings.HasPrefix(target, "socket:")
}

// TestAdminShowMemSocketsFDs: SHOW MEM reports the runtime's memory, SHOW
// SOCKETS the clients and servers with their descriptors, and SHOW FDS the
// listener, client and server sockets (descriptors that are sockets of
// this process), with no password column.
func TestAdminShowMemSocketsFDs(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 30*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	var pid int
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin := tp.adminConn(t)

	mem := map[string]map[string]string{}
	for _, r := range adminShow(t, admin, "SHOW MEM") {
		mem[r["name"]] = r
	}
	heap := mem["heap"]
	used, _ := strconv.ParseInt(heap["used"], 10, 64)
	total, _ := strconv.ParseInt(heap["memtotal"], 10, 64)
	if used <= 0 || total < used {
		t.Errorf("SHOW MEM heap row %v: want 0 < used <= memtotal", heap)
	}
	if g, _ := strconv.Atoi(mem["goroutines"]["used"]); g < 2 {
		t.Errorf("SHOW MEM goroutines %v", mem["goroutines"])
	}

	var client, server map[string]string
	for _, r := range adminShow(t, admin, "SHOW SOCKETS") {
		switch {
		case r["type"] == "C" && r["database"] == pgtest.Database:
			client = r
		case r["type"] == "S" && r["remote_pid"] == strconv.Itoa(pid):
			server = r
		}
	}
	if client == nil || server == nil {
		t.Fatalf("SHOW SOCKETS: client row %v, server row %v (backend %d)", client, server, pid)
	}
	if !isSocket(client["fd"]) || !isSocket(server["fd"]) || client["fd"] == server["fd"] {
		t.Errorf("SHOW SOCKETS descriptors: client %q, server %q", client["fd"], server["fd"])
	}

	rows := adminShow(t, admin, "SHOW FDS")
	tasks := map[string]int{}
	seen := map[string]bool{}
	for _, r := range rows {
		if _, ok := r["password"]; ok {
			t.Fatalf("SHOW FDS has a password column: %v", r)
		}
		tasks[r["task"]]++
		if !isSocket(r["fd"]) || seen[r["fd"]] {
			t.Errorf("SHOW FDS row %v: descriptor not a socket of the process, or listed twice", r)
		}
		seen[r["fd"]] = true
		if r["task"] == "pooler" && r["port"] != strconv.Itoa(tp.port) {
			t.Errorf("SHOW FDS listener row %v, want port %d", r, tp.port)
		}
		if r["task"] == "server" && r["cancel"] != strconv.Itoa(pid) {
			t.Errorf("SHOW FDS server row %v, want backend %d", r, pid)
		}
	}
	// The client, the console session itself, one server, the listener.
	if tasks["pooler"] != 1 || tasks["client"] != 2 || tasks["server"] != 1 {
		t.Errorf("SHOW FDS tasks %v", tasks)
	}
}

// TestAdminSet: SET changes a running setting through RELOAD's path (SHOW
// CONFIG shows it, and it acts); restart-only and unknown keys and bad
// values are refused with a clear error.
func TestAdminSet(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, PoolSize: 1, QueryWaitTimeout: time.Minute})
	ctx := testCtx(t, 30*time.Second)
	admin := tp.adminConn(t)
	config := func() map[string]string {
		m := map[string]string{}
		for _, r := range adminShow(t, admin, "SHOW CONFIG") {
			m[r["key"]] = r["value"]
		}
		return m
	}
	for _, q := range []string{"SET query_wait_timeout = 0.3", "set max_db_connections to 7", "SET stats_users = 'mon, grafana'", "SET query_timeout = '90s'"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cfg := config()
	for k, want := range map[string]string{"query_wait_timeout": "300ms", "max_db_connections": "7", "stats_users": "mon,grafana", "query_timeout": "1m30s"} {
		if cfg[k] != want {
			t.Errorf("after SET, SHOW CONFIG %s = %q, want %q", k, cfg[k], want)
		}
	}
	// The new query_wait_timeout acts: a second client waits 300ms only.
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := a.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := b.Exec(ctx, "SELECT 1"); sqlState(err) != "08P01" || time.Since(start) > 10*time.Second {
		t.Fatalf("after SET query_wait_timeout = 0.3: %v after %s, want 08P01 at once", err, time.Since(start))
	}
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, code, msg string }{
		{"SET listen = '0.0.0.0:1'", "55P02", "cannot be changed while running"},
		{"SET pool_mode = session", "55P02", "restart"},
		{"SET no_such_key = 1", "42704", "unknown setting"},
		{"SET pool_size = 0", "22023", "whole number from 1"},
		{"SET query_timeout = soon", "22023", "number of seconds"},
		{"SET max_client_conn", "42601", "usage"},
	} {
		_, err := admin.Exec(ctx, tc.q)
		if sqlState(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %s %q", tc.q, err, tc.code, tc.msg)
		}
	}
	if got := config()["pool_size"]; got != "1" {
		t.Errorf("a refused SET changed pool_size to %s", got)
	}
	// SHOW CONFIG's changeable column and SET agree, key by key.
	settableKeys := map[string]bool{}
	for _, k := range SettableKeys() {
		settableKeys[k] = true
	}
	for _, r := range adminShow(t, admin, "SHOW CONFIG") {
		if (r["changeable"] == "yes") != settableKeys[r["key"]] {
			t.Errorf("SHOW CONFIG %s changeable=%s, but SET takes it: %v", r["key"], r["changeable"], settableKeys[r["key"]])
		}
		delete(settableKeys, r["key"])
	}
	if len(settableKeys) > 0 {
		t.Errorf("SET takes keys SHOW CONFIG does not list: %v", settableKeys)
	}
}

// TestAdminStatsUsers: a stats user reaches the console and its SHOW
// commands, and every other command is refused; SET stats_users admits a
// new one at once.
func TestAdminStatsUsers(t *testing.T) {
	srv := pgtest.Shared(t)
	createRoles(t, srv, "ops_stats", "ops_stats2")
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, StatsUsers: []string{"ops_stats"}})
	ctx := testCtx(t, 30*time.Second)
	st := tp.consoleAs(t, "ops_stats")
	if rows := adminShow(t, st, "SHOW VERSION"); len(rows) != 1 {
		t.Fatalf("SHOW VERSION as a stats user: %v", rows)
	}
	adminShow(t, st, "SHOW POOLS")
	adminShow(t, st, "SHOW CONFIG")
	for _, q := range []string{"PAUSE", "SET pool_size = 5", "RELOAD", "KILL " + pgtest.Database, "DISABLE " + pgtest.Database, "SHUTDOWN"} {
		_, err := st.Exec(ctx, q)
		if sqlState(err) != "42501" || !strings.Contains(err.Error(), "admin access needed") {
			t.Errorf("%s as a stats user: %v, want 42501 admin access needed", q, err)
		}
	}
	// Nothing happened: the pooler serves and is not paused.
	c := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("after refused commands: %v", err)
	}
	if _, err := pgx.Connect(ctx, tp.adminURL("ops_stats2")); sqlState(err) != "28000" {
		t.Fatalf("a user in neither list: %v, want 28000", err)
	}
	if _, err := tp.adminConn(t).Exec(ctx, "SET stats_users = 'ops_stats,ops_stats2'"); err != nil {
		t.Fatal(err)
	}
	adminShow(t, tp.consoleAs(t, "ops_stats2"), "SHOW STATS")
}

// TestAdminKill: KILL closes every client of the database at once with a
// FATAL (idle ones, ones inside a transaction, one in the pool's queue,
// one held by PAUSE) and its servers, and pauses it: a new client waits until RESUME.
func TestAdminKill(t *testing.T) {
	for _, relay := range opsRelays {
		t.Run(string(relay), func(t *testing.T) {
			srv := pgtest.Shared(t)
			tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, Relay: relay, PoolSize: 2})
			ctx := testCtx(t, 60*time.Second)
			direct := directConn(t, srv)
			admin := tp.adminConn(t)
			idle := tp.connect(t, pgx.QueryExecModeExec)
			var idlePID int
			if err := idle.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&idlePID); err != nil {
				t.Fatal(err)
			}
			inTx := tp.connect(t, pgx.QueryExecModeExec)
			if _, err := inTx.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			var txPID int
			if err := inTx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&txPID); err != nil {
				t.Fatal(err)
			}
			// The pool's second server is held too: a third client queues.
			blocker := tp.connect(t, pgx.QueryExecModeExec)
			if _, err := blocker.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			queued := tp.connect(t, pgx.QueryExecModeExec)
			queuedDone := make(chan error, 1)
			go func() {
				_, err := queued.Exec(ctx, "SELECT 1")
				queuedDone <- err
			}()
			time.Sleep(300 * time.Millisecond)
			if _, err := admin.Exec(ctx, "KILL "+pgtest.Database); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-queuedDone:
				if sqlState(err) != "57P01" || !strings.Contains(err.Error(), "killed") {
					t.Errorf("a queued client after KILL: %v, want FATAL 57P01 killed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a queued client still waits after KILL")
			}
			for name, c := range map[string]*pgx.Conn{"idle": idle, "in a transaction": inTx, "holding the other server": blocker} {
				if got := sentBeforeClose(c); !strings.Contains(got, "57P01") || !strings.Contains(got, "killed") {
					t.Errorf("%s client after KILL got %q, want FATAL 57P01 killed", name, got)
				}
			}
			for _, pid := range []int{idlePID, txPID} {
				if !backendGone(t, direct, pid) {
					t.Errorf("server %d still connected after KILL", pid)
				}
			}
			// Paused: a new client's query waits until RESUME.
			c := tp.connect(t, pgx.QueryExecModeExec)
			done := make(chan error, 1)
			go func() {
				_, err := c.Exec(ctx, "SELECT 1")
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("a query ran on a killed database before RESUME: %v", err)
			case <-time.After(500 * time.Millisecond):
			}
			if _, err := admin.Exec(ctx, "RESUME "+pgtest.Database); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("after RESUME: %v", err)
			}
			// A client held by PAUSE is closed by KILL too.
			if _, err := admin.Exec(ctx, "PAUSE "+pgtest.Database); err != nil {
				t.Fatal(err)
			}
			held := tp.connect(t, pgx.QueryExecModeExec)
			heldDone := make(chan error, 1)
			go func() {
				_, err := held.Exec(ctx, "SELECT 1")
				heldDone <- err
			}()
			time.Sleep(300 * time.Millisecond)
			if _, err := admin.Exec(ctx, "KILL "+pgtest.Database); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-heldDone:
				if sqlState(err) != "57P01" || !strings.Contains(err.Error(), "killed") {
					t.Errorf("a client held by PAUSE, after KILL: %v, want FATAL 57P01 killed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a client held by PAUSE still waits after KILL")
			}
			if _, err := admin.Exec(ctx, "RESUME "+pgtest.Database); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Exec(ctx, "KILL pgbouncer"); err == nil {
				t.Error("KILL of the console database accepted")
			}
		})
	}
}

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
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := tp.adminConn(t).Exec(ctx, "RELOAD"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := b.Exec(ctx, "SELECT 1")
	if took := time.Since(start); sqlState(err) != "08P01" || took < 900*time.Millisecond || took > 5*time.Second {
		t.Fatalf("a second client over the reloaded cap of 1: %v after %s, want 08P01 after about 1s", err, took)
	}
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	adminShow(t, tp.consoleAs(t, "ops_stats"), "SHOW POOLS")
}

// BenchmarkQueryTimeoutLateness: how long after its deadline a 1 s
// query_timeout ends pg_sleep(5) (the loop's timer against the janitor's
// one-second sweep). Not a test: it prints figures.
// go test ./pooler -run XXX -bench QueryTimeoutLateness -benchtime 5x
func BenchmarkQueryTimeoutLateness(b *testing.B) {
	srv := pgtest.Shared(b)
	tp := startProxy(b, srv, Config{PoolSize: 2, QueryTimeout: time.Second})
	ctx := testCtx(b, 10*time.Minute)
	var worst, sum time.Duration
	for i := 0; i < b.N; i++ {
		c := tp.connect(b, pgx.QueryExecModeExec)
		start := time.Now()
		_, err := c.Exec(ctx, "SELECT pg_sleep(5)")
		late := time.Since(start) - time.Second
		if sqlState(err) != "08P01" {
			b.Fatalf("pg_sleep(5): %v, want the query timeout", err)
		}
		sum += late
		worst = max(worst, late)
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(b.N), "ms-late-mean")
	b.ReportMetric(float64(worst.Milliseconds()), "ms-late-max")
}
