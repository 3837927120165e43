package pooler

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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
