package pooler

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// bridgeLoop is a loop with no proxy: only its inbox of bridge events is
// used.
func bridgeLoop(t *testing.T) *evLoop {
	t.Helper()
	l := &evLoop{awake: true}
	if err := l.sys.init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.sys.close)
	return l
}

// takeEvents returns the events posted so far and empties the inbox.
func takeEvents(l *evLoop) []loopEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.ready
	l.ready = nil
	return evs
}

// waitEvent waits until an event with bits ev was posted.
func waitEvent(t *testing.T, l *evLoop, ev uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range takeEvents(l) {
			if e.events&ev != 0 {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no event %#x within 5s", ev)
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (nc, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return nc, peer
}

// bridged returns a bridged rawIO over one end of a TCP connection, owned
// by l (nb), and the other end.
func bridged(t *testing.T, l *evLoop) (*rawIO, net.Conn) {
	t.Helper()
	nc, peer := tcpPair(t)
	r := newRawIO(nc, true)
	fd, err := r.toRaw()
	if err != nil || fd >= 0 {
		t.Fatalf("toRaw of a bridge: %d, %v; want a negative token", fd, err)
	}
	if err := l.add(r, int32(fd)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); peer.Close() })
	return r, peer
}

// The input of a bridge reaches the loop as epoll's would: an event when
// bytes arrive after the loop found nothing, errAgain when nothing is
// there, and the end of the stream as an event of its own once the bytes
// before it are read (one read may take the last bytes and leave the end
// behind them).
func TestBridgeInput(t *testing.T) {
	l := bridgeLoop(t)
	r, peer := bridged(t, l)
	b := make([]byte, 64)
	if _, err := r.Read(b); !errors.Is(err, errAgain) {
		t.Fatalf("read with nothing there: %v, want errAgain", err)
	}
	peer.Write([]byte("hello"))
	waitEvent(t, l, evIn)
	n, err := r.Read(b)
	if err != nil || string(b[:n]) != "hello" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	peer.Write([]byte("bye"))
	peer.Close()
	// Both the bytes and the end are in before the loop reads.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.br.mu.Lock()
		ended := r.br.rerr != nil
		r.br.mu.Unlock()
		if ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bridge did not see the end of the stream")
		}
		time.Sleep(time.Millisecond)
	}
	takeEvents(l)
	if n, err = r.Read(b); err != nil || string(b[:n]) != "bye" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	// A short read does not promise the loop another edge for the end:
	// the bridge posts one.
	waitEvent(t, l, evIn)
	if _, err := r.Read(b); err != io.EOF {
		t.Fatalf("read after the end: %v, want EOF", err)
	}
}

// Output is queued and written by the bridge; a loop that waits for the
// queue to drain (setOut) is told once it has, and a write error drops
// the queue and wakes that loop too.
func TestBridgeOutput(t *testing.T) {
	l := bridgeLoop(t)
	r, peer := bridged(t, l)
	// Loopback's socket buffers grow to several MiB: write until the
	// socket takes no more and the rest waits in the queue.
	msg := make([]byte, 1<<20)
	total := 0
	for r.pending() == 0 {
		if total >= 64<<20 {
			t.Fatal("64 MiB written to a socket nobody reads: nothing pending")
		}
		n, err := r.Write(msg)
		if n != len(msg) || err != nil {
			t.Fatalf("queued write: %d, %v", n, err)
		}
		total += n
		time.Sleep(time.Millisecond)
	}
	l.modify(r, int32(r.fd), true)
	got := make(chan int, 1)
	go func() {
		n, _ := io.ReadFull(peer, make([]byte, total))
		got <- n
	}()
	waitEvent(t, l, evOut)
	if n := <-got; n != total {
		t.Fatalf("peer read %d bytes, want %d", n, total)
	}
	if p := r.pending(); p != 0 {
		t.Fatalf("%d bytes pending after the peer read all", p)
	}
	// The peer goes away: writes fail, the queue is dropped and the
	// waiting loop hears of it.
	peer.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := r.Write(msg); err != nil {
			break
		}
		l.modify(r, int32(r.fd), true)
		if time.Now().After(deadline) {
			t.Fatal("writes to a closed peer never failed")
		}
		time.Sleep(time.Millisecond)
	}
	if p := r.pending(); p != 0 {
		t.Fatalf("%d bytes still pending after a write error", p)
	}
}

// A bridged connection closed with output queued writes it first (the
// FATAL a client gets before it is closed).
func TestBridgeCloseWritesQueue(t *testing.T) {
	l := bridgeLoop(t)
	r, peer := bridged(t, l)
	msg := []byte("FATAL: the last words")
	r.Write(msg)
	r.Close()
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(peer)
	if err != nil || string(b) != string(msg) {
		t.Fatalf("peer read %q, %v; want %q and the end", b, err, msg)
	}
}

// toRuntime stops the goroutines and gives the connection's blocking
// reads back, the bytes read ahead first; toRaw starts them again.
func TestBridgeToRuntimeAndBack(t *testing.T) {
	l := bridgeLoop(t)
	r, peer := bridged(t, l)
	peer.Write([]byte("ahead"))
	waitEvent(t, l, evIn)
	l.del(r, int32(r.fd))
	if err := r.toRuntime(); err != nil {
		t.Fatal(err)
	}
	peer.Write([]byte("+more"))
	b := make([]byte, 64)
	var got []byte
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < len("ahead+more") {
		n, err := r.Read(b)
		if err != nil {
			t.Fatalf("blocking read after toRuntime: %q so far, %v", got, err)
		}
		got = append(got, b[:n]...)
	}
	if string(got) != "ahead+more" {
		t.Fatalf("read %q, want ahead+more", got)
	}
	r.SetReadDeadline(time.Time{})
	fd, err := r.toRaw()
	if err != nil {
		t.Fatal(err)
	}
	l.add(r, int32(fd))
	peer.Write([]byte("again"))
	waitEvent(t, l, evIn)
	if n, err := r.Read(b); err != nil || string(b[:n]) != "again" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
}

// A raw socket that an epoll set refuses is bridged (evLoop.take): what
// its nb writes left over is written first, and it goes on as a bridge.
func TestToBridge(t *testing.T) {
	l := bridgeLoop(t)
	nc, peer := tcpPair(t)
	defer peer.Close()
	r := newRawIO(nc, false)
	defer r.Close()
	if _, err := r.toRaw(); err != nil {
		t.Fatal(err)
	}
	r.pend = []byte("left over")
	fd, err := r.toBridge()
	if err != nil || fd >= 0 || r.br == nil {
		t.Fatalf("toBridge: %d, %v", fd, err)
	}
	l.add(r, int32(fd))
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, len("left over"))
	if _, err := io.ReadFull(peer, b); err != nil || string(b) != "left over" {
		t.Fatalf("peer read %q, %v", b, err)
	}
	peer.Write([]byte("in"))
	waitEvent(t, l, evIn)
	if n, err := r.Read(b); err != nil || string(b[:n]) != "in" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
}
