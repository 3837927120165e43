package pooler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// fakeServer is a scripted PostgreSQL server for protocol edge cases the
// real one does not produce: it logs anyone in and answers each simple
// Query by its text: "ok" succeeds, "garbage" sends a message with a
// negative length, "hangup" closes the connection, "mute" succeeds and
// the session answers nothing more from then on. A session the client
// ends (Terminate, or its end of the connection closed) runs atEnd, when
// set, before the server closes its end, as a backend exits before its
// socket closes. live counts the sessions, peak the most at once, unheard
// the queries mute sessions did not answer.
type fakeServer struct {
	ln                  net.Listener
	port                int
	atEnd               func()
	live, peak, unheard atomic.Int64
}

func startFakeServer(t *testing.T) *fakeServer { return startFakeServerEnd(t, nil) }

// startFakeServerEnd starts a fake server with atEnd.
func startFakeServerEnd(t *testing.T, atEnd func()) *fakeServer {
	t.Helper()
	for range 20 {
		port := 21000 + rand.IntN(9000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		f := &fakeServer{ln: ln, port: port, atEnd: atEnd}
		t.Cleanup(func() { ln.Close() })
		go f.serve()
		return f
	}
	t.Fatal("no free port")
	return nil
}

func (f *fakeServer) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.session(c)
	}
}

func (f *fakeServer) session(c net.Conn) {
	defer c.Close()
	n := f.live.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	defer f.live.Add(-1)
	be := pgproto3.NewBackend(c, c)
	if _, err := be.ReceiveStartupMessage(); err != nil {
		return
	}
	be.Send(&pgproto3.AuthenticationOk{})
	for _, kv := range [][2]string{{"server_version", "15.0-fake"}, {"client_encoding", "UTF8"}, {"DateStyle", "ISO, MDY"}, {"standard_conforming_strings", "on"}, {"application_name", ""}, {"TimeZone", "UTC"}, {"IntervalStyle", "postgres"}} {
		be.Send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
	}
	be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	be.Flush()
	mute := false
	for {
		msg, err := be.Receive()
		_, terminate := msg.(*pgproto3.Terminate)
		if err != nil || terminate {
			if f.atEnd != nil {
				f.atEnd()
			}
			return
		}
		q, ok := msg.(*pgproto3.Query)
		if !ok {
			continue
		}
		if mute {
			f.unheard.Add(1)
			continue
		}
		switch q.String {
		case "garbage":
			c.Write([]byte{'Z', 0xff, 0xff, 0xff, 0xff})
			time.Sleep(100 * time.Millisecond)
			return
		case "hangup":
			return
		case "mute":
			mute = true
			fallthrough
		default:
			be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 0")})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			be.Flush()
		}
	}
}

// TestServerProtocolFaults: a server that sends a malformed message or
// hangs up mid-query gives its client 08006, and the pool goes on with a
// new server.
func TestServerProtocolFaults(t *testing.T) {
	f := startFakeServer(t)
	tp := startProxy(t, nil, Config{PoolSize: 1, Upstream: fmt.Sprintf("postgres://fake@127.0.0.1:%d/fake?sslmode=disable", f.port)})
	ctx := testCtx(t, 20*time.Second)
	for _, q := range []string{"garbage", "hangup"} {
		c := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
		if _, err := c.Exec(ctx, "ok"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Exec(ctx, q)
		if sqlState(err) != "08006" {
			t.Fatalf("%s: want 08006, got %v", q, err)
		}
		c2 := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
		if _, err := c2.Exec(ctx, "ok"); err != nil {
			t.Fatalf("after %s: %v", q, err)
		}
	}
}

// TestShutdownClosesClientWaitingForItsServer: a client that left while
// attached (session mode) is no longer its loop's, and its server goes back
// once it has answered the clean-up; a server that never answers does not
// keep the pooler from stopping: a shutdown closes both.
func TestShutdownClosesClientWaitingForItsServer(t *testing.T) {
	f := startFakeServer(t)
	tp := startProxy(t, nil, Config{Mode: ModeSession, PoolSize: 1, Upstream: fmt.Sprintf("postgres://fake@127.0.0.1:%d/fake?sslmode=disable", f.port)})
	ctx := testCtx(t, 30*time.Second)
	c := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, "mute"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	// The client has left once the server got its clean-up, which it
	// does not answer.
	for deadline := time.Now().Add(10 * time.Second); f.unheard.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no clean-up reached the server after its client left")
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tp.Shutdown(sctx)
	select {
	case err := <-tp.done:
		tp.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatalf("the proxy did not stop: %d clients left", len(tp.Snapshot().Clients))
	}
	for deadline := time.Now().Add(5 * time.Second); f.live.Load() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d server sessions still open after the shutdown", f.live.Load())
		}
	}
}
