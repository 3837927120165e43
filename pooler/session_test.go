package pooler

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestSessionMode: a client keeps one server for its session, session
// state stays with it, and the next client of that server gets it reset.
func TestSessionMode(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, mode := range []Mode{ModeSession, ModeRecord} {
		t.Run(string(mode), func(t *testing.T) {
			// The wait limit also bounds the first client's server login,
			// which took over 500 ms on a loaded machine.
			cfg := Config{PoolSize: 1, Mode: mode, QueryWaitTimeout: 3 * time.Second}
			if mode == ModeRecord {
				w := capture.NewWriter(io.Discard, capture.Header{}, capture.Options{})
				t.Cleanup(func() { w.Close() })
				cfg.Capture = w
			}
			tp := startProxy(t, srv, cfg)
			ctx := testCtx(t, 30*time.Second)
			a := tp.connect(t, pgx.QueryExecModeExec)
			var pid1, pid2 int
			a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid1)
			if _, err := a.Exec(ctx, "SET work_mem = '77MB'"); err != nil {
				t.Fatal(err)
			}
			a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid2)
			if pid1 != pid2 {
				t.Fatalf("session moved from %d to %d", pid1, pid2)
			}
			var wm string
			a.QueryRow(ctx, "SHOW work_mem").Scan(&wm)
			if wm != "77MB" {
				t.Fatalf("work_mem = %s", wm)
			}
			// The pool of 1 is held: a second client waits for its server
			// at login (it is told the server's real process ID) and
			// times out.
			if b, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, "")); sqlState(err) != "08P01" {
				if err == nil {
					b.Close(ctx)
				}
				t.Fatalf("second client while the session holds the server: %v", err)
			}
			a.Close(ctx)
			c := tp.connect(t, pgx.QueryExecModeExec)
			var pid3 int
			c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid3)
			c.QueryRow(ctx, "SHOW work_mem").Scan(&wm)
			if pid3 != pid1 {
				t.Logf("next client on a new server (%d, was %d)", pid3, pid1)
			}
			if wm == "77MB" {
				t.Fatal("the previous session's SET leaked to the next client")
			}
		})
	}
}

// TestClientParameters: each client's startup parameters follow it to
// whichever server serves it, and a SET of a tracked parameter does too.
func TestClientParameters(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	open := func(app, tz string) *pgx.Conn {
		cfg, err := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
		cfg.RuntimeParams["application_name"] = app
		cfg.RuntimeParams["TimeZone"] = tz
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		if got := c.PgConn().ParameterStatus("application_name"); got != app {
			t.Errorf("welcome application_name = %q, want %q", got, app)
		}
		return c
	}
	a := open("client-a", "Asia/Tokyo")
	b := open("client-b", "America/New_York")
	// BackendKeyData is the pooler's: unique per client, not a backend's.
	var backend uint32
	a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend)
	if a.PgConn().PID() == b.PgConn().PID() || a.PgConn().PID() == backend || b.PgConn().PID() == backend {
		t.Errorf("cancel keys: a %d, b %d, server backend %d", a.PgConn().PID(), b.PgConn().PID(), backend)
	}
	check := func(c *pgx.Conn, app, tz string) {
		t.Helper()
		var gotApp, gotTZ string
		if err := c.QueryRow(ctx, "SELECT current_setting('application_name'), current_setting('TimeZone')").Scan(&gotApp, &gotTZ); err != nil {
			t.Fatal(err)
		}
		if gotApp != app || gotTZ != tz {
			t.Fatalf("got (%s, %s), want (%s, %s)", gotApp, gotTZ, app, tz)
		}
	}
	for range 3 {
		check(a, "client-a", "Asia/Tokyo")
		check(b, "client-b", "America/New_York")
	}
	// A SET of a tracked parameter is kept for the client (varcache).
	if _, err := a.Exec(ctx, "SET application_name = 'renamed-a'"); err != nil {
		t.Fatal(err)
	}
	if got := a.PgConn().ParameterStatus("application_name"); got != "renamed-a" {
		t.Errorf("ParameterStatus after SET = %q", got)
	}
	check(b, "client-b", "America/New_York")
	check(a, "renamed-a", "Asia/Tokyo")
	// Welcome values come from the real server.
	for _, k := range []string{"server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle", "integer_datetimes", "standard_conforming_strings"} {
		if b.PgConn().ParameterStatus(k) == "" {
			t.Errorf("no ParameterStatus %s at login", k)
		}
	}
}

