package pooler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// directConn connects to the server itself, bypassing the proxy.
func directConn(t *testing.T, srv *pgtest.Server) *pgx.Conn {
	t.Helper()
	ctx := testCtx(t, 20*time.Second)
	c, err := pgx.Connect(ctx, srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// activeQueries counts backends running a query with the given text.
func activeQueries(t *testing.T, direct *pgx.Conn, query string) int {
	t.Helper()
	var n int
	err := direct.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'", query).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCancel(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	c := tp.connect(t, pgx.QueryExecModeExec)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT pg_sleep(10)")
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("pg_sleep(10) was not cancelled")
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code != "57014" {
		t.Fatalf("want query_canceled, got %v", err)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("cancel took %v", elapsed)
	}
	// pgx closes a connection whose context expired mid-query; a new client
	// must work, and a direct cancel of the running query is tested below.
	c2 := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := c2.Exec(testCtx(t, 10*time.Second), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// TestCancelRequestKeepsClient sends a CancelRequest with the pooler's key
// and checks the query ends with 57014 and the same client goes on.
func TestCancelRequestKeepsClient(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	c := tp.connect(t, pgx.QueryExecModeExec)
	ctx := testCtx(t, 30*time.Second)
	errc := make(chan error, 1)
	start := time.Now()
	go func() { _, err := c.Exec(ctx, "SELECT pg_sleep(10)"); errc <- err }()
	direct := directConn(t, srv)
	if !waitFor(5*time.Second, func() bool { return activeQueries(t, direct, "SELECT pg_sleep(10)") == 1 }) {
		t.Fatal("query did not start")
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.PgConn().CancelRequest(cctx); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if sqlState(err) != "57014" {
		t.Fatalf("want 57014 query_canceled, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("next query after cancel: %d, %v", n, err)
	}
	// A late cancel, with no server attached, is dropped: nothing breaks.
	if err := c.PgConn().CancelRequest(cctx); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT 8").Scan(&n); err != nil || n != 8 {
		t.Fatalf("query after a late cancel: %d, %v", n, err)
	}
}

func TestClientVanishesMidTransaction(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	setup := directConn(t, srv)
	if _, err := setup.Exec(ctx, "DROP TABLE IF EXISTS vanish; CREATE TABLE vanish (v int)"); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		a := tp.connect(t, mode)
		if _, err := a.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Exec(ctx, "INSERT INTO vanish VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		a.PgConn().Conn().Close() // gone without Terminate

		b := tp.connect(t, mode)
		var n int
		if err := b.QueryRow(ctx, "SELECT count(*) FROM vanish").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("%v: the vanished client's insert is visible (%d rows)", mode, n)
		}
		if st := b.PgConn().TxStatus(); st != 'I' {
			t.Fatalf("%v: next client is inside a transaction (status %q)", mode, st)
		}
		// A's transaction had an xid (it inserted); B's statement has none.
		var xid *int64
		if err := b.QueryRow(ctx, "SELECT txid_current_if_assigned()").Scan(&xid); err != nil {
			t.Fatal(err)
		}
		if xid != nil {
			t.Fatalf("%v: next client's statement ran inside an older transaction", mode)
		}
	}
	var n int
	setup.QueryRow(ctx, "SELECT count(*) FROM vanish").Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows committed", n)
	}
}

func TestClientVanishesMidQuery(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	direct := directConn(t, srv)
	a := tp.connect(t, pgx.QueryExecModeExec)
	go a.Exec(ctx, "SELECT pg_sleep(30)")
	if !waitFor(5*time.Second, func() bool { return activeQueries(t, direct, "SELECT pg_sleep(30)") == 1 }) {
		t.Fatal("query did not start")
	}
	a.PgConn().Conn().Close()
	if !waitFor(3*time.Second, func() bool { return activeQueries(t, direct, "SELECT pg_sleep(30)") == 0 }) {
		t.Fatal("the vanished client's query still runs on the server")
	}
	b := tp.connect(t, pgx.QueryExecModeExec)
	var n int
	if err := b.QueryRow(ctx, "SELECT 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("next client on the single slot: %d, %v", n, err)
	}
}

func TestServerTerminated(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	direct := directConn(t, srv)
	a := tp.connect(t, pgx.QueryExecModeExec)
	errc := make(chan error, 1)
	go func() { _, err := a.Exec(ctx, "SELECT pg_sleep(20)"); errc <- err }()
	if !waitFor(5*time.Second, func() bool { return activeQueries(t, direct, "SELECT pg_sleep(20)") == 1 }) {
		t.Fatal("query did not start")
	}
	if _, err := direct.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(20)'"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("no error for a terminated server")
		}
		if c := sqlState(err); c != "57P01" && c != "08006" {
			t.Logf("client error: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client got no error after its server was terminated")
	}
	// The pool recovers: a new client works, on a new server.
	b := tp.connect(t, pgx.QueryExecModeExec)
	var n int
	if err := b.QueryRow(ctx, "SELECT 6").Scan(&n); err != nil || n != 6 {
		t.Fatalf("after terminate: %d, %v", n, err)
	}
	// An idle pooled server that gets terminated is not handed out.
	var pid int
	b.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid)
	direct.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
	time.Sleep(100 * time.Millisecond)
	if err := b.QueryRow(ctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after an idle server was terminated: %d, %v", n, err)
	}
}

func TestServerRestart(t *testing.T) {
	srv := pgtest.New(t)
	tp := startProxy(t, srv, Config{PoolSize: 3})
	ctx := testCtx(t, 60*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	for range 3 {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	srv.Halt()
	down := time.Now()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	t.Logf("server down for %v", up.Sub(down))
	// New transactions, from new clients, succeed within 2s of the server
	// accepting connections again.
	var ok time.Time
	for time.Since(up) < 10*time.Second {
		cfg, _ := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		cn, err := pgx.ConnectConfig(cctx, cfg)
		if err == nil {
			_, err = cn.Exec(cctx, "SELECT 1")
			cn.Close(ctx)
		}
		cancel()
		if err == nil {
			ok = time.Now()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok.IsZero() {
		t.Fatal("no transaction succeeded within 10s of the restart")
	}
	if d := ok.Sub(up); d > 2*time.Second {
		t.Fatalf("first transaction after restart took %v (want ≤ 2s)", d)
	}
}

// TestUpstreamDown: while PostgreSQL is down a client gets FATAL with the
// reason at once (not after query_wait_timeout), the log says so once,
// shutdown does not wait for retries, and once the server is back a new
// client is served within the retry interval, logged once.
func TestUpstreamDown(t *testing.T) {
	srv := pgtest.New(t)
	var log lockedBuffer
	tp := startProxy(t, srv, Config{PoolSize: 2, ServerLoginRetry: time.Second,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	ctx := testCtx(t, 60*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	srv.Halt()
	time.Sleep(100 * time.Millisecond) // the idle server is seen dead (aliveCheckAfter)
	for i := range 5 {
		start := time.Now()
		// The login needs no server (the pool knows the server's
		// parameters); the first query does.
		cn, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
		if err == nil {
			_, err = cn.Exec(ctx, "SELECT 1")
			cn.Close(ctx)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Severity != "FATAL" || !strings.Contains(pgErr.Message, "(server down)") {
			t.Fatalf("client %d while the server is down: %v, want FATAL … (server down)", i, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("client %d waited %v for its error", i, d)
		}
	}
	if n := strings.Count(log.String(), `msg="server down`); n != 1 {
		t.Errorf("%d 'server down' log lines for one outage, want 1:\n%s", n, log.String())
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	for {
		cn, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
		if err == nil {
			_, err = cn.Exec(ctx, "SELECT 1")
			cn.Close(ctx)
		}
		if err == nil {
			break
		}
		if time.Since(up) > 5*time.Second {
			t.Fatalf("no client served within 5s of the server's return: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := strings.Count(log.String(), `msg="server up`); n != 1 {
		t.Errorf("%d 'server up' log lines, want 1", n)
	}
	srv.Halt()
	down := time.Now()
	if cn, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, "")); err == nil {
		if _, err := cn.Exec(ctx, "SELECT 1"); err == nil {
			t.Fatal("a query ran with the server down again")
		}
	}
	// The idle server's end (its FATAL, then the end of its stream)
	// came while no client had it: the client that gets it next hears
	// of it at once.
	if d := time.Since(down); d > 5*time.Second {
		t.Errorf("the query with the server down again failed after %v", d)
	}
	start := time.Now()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tp.Shutdown(sctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("shutdown with the server down took %v", d)
	}
}

// TestServerLostWhileClientSends ends a client's server while the client
// keeps sending queries: the loop may hold the client's next query just
// as it finds the server lost and closes the client. That client must not be given a new server (its state machine
// would refuse the moves from closing to waiting and attached, which the
// test's proxy counts as a failure), and the next client is served.
func TestServerLostWhileClientSends(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, mode := range []Mode{ModeSession, ModeTransaction} {
		t.Run(string(mode), func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 2, Mode: mode})
			query := func(sql string) []byte {
				b, _ := (&pgproto3.Query{String: sql}).Encode(nil)
				return b
			}
			kill := query("SELECT pg_terminate_backend(pg_backend_pid())")
			one := query("SELECT 1")
			for range 30 {
				_, conn := rawLogin(t, tp, nil)
				var burst []byte
				burst = append(burst, kill...)
				for range 200 {
					burst = append(burst, one...)
				}
				// Write until the pooler closes the client; what it
				// answers is drained and not looked at.
				go io.Copy(io.Discard, conn)
				for range 50 {
					if _, err := conn.Write(burst); err != nil {
						break
					}
				}
				conn.Close()
			}
			if n := tp.Snapshot().InvalidMoves; n != 0 {
				t.Fatalf("%d client moves refused by the state machine", n)
			}
			ctx := testCtx(t, 10*time.Second)
			c := tp.connect(t, pgx.QueryExecModeExec)
			var n int
			if err := c.QueryRow(ctx, "SELECT 8").Scan(&n); err != nil || n != 8 {
				t.Fatalf("after the lost servers: %d, %v", n, err)
			}
		})
	}
}

// TestReleaseWaitsForCancel: a server whose client's cancel request is
// still on its way to PostgreSQL does not go to another client until
// PostgreSQL has taken it (a late cancel would end the next client's
// query). The request in flight is simulated (cancelStarted); the server
// is the pool's only one.
func TestReleaseWaitsForCancel(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var s *serverConn
	for _, v := range tp.clientViews() {
		if v.srv != nil {
			s = v.srv
		}
	}
	if s == nil {
		t.Fatal("no client holds a server inside its transaction")
	}
	s.cancelStarted()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b := tp.connect(t, pgx.QueryExecModeExec)
	got := make(chan error, 1)
	go func() { _, err := b.Exec(ctx, "SELECT 1"); got <- err }()
	select {
	case err := <-got:
		t.Fatalf("the next client got the server while a cancel for it was under way (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	s.cancelDone()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not come back once the cancel was taken")
	}
}
