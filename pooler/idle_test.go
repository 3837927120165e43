package pooler

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// rawIdleClient logs in to the proxy with a hand-written startup packet,
// runs one simple query and returns the open connection (kept as small as
// a client can be, so the figure below is the pooler's).
func rawIdleClient(tp *testProxy) (net.Conn, error) {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	params := "user\x00" + pgtest.SuperUser + "\x00database\x00" + pgtest.Database + "\x00\x00"
	pkt := make([]byte, 8, 8+len(params))
	binary.BigEndian.PutUint32(pkt, uint32(8+len(params)))
	binary.BigEndian.PutUint32(pkt[4:], 196608)
	pkt = append(pkt, params...)
	q := []byte{'Q', 0, 0, 0, 13, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1', 0}
	r := bufio.NewReaderSize(c, 512)
	for _, out := range [][]byte{pkt, q} {
		if _, err := c.Write(out); err != nil {
			c.Close()
			return nil, err
		}
		for {
			var h [5]byte
			if _, err := r.Read(h[:1]); err != nil {
				c.Close()
				return nil, err
			}
			if _, err := io.ReadFull(r, h[1:]); err != nil {
				c.Close()
				return nil, err
			}
			n := int(binary.BigEndian.Uint32(h[1:])) - 4
			if _, err := r.Discard(n); err != nil {
				c.Close()
				return nil, err
			}
			if h[0] == 'E' {
				c.Close()
				return nil, fmt.Errorf("error from the proxy")
			}
			if h[0] == 'Z' {
				break
			}
		}
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// BenchmarkIdleClientMemory reports the Go heap and stack the process
// holds per idle client (logged in, one query run, then idle), measured
// with runtime.MemStats after two garbage collections, with 3000 clients.
// The client side's own sockets are in the figure too (a few hundred
// bytes each). Run: go test ./pooler -run XXX -bench IdleClientMemory
func BenchmarkIdleClientMemory(b *testing.B) {
	srv := pgtest.Shared(b)
	tp := startProxy(b, srv, Config{PoolSize: 5, MaxClientConn: 10000})
	const n = 3000
	for range b.N {
		runtime.GC()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		conns := make([]net.Conn, 0, n)
		for range n {
			c, err := rawIdleClient(tp)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		// The loops have read what the clients sent: idle clients hold
		// no read buffer (dropIdleReader).
		time.Sleep(500 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if path := os.Getenv("IDLE_HEAP_PROFILE"); path != "" {
			// A heap profile while the clients are idle, for pprof.
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		heap := float64(after.HeapInuse) - float64(before.HeapInuse)
		stack := float64(after.StackInuse) - float64(before.StackInuse)
		b.ReportMetric(heap/n, "heap-B/client")
		b.ReportMetric(stack/n, "stack-B/client")
		b.ReportMetric((heap+stack)/n, "B/client")
		for _, c := range conns {
			c.Close()
		}
		deadline := time.Now().Add(10 * time.Second)
		for tp.clientCount() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestIdleClientWakesUp checks idle clients, one in a transaction and one
// between transactions (which holds no read buffer): both go on working,
// with a message larger than the read buffer.
func TestIdleClientWakesUp(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	big := strings.Repeat("x", 3*clientReadBufSize)
	var got string
	if err := tx.QueryRow(ctx, "SELECT $1::text", big).Scan(&got); err != nil || got != big {
		t.Fatalf("in a transaction after the idle wait: %d bytes, %v", len(got), err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT '"+big+"'").Scan(&got); err != nil || got != big {
		t.Fatalf("between transactions after the idle wait: %d bytes, %v", len(got), err)
	}
}

// TestIdleClientServerLost: a client idle inside a transaction when its
// server dies still gets the error and is cleaned up (no client slot is
// leaked).
func TestIdleClientServerLost(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	direct := directConn(t, srv)
	if _, err := direct.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return tp.clientCount() == 0 }) {
		t.Fatalf("%d clients still counted after their server died", tp.clientCount())
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("the transaction went on after its server died")
	}
}