// TestGracefulShutdown: an open transaction may finish, idle clients are
// told the pooler is going, and Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2, ShutdownTimeout: 5 * time.Second})
	ctx := testCtx(t, 30*time.Second)
	inTx := tp.connect(t, pgx.QueryExecModeExec)
	idle := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := idle.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	tx, err := inTx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shut := make(chan struct{})
	go func() { tp.Shutdown(context.Background()); close(shut) }()
	time.Sleep(200 * time.Millisecond)
	if _, err := tx.Exec(ctx, "SELECT 2"); err != nil {
		t.Fatalf("open transaction during shutdown: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit during shutdown: %v", err)
	}
	select {
	case <-shut:
	case <-time.After(4 * time.Second):
		t.Fatal("shutdown did not finish once the transaction ended")
	}
	if err := <-tp.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	tp.done <- nil // for the cleanup
	if _, err := idle.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("idle client still works after shutdown")
	}
	if _, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, "")); err == nil {
		t.Fatal("new client accepted after shutdown")
	}
}

// TestIdleTimeoutAndLifetime: idle servers are closed after the idle
// timeout; a server past its lifetime finishes its transaction and is
// retired at release.
func TestIdleTimeoutAndLifetime(t *testing.T) {
	srv := pgtest.Shared(t)
	t.Run("idle", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 2, ServerIdleTimeout: 500 * time.Millisecond})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec)
		c.Exec(ctx, "SELECT 1")
		if tp.poolOpen() != 1 {
			t.Fatalf("open = %d", tp.poolOpen())
		}
		if !waitFor(5*time.Second, func() bool { return tp.poolOpen() == 0 }) {
			t.Fatal("idle server not closed")
		}
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("lifetime", func(t *testing.T) {
		tp := startProxy(t, srv, Config{PoolSize: 1, ServerLifetime: 300 * time.Millisecond})
		ctx := testCtx(t, 30*time.Second)
		c := tp.connect(t, pgx.QueryExecModeExec)
		tx, _ := c.Begin(ctx)
		var p1, p2, p3 int
		tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&p1)
		time.Sleep(600 * time.Millisecond)
		tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&p2)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if p1 != p2 {
			t.Fatal("server retired mid-transaction")
		}
		c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&p3)
		if p3 == p1 {
			t.Fatal("server past its lifetime was reused")
		}
	})
}

// TestBadClientSetting: a startup parameter the server rejects reaches the
// client as the server's error when it is first applied.
func TestBadClientSetting(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 20*time.Second)
	good := tp.connect(t, pgx.QueryExecModeExec) // the pool's first server has the defaults
	if _, err := good.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	cfg, _ := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.RuntimeParams["TimeZone"] = "Not/AZone"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		_, err = c.Exec(ctx, "SELECT 1")
		c.Close(ctx)
	}
	if sqlState(err) != "22023" {
		t.Fatalf("want the server's 22023 invalid_parameter_value, got %v", err)
	}
	if _, err := good.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("other client after a failed setting: %v", err)
	}
}

// TestStartupOptions: in session mode the options startup parameter
// (PGOPTIONS) reaches the client's server as the settings it names; in
// transaction mode it is refused with a clear error.
func TestStartupOptions(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 20*time.Second)
	for _, mode := range []Mode{ModeSession, ModeTransaction} {
		t.Run(string(mode), func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 2, Mode: mode})
			cfg, _ := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
			cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
			cfg.RuntimeParams["options"] = `-c statement_timeout=4321 --lock-timeout=1234 -c TimeZone=Asia/Tokyo -capplication_name=with\ space`
			c, err := pgx.ConnectConfig(ctx, cfg)
			if mode == ModeTransaction {
				if err == nil || !strings.Contains(err.Error(), "unsupported startup parameter: options") {
					t.Fatalf("want options refused in transaction mode, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			for setting, want := range map[string]string{"statement_timeout": "4321ms", "lock_timeout": "1234ms", "TimeZone": "Asia/Tokyo", "application_name": "with space"} {
				var got string
				if err := c.QueryRow(ctx, "SHOW "+setting).Scan(&got); err != nil || got != want {
					t.Errorf("SHOW %s = %q, %v; want %q", setting, got, err, want)
				}
			}
			if got := c.PgConn().ParameterStatus("TimeZone"); got != "Asia/Tokyo" {
				t.Errorf("ParameterStatus TimeZone = %q", got)
			}
		})
	}
}

