package sessionstate_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// syncBuffer is a log the proxy writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *syncBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestListenNotifiedDuringStateRead: under preserve a client's LISTEN pins
// it, and the pooler then reads the server's state (and, on a fresh proxy,
// the catalog) on that server while the client is idle. A NOTIFY that
// commits meanwhile reaches the listening backend as a NotificationResponse
// before the ReadyForQuery of the pooler's query: the pooler must pass it
// on, not take it for part of its own answer. Each round starts a fresh
// proxy and NOTIFYs from other clients at once, so that the NOTIFYs race
// the pooler's reads; before the fix about one round in fifteen lost all
// five notifications under load.
func TestListenNotifiedDuringStateRead(t *testing.T) {
	srv := pgtest.Shared(t)
	for round := range 30 {
		var log syncBuffer
		_, port := proxytest.Start(t, pooler.Config{
			Upstream: srv.SocketURL(pgtest.SuperUser), PoolSize: 2,
			Classifier: sessionstate.New(), OnSessionState: pooler.PolicyPreserve,
			Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		}, 10*time.Second)
		url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, port, pgtest.Database)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		a, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Exec(ctx, "LISTEN jobs"); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			o, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.Exec(ctx, "NOTIFY jobs, 'hello'"); err != nil {
				t.Fatal(err)
			}
			o.Close(ctx)
		}
		for i := range 5 {
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			n, err := a.WaitForNotification(wctx)
			wcancel()
			if err != nil {
				t.Fatalf("round %d: notification %d of 5 never came: %v\npooler log:\n%s", round, i+1, err, log.String())
			}
			if n.Channel != "jobs" || n.Payload != "hello" {
				t.Fatalf("round %d: notification %+v", round, n)
			}
		}
		a.Close(ctx)
		cancel()
	}
}
