package pooler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testProxy is a proxy running for one test.
type testProxy struct {
	*Proxy
	port int
	srv  *pgtest.Server
	done chan error
	// stopOnce guards stop (peers_test.go).
	stopOnce sync.Once
}

// startProxy starts a proxy in front of srv (over its unix socket, as
// the superuser unless cfg.Upstream is set) on a port in 21000–29999.
func startProxy(t testing.TB, srv *pgtest.Server, cfg Config) *testProxy {
	t.Helper()
	return startProxyWith(t, srv, cfg, nil)
}

// startProxyWith is startProxy, with before called on the proxy before it
// serves: for a test that changes what the proxy keeps unsynchronized.
func startProxyWith(t testing.TB, srv *pgtest.Server, cfg Config, before func(*Proxy)) *testProxy {
	t.Helper()
	if cfg.Upstream == "" {
		cfg.Upstream = srv.SocketURL(pgtest.SuperUser)
	}
	if cfg.Relay == "" {
		// POOLER_TEST_RELAY=bridged runs the tests with every socket
		// bridged, as on systems without epoll.
		cfg.Relay = Relay(os.Getenv("POOLER_TEST_RELAY"))
	}
	if n, err := strconv.Atoi(os.Getenv("POOLER_TEST_LOOPS")); err == nil && cfg.Loops == 0 {
		// POOLER_TEST_LOOPS=N runs them with N event loops.
		cfg.Loops = n
	}
	// srv may be nil for a proxy in front of a scripted server.
	if cfg.Logger == nil {
		level := slog.LevelWarn
		if os.Getenv("POOLER_TEST_DEBUG") != "" {
			level = slog.LevelDebug
		}
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
	}
	var last error
	for range 20 {
		port := 21000 + rand.IntN(9000)
		cfg.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Listen(); err != nil {
			last = err
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			t.Fatal(err)
		}
		if before != nil {
			before(p)
		}
		tp := &testProxy{Proxy: p, port: port, srv: srv, done: make(chan error, 1)}
		go func() { tp.done <- p.Serve(context.Background()) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p.Shutdown(ctx)
			select {
			case <-tp.done:
			case <-time.After(15 * time.Second):
				t.Error("proxy did not stop")
			}
			if n := p.Snapshot().InvalidMoves; n != 0 {
				t.Errorf("%d client moves refused by the engine's state machine (see the log)", n)
			}
		})
		return tp
	}
	t.Fatalf("no free port: %v", last)
	return nil
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// url is a client connection URL to the proxy.
func (tp *testProxy) url(user, password string) string {
	cred := user
	if password != "" {
		cred += ":" + password
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", cred, tp.port, pgtest.Database)
}

// connect opens a pgx connection through the proxy as the superuser.
func (tp *testProxy) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	return tp.connectParams(t, mode, nil)
}

// connectParams connects a pgx client with extra startup parameters.
func (tp *testProxy) connectParams(t testing.TB, mode pgx.QueryExecMode, params map[string]string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	for k, v := range params {
		cfg.RuntimeParams[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sqlState returns the SQLSTATE of a PostgreSQL error, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

var _ = io.EOF