// TestParseStartupOptions: the settings of the options startup parameter
// that the pooler carries, and the ones it refuses (other switches, names
// it does not take as run-time parameters).
func TestParseStartupOptions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []pgparams.Setting
		err  bool
	}{
		{"", nil, false},
		{"-c a=1", []pgparams.Setting{{Name: "a", Value: "1"}}, false},
		{"  -cb=2\t--c-d=3 ", []pgparams.Setting{{Name: "b", Value: "2"}, {Name: "c_d", Value: "3"}}, false},
		{`-c search_path=a\ b`, []pgparams.Setting{{Name: "search_path", Value: "a b"}}, false},
		{"-c x=", []pgparams.Setting{{Name: "x", Value: ""}}, false},
		{"-c", nil, true},
		{"-B 100", nil, true},
		{"-c novalue", nil, true},
		{"-c =1", nil, true},
		{"-c options=x", nil, true},
		{"-c a;b=1", nil, true},
	} {
		got, err := pgparams.Settings(tc.in, validParamName)
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("pgparams.Settings(%q, validParamName) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestShutdownWithWaiter: a client still waiting for a server when the
// shutdown timeout passes gets an error and the pooler stops (the pool's
// closing once recursed for ever on such a waiter's goroutine).
func TestShutdownWithWaiter(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, mode := range []Mode{ModeSession, ModeTransaction} {
		t.Run(string(mode), func(t *testing.T) {
			tp := startProxy(t, srv, Config{Mode: mode, PoolSize: 1, ShutdownTimeout: 300 * time.Millisecond})
			ctx := testCtx(t, 30*time.Second)
			holder := tp.connect(t, pgx.QueryExecModeExec)
			tx, err := holder.Begin(ctx) // holds the only server
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			// The waiter connects and queries on a goroutine: in session
			// mode it already waits for its server at login.
			res := make(chan error, 1)
			go func() {
				waiting, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
				if err == nil {
					defer waiting.Close(context.Background())
					_, err = waiting.Exec(ctx, "SELECT 2")
				}
				res <- err
			}()
			if !waitFor(5*time.Second, func() bool { return tp.poolWaiting() == 1 }) {
				t.Fatal("second client not waiting for a server")
			}
			shut := make(chan struct{})
			go func() { tp.Shutdown(context.Background()); close(shut) }()
			select {
			case <-shut:
			case <-time.After(10 * time.Second):
				t.Fatal("shutdown did not finish")
			}
			select {
			case err := <-res:
				if err == nil {
					t.Fatal("waiting client got an answer from a closed pooler")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("waiting client still waits after shutdown")
			}
		})
	}
}

// TestSessionModeRealPID: in session mode the client is told its server's
// real process ID, so pg_backend_pid() agrees, pg_terminate_backend of it
// ends that client's server, and a cancel still reaches the right query.
func TestSessionModeRealPID(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{Mode: ModeSession, PoolSize: 3})
	ctx := testCtx(t, 30*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	var pid uint32
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if got := c.PgConn().PID(); got != pid {
		t.Fatalf("BackendKeyData PID %d, pg_backend_pid() %d", got, pid)
	}
	// A cancel with the key the client got cancels its query.
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := c.Exec(qctx, "SELECT pg_sleep(10)")
	cancel()
	if err == nil {
		t.Fatal("pg_sleep(10) was not cancelled")
	}
	c2 := tp.connect(t, pgx.QueryExecModeExec)
	var pid2 uint32
	if err := c2.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid2); err != nil || pid2 != c2.PgConn().PID() {
		t.Fatalf("second client: %d vs %d, %v", pid2, c2.PgConn().PID(), err)
	}
	direct := directConn(t, srv)
	var ok bool
	if err := direct.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int(pid2)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid2, ok, err)
	}
	if _, err := c2.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("the terminated client's query ran")
	}
}

// TestSessionModeLeaveInTransaction: a session-mode client that leaves
// inside a transaction takes its server with it, as its backend would
// end without the pooler; one that leaves idle gives it back. Pool of 1.
func TestSessionModeLeaveInTransaction(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{Mode: ModeSession, PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	pidOf := func(c *pgx.Conn) uint32 {
		var pid uint32
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	a := tp.connect(t, pgx.QueryExecModeExec)
	pa := pidOf(a)
	a.Close(ctx)
	b := tp.connect(t, pgx.QueryExecModeExec)
	pb := pidOf(b)
	if pb != pa {
		t.Fatalf("after an idle client left, the next one got server %d, not %d (reused)", pb, pa)
	}
	if _, err := b.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	b.Close(ctx)
	c := tp.connect(t, pgx.QueryExecModeExec)
	if pc := pidOf(c); pc == pb {
		t.Fatalf("a client that left inside a transaction left its server %d to the next", pb)
	}
}
