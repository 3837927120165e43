package pooler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestReloadQueryWaitTimeout: a query wait timeout shortened by RELOAD
// applies to the next wait.
func TestReloadQueryWaitTimeout(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1, QueryWaitTimeout: time.Minute, AdminUsers: []string{pgtest.SuperUser},
		Reload: func(c *Config) error {
			c.QueryWaitTimeout = 300 * time.Millisecond
			return nil
		}})
	took, err := reloadThenQueue(t, tp)
	if sqlState(err) != "08P01" || took > 10*time.Second {
		t.Fatalf("after RELOAD to 300ms: want 08P01 query_wait_timeout within seconds, got %v after %s", err, took)
	}
}

// reloadThenQueue runs RELOAD on the console, then has a second client
// query while a first holds a transaction open, and returns how long that
// query took and its error; the first client commits after it.
func reloadThenQueue(t *testing.T, tp *testProxy) (time.Duration, error) {
	t.Helper()
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
	took := time.Since(start)
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	return took, err
}

// TestReloadAppliesLimitsAndUsers: RELOAD applies max_client_conn and the
// auth file at once: a rotated password works and the old one does not, a
// removed user cannot log in, and the new client limit holds.
func TestReloadAppliesLimitsAndUsers(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 30*time.Second)
	users := Userlist{pgtest.SuperUser: "old-pw", "gone": "pw"}
	cfg := Config{AuthType: AuthMD5, Users: users, MaxClientConn: 10}
	cfg.Reload = func(c *Config) error {
		c.Users = Userlist{pgtest.SuperUser: "new-pw"}
		c.MaxClientConn = 1
		return nil
	}
	tp := startProxy(t, srv, cfg)
	login := func(user, pw string) (*pgx.Conn, error) {
		// A refused login leaves the count a moment after its FATAL.
		waitFor(2*time.Second, func() bool { return tp.clientCount() == 0 })
		c, err := pgx.Connect(ctx, tp.url(user, pw))
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return c, err
	}
	first, err := login(pgtest.SuperUser, "old-pw")
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := login(pgtest.SuperUser, "new-pw"); sqlState(err) != "53300" {
		t.Fatalf("over the reloaded max_client_conn of 1: %v, want 53300", err)
	}
	first.Close(ctx)
	if _, err := login(pgtest.SuperUser, "old-pw"); sqlState(err) != "28P01" {
		t.Fatalf("the rotated-out password: %v, want 28P01", err)
	}
	if _, err := login("gone", "pw"); sqlState(err) != "28P01" {
		t.Fatalf("a removed user: %v, want 28P01", err)
	}
	if _, err := login(pgtest.SuperUser, "new-pw"); err != nil {
		t.Fatalf("the new password: %v", err)
	}
}

// TestConsolePgBouncerNames: the console answers to PgBouncer's database
// name and its SHOW USERS, STATS_TOTALS, STATS_AVERAGES and TOTALS.
func TestConsolePgBouncerNames(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 20*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	for range 5 {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s@127.0.0.1:%d/pgbouncer?sslmode=disable", pgtest.SuperUser, tp.port))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("console as database pgbouncer: %v", err)
	}
	defer admin.Close(ctx)
	users := adminShow(t, admin, "SHOW USERS")
	if len(users) != 1 || users[0]["name"] != pgtest.SuperUser || users[0]["pool_mode"] != "transaction" {
		t.Errorf("SHOW USERS = %v", users)
	}
	totals := adminShow(t, admin, "SHOW STATS_TOTALS")
	if len(totals) != 1 || totals[0]["database"] != pgtest.Database || totals[0]["xact_count"] == "" || totals[0]["xact_count"] == "0" {
		t.Errorf("SHOW STATS_TOTALS = %v", totals)
	}
	if _, ok := totals[0]["avg_xact_count"]; ok {
		t.Errorf("SHOW STATS_TOTALS has an average column: %v", totals[0])
	}
	avgs := adminShow(t, admin, "SHOW STATS_AVERAGES")
	if len(avgs) != 1 || avgs[0]["xact_time"] == "" {
		t.Errorf("SHOW STATS_AVERAGES = %v", avgs)
	}
	sum := map[string]string{}
	for _, r := range adminShow(t, admin, "SHOW TOTALS") {
		sum[r["name"]] = r["value"]
	}
	if sum["total_xact_count"] != totals[0]["xact_count"] {
		t.Errorf("SHOW TOTALS total_xact_count %q, STATS_TOTALS %q", sum["total_xact_count"], totals[0]["xact_count"])
	}
}

