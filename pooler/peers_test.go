package pooler

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// startPeers starts n poolers with peer ids 1..n that list each other.
func startPeers(t *testing.T, srv *pgtest.Server, n int) []*testProxy {
	t.Helper()
	for range 20 {
		ports := make([]int, n)
		peers := map[int]string{}
		for i := range ports {
			ports[i] = 21000 + rand.IntN(9000)
			peers[i+1] = fmt.Sprintf("127.0.0.1:%d", ports[i])
		}
		var out []*testProxy
		ok := true
		for i, port := range ports {
			cfg := Config{PeerID: i + 1, Peers: peers, Upstream: srv.SocketURL(pgtest.SuperUser), Listen: peers[i+1]}
			tp, err := startProxyAt(t, srv, cfg, port)
			if errors.Is(err, syscall.EADDRINUSE) {
				ok = false
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tp)
		}
		if ok {
			return out
		}
		for _, tp := range out {
			tp.stop(t)
		}
	}
	t.Fatal("no free ports")
	return nil
}

// startProxyAt is startProxy on a given port; it returns the Listen error.
func startProxyAt(t *testing.T, srv *pgtest.Server, cfg Config, port int) (*testProxy, error) {
	t.Helper()
	cfg.Relay = Relay(os.Getenv("POOLER_TEST_RELAY"))
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Listen(); err != nil {
		return nil, err
	}
	tp := &testProxy{Proxy: p, port: port, srv: srv, done: make(chan error, 1)}
	go func() { tp.done <- p.Serve(context.Background()) }()
	t.Cleanup(func() { tp.stop(t) })
	return tp, nil
}

// stop shuts the proxy down (once).
func (tp *testProxy) stop(t *testing.T) {
	tp.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tp.Shutdown(ctx)
		select {
		case <-tp.done:
		case <-time.After(15 * time.Second):
			t.Error("proxy did not stop")
		}
	})
}

// roundRobin is a TCP load balancer in front of addrs: each connection
// goes to the next address that accepts it.
func roundRobin(t *testing.T, addrs []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var next atomic.Uint64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var up net.Conn
				for range addrs {
					addr := addrs[next.Add(1)%uint64(len(addrs))]
					if up, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
						break
					}
				}
				if up == nil {
					return
				}
				defer up.Close()
				go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String()
}

// sendCancel sends a CancelRequest for (pid, secret) to addr and waits
// until the pooler closes the connection (it has taken the request).
func sendCancel(t *testing.T, addr string, pid, secret uint32) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg, _ := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: binary.BigEndian.AppendUint32(nil, secret)}).Encode(nil)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.Copy(io.Discard, c)
}

// TestPeerCancel runs three peered poolers: a query started through one
// is cancelled by a CancelRequest sent to any other; a wrong key, or a
// request already forwarded once, cancels nothing; with one instance
// stopped, the others keep serving through the balancer.
func TestPeerCancel(t *testing.T) {
	srv := pgtest.Shared(t)
	peers := startPeers(t, srv, 3)
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", peers[i].port) }
	ctx := testCtx(t, 120*time.Second)

	connect := func(i int) *pgconn.PgConn {
		c, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgtest.SuperUser, addr(i), pgtest.Database))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	direct := directConn(t, srv)
	c := connect(0)
	pid, secret := c.PID(), binary.BigEndian.Uint32(c.SecretKey())
	if got := int(secret >> peerShift); got != 1 {
		t.Fatalf("the key of a client of peer 1 carries peer %d", got)
	}
	if secret&forwardedBit != 0 {
		t.Fatal("a client's key has the forwarded bit set")
	}

	// sleepCancelled runs a query of up to d on c while cancel runs, and
	// reports whether it was cancelled.
	sleepCancelled := func(d time.Duration, cancel func()) bool {
		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(ctx, fmt.Sprintf("SELECT pg_sleep(%g)", d.Seconds())).ReadAll()
			done <- err
		}()
		// Cancel once the query runs on the server: a cancel that
		// comes before it has nothing to cancel (under load the
		// client's server may take longer than a fixed pause).
		if !waitFor(20*time.Second, func() bool {
			var n int
			err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(%'").Scan(&n)
			return err == nil && n > 0
		}) {
			t.Fatal("the query never ran")
		}
		cancel()
		err := <-done
		if err != nil && sqlState(err) != "57014" {
			t.Fatalf("query: %v", err)
		}
		return err != nil
	}
	for _, via := range []int{1, 2} {
		start := time.Now()
		if !sleepCancelled(30*time.Second, func() { sendCancel(t, addr(via), pid, secret) }) {
			t.Fatalf("a CancelRequest sent to peer %d did not cancel the query of peer 1's client", via+1)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("cancel through peer %d took %v", via+1, d)
		}
	}
	// To the owner itself.
	if !sleepCancelled(30*time.Second, func() { sendCancel(t, addr(0), pid, secret) }) {
		t.Fatal("a CancelRequest sent to the owner did not cancel")
	}
	// A wrong key, a request already forwarded, a key of a peer not
	// listed: nothing is cancelled.
	for name, k := range map[string][2]uint32{
		"wrong secret":      {pid, secret ^ 1},
		"wrong pid":         {pid ^ 1, secret},
		"already forwarded": {pid, secret | forwardedBit},
		"unknown peer":      {pid, 9<<peerShift | secret&peerRandomMax},
	} {
		if sleepCancelled(1500*time.Millisecond, func() { sendCancel(t, addr(2), k[0], k[1]) }) {
			t.Fatalf("%s: the query was cancelled", name)
		}
	}

	// Behind a balancer, with peer 2 stopped: every login still works.
	lb := roundRobin(t, []string{addr(0), addr(1), addr(2)})
	peers[1].stop(t)
	for i := range 6 {
		cc, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgtest.SuperUser, lb, pgtest.Database))
		if err != nil {
			t.Fatalf("login %d through the balancer with a peer down: %v", i, err)
		}
		if _, err := cc.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		cc.Close(ctx)
	}
	// A cancel for peer 2 (down) sent to peer 3 is dropped, and the
	// owner's clients are still cancelled through the survivors.
	sendCancel(t, addr(2), pid, 2<<peerShift|secret&peerRandomMax)
	if !sleepCancelled(30*time.Second, func() { sendCancel(t, addr(2), pid, secret) }) {
		t.Fatal("cancel through peer 3 with peer 2 down did not cancel")
	}
}

// TestPeerConfig checks the peer settings a pooler refuses to start with.
func TestPeerConfig(t *testing.T) {
	base := Config{Upstream: "postgres://u@127.0.0.1:5432/db", Listen: "127.0.0.1:6432"}
	for _, tc := range []struct {
		id    int
		peers map[int]string
		want  string
	}{
		{MaxPeerID + 1, nil, "want 1 to"},
		{-1, nil, "want 1 to"},
		{0, map[int]string{1: "a:1"}, "no peer id"},
		{2, map[int]string{1: "a:1"}, "not in the peer list"},
		{1, map[int]string{1: "a:1", 20000: "b:1"}, "want an id"},
		{1, map[int]string{1: "nohostport"}, "host:port"},
	} {
		cfg := base
		cfg.PeerID, cfg.Peers = tc.id, tc.peers
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("peer %d %v: %v, want %q", tc.id, tc.peers, err, tc.want)
		}
	}
	cfg := base
	cfg.PeerID, cfg.Peers = 1, map[int]string{1: "a:1", 2: "/run/pg/.s.PGSQL.6432"}
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
}
