package pooler

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// slowLoginConn is a server connection whose first write (pgconn's
// startup message) returns only after a pause, as a write does when its
// goroutine is not scheduled for a while on a loaded machine. pgconn
// starts its background reader when a write takes over 15 ms; that
// reader reads the server's login answer during the pause and is then
// left blocked in a read of the socket.
type slowLoginConn struct {
	net.Conn
	pause  time.Duration
	writes atomic.Int32
}

func (c *slowLoginConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if c.writes.Add(1) == 1 {
		time.Sleep(c.pause)
	}
	return n, err
}

// SyscallConn keeps the socket usable by the relay's raw reads and writes.
func (c *slowLoginConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// TestSlowServerLogin: a server connection whose login write was slow must
// still deliver every answer to the pooler. Before the pooler synchronised
// pgconn before taking the socket over, pgconn's background reader, still
// blocked in a read, took the server's first answer and the client waited
// for ever (seen once in record mode at 1000 clients).
func TestSlowServerLogin(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, mode := range []Mode{ModeSession, ModeRecord, ModeTransaction} {
		t.Run(string(mode), func(t *testing.T) {
			var slow atomic.Int32
			// A pool of 2 for 3 clients one after another: new servers
			// and a reused one.
			cfg := Config{Mode: mode, PoolSize: 2}
			if mode == ModeRecord {
				w := capture.NewWriter(io.Discard, capture.Header{}, capture.Options{})
				t.Cleanup(func() { w.Close() })
				cfg.Capture = w
			}
			cfg.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				nc, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				slow.Add(1)
				return &slowLoginConn{Conn: nc, pause: 150 * time.Millisecond}, nil
			}
			tp := startProxy(t, srv, cfg)
			for i := range 3 {
				c := tp.connect(t, pgx.QueryExecModeExec)
				ctx := testCtx(t, 5*time.Second)
				var got int
				if err := c.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&got); err != nil {
					t.Fatalf("client %d: %v (the server's answer went astray)", i, err)
				}
				if got != i+1 {
					t.Fatalf("client %d: got %d, want %d", i, got, i+1)
				}
				c.Close(ctx) // session mode: the server goes to the next client
			}
			if slow.Load() == 0 {
				t.Fatal("no server was dialled through the slow connection")
			}
		})
	}
}