// TestAdminDisableReconnect: DISABLE refuses new logins to a database and
// keeps its clients; ENABLE admits them again; RECONNECT closes idle
// servers at once and busy ones when they are given back, and WAIT_CLOSE
// returns when they are all gone.
func TestAdminDisableReconnect(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, PoolSize: 2})
	ctx := testCtx(t, 60*time.Second)
	admin := tp.adminConn(t)
	exec := func(q string) {
		t.Helper()
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pidOf := func(c *pgx.Conn) int {
		var pid int
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	a := tp.connect(t, pgx.QueryExecModeExec)
	idlePID := pidOf(a)

	exec("DISABLE " + pgtest.Database)
	cfg, _ := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
	if _, err := pgx.ConnectConfig(ctx, cfg); sqlState(err) != "55000" {
		t.Fatalf("login to a disabled database: %v, want 55000", err)
	}
	if got := pidOf(a); got == 0 {
		t.Fatal("a connected client stopped working after DISABLE")
	}
	exec("ENABLE " + pgtest.Database)
	b := tp.connect(t, pgx.QueryExecModeExec)

	// b holds a server inside a transaction across the RECONNECT.
	tx, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	busyPID := pidOf(b)
	exec("RECONNECT " + pgtest.Database)
	done := make(chan error, 1)
	go func() {
		_, err := admin.Exec(ctx, "WAIT_CLOSE "+pgtest.Database)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("WAIT_CLOSE returned while a server to close was in use: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	direct := directConn(t, srv)
	for _, pid := range []int{idlePID, busyPID} {
		// The backend exits a moment after its connection closed.
		alive := true
		for i := 0; alive && i < 50; i++ {
			if i > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			if err := direct.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1", pid).Scan(&alive); err != nil {
				t.Fatal(err)
			}
		}
		if alive {
			t.Fatalf("server %d still connected after RECONNECT and WAIT_CLOSE", pid)
		}
	}
	// The clients go on, on new servers.
	for _, c := range []*pgx.Conn{a, b} {
		if pid := pidOf(c); pid == idlePID || pid == busyPID {
			t.Fatalf("a client got an old server %d after RECONNECT", pid)
		}
	}
}

// TestAdminHazardsOutsideTransactionMode: in record and session mode,
// where no session state is judged, SHOW HAZARDS says so and points at
// pgpoolcheck analyze instead of answering with nothing.
func TestAdminHazardsOutsideTransactionMode(t *testing.T) {
	srv := pgtest.Shared(t)
	tests := []struct {
		mode Mode
		want []string
	}{
		{ModeRecord, []string{"record mode", "pgpoolcheck analyze", "--capture"}},
		{ModeSession, []string{"session mode", "--mode record", "pgpoolcheck analyze"}},
		{ModeTransaction, nil},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			cfg := Config{Mode: tc.mode, AdminUsers: []string{pgtest.SuperUser}, Classifier: stubClassifier{}}
			var tp *testProxy
			if tc.mode == ModeRecord {
				tp, _, _ = startRecording(t, srv, cfg)
			} else {
				tp = startProxy(t, srv, cfg)
			}
			fe, conn := rawLogin(t, tp, map[string]string{"database": AdminDatabase})
			defer conn.Close()
			fe.Send(&pgproto3.Query{String: "SHOW HAZARDS"})
			fe.Flush()
			var notices []string
			for {
				msg, err := fe.Receive()
				if err != nil {
					t.Fatal(err)
				}
				if n, ok := msg.(*pgproto3.NoticeResponse); ok {
					notices = append(notices, n.Message)
				}
				if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
					break
				}
			}
			if tc.want == nil {
				if len(notices) != 0 {
					t.Errorf("notices in transaction mode: %q", notices)
				}
				return
			}
			if len(notices) != 1 {
				t.Fatalf("notices %q, want one", notices)
			}
			for _, w := range tc.want {
				if !strings.Contains(notices[0], w) {
					t.Errorf("notice %q lacks %q", notices[0], w)
				}
			}
		})
	}
}
