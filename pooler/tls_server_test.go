package pooler

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
)

// A server that speaks TLS is relayed by the event loop like any other:
// clients of several application names share a pool of two, in simple and
// extended protocol, with answers larger than a TLS record and settings
// that follow them, and no client leaves its loop for a goroutine.
func TestServerTLSOnLoop(t *testing.T) {
	srv := pgtest.New(t)
	ctx := testCtx(t, 120*time.Second)
	pk := serveTLS(t, ctx, srv)
	tp := startProxy(t, srv, Config{
		Relay:    RelayLoop,
		PoolSize: 2,
		Upstream: fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=verify-full&sslrootcert=%s",
			pgtest.SuperUser, srv.Port, pgtest.Database, pk.caFile),
		Classifier: sessionstate.New(),
	})
	big := strings.Repeat("x", 40000) // three TLS records, two read buffers
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 6 {
		mode := pgx.QueryExecModeSimpleProtocol
		if i%2 == 1 {
			mode = pgx.QueryExecModeCacheStatement
		}
		c := tp.connectParams(t, mode, map[string]string{"application_name": fmt.Sprintf("app%d", i%3)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 40 {
				var ssl bool
				var app, mem string
				var n int
				err := c.QueryRow(ctx, "SELECT ssl, current_setting('application_name'), current_setting('work_mem'), length(repeat('x', $1::int)) FROM pg_stat_ssl WHERE pid = pg_backend_pid()", len(big)/2).Scan(&ssl, &app, &mem, &n)
				if err != nil {
					errs <- fmt.Errorf("client %d, query %d: %v", i, j, err)
					return
				}
				wantMem := "4MB"
				if j > 0 && i == 0 {
					wantMem = "1234kB" // set below, follows client 0
				}
				if !ssl || app != fmt.Sprintf("app%d", i%3) || n != len(big)/2 || mem != wantMem {
					errs <- fmt.Errorf("client %d, query %d: ssl %v, application_name %q, work_mem %q, length %d", i, j, ssl, app, mem, n)
					return
				}
				if j == 0 && i == 0 {
					if _, err := c.Exec(ctx, "SET work_mem = '1234kB'"); err != nil {
						errs <- err
						return
					}
				}
				var s string
				if err := c.QueryRow(ctx, "SELECT $1::text", big).Scan(&s); err != nil || s != big {
					errs <- fmt.Errorf("client %d: echo of %d bytes: %d bytes, %v", i, len(big), len(s), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Between transactions every client is on the loop.
	deadline := time.Now().Add(5 * time.Second)
	for ClientsOnLoops(tp.Proxy) != 6 {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients on the event loop, want 6", ClientsOnLoops(tp.Proxy))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that uses TLS is relayed by the event loop too: between
// transactions it is on the loop, whose reads of its tls.Conn go on until
// nothing is left (one read is one record), with queries and answers
// larger than a record, pipelines of many small messages, and a quiet
// gap; a server behind TLS as well.
func TestClientTLSOnLoop(t *testing.T) {
	srv := pgtest.New(t)
	ctx := testCtx(t, 120*time.Second)
	spk := serveTLS(t, ctx, srv)
	pk := newTestPKI(t, "loop")
	tp := startProxy(t, srv, Config{
		Relay: RelayLoop, PoolSize: 2, ClientTLSMode: TLSRequire, ClientTLS: pk.config(),
		Upstream: fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=verify-full&sslrootcert=%s",
			pgtest.SuperUser, srv.Port, pgtest.Database, spk.caFile),
		Classifier: sessionstate.New(),
	})
	var clients []*pgx.Conn
	for i := range 4 {
		c, err := connectURL(ctx, t, tp.tlsURL(fmt.Sprintf("sslmode=verify-full&sslrootcert=%s&application_name=tls%d", pk.caFile, i%2)))
		if err != nil {
			t.Fatal(err)
		}
		if !usesTLS(c) {
			t.Fatal("the client's connection is not TLS")
		}
		clients = append(clients, c)
	}
	big := strings.Repeat("y", 70000)
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 30 {
				var s string
				if err := c.QueryRow(ctx, "SELECT $1::text || current_setting('application_name')", big).Scan(&s); err != nil || s != big+fmt.Sprintf("tls%d", i%2) {
					errs <- fmt.Errorf("client %d, query %d: %d bytes, %v", i, j, len(s), err)
					return
				}
				b := &pgx.Batch{}
				for k := range 50 {
					b.Queue("SELECT $1::int", k)
				}
				br := c.SendBatch(ctx, b)
				for k := range 50 {
					var got int
					if err := br.QueryRow().Scan(&got); err != nil || got != k {
						errs <- fmt.Errorf("client %d, batch %d, query %d: %d, %v", i, j, k, got, err)
						br.Close()
						return
					}
				}
				if err := br.Close(); err != nil {
					errs <- err
					return
				}
				if j%10 == 9 {
					time.Sleep(1200 * time.Millisecond) // longer than a janitor tick
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ClientsOnLoops(tp.Proxy) != len(clients) {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients on the event loop, want %d", ClientsOnLoops(tp.Proxy), len(clients))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
