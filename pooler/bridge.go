package pooler

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A bridge lets an event loop own a socket it cannot watch itself: a
// net.Conn without a descriptor of its own (a test's dialer), or any
// socket where the loop has no epoll set (loopPoller). While a loop owns
// the socket (nb), a reader goroutine reads ahead into in (at most
// bridgeAhead bytes) and a writer goroutine writes out; the loop reads
// and writes the buffers without waiting and learns of new input, and of
// output written, from events the goroutines post to it (evLoop.notify),
// as epoll would tell it: input is announced when it arrives after the
// loop found nothing, output once everything is written, when asked
// (setOut). The socket is known to the loop by a negative token in place
// of a descriptor.
type bridge struct {
	nc    net.Conn
	token int32

	mu   sync.Mutex
	cond sync.Cond
	// in[off:] is read and not yet taken; rerr ends it.
	in   []byte
	off  int
	rerr error
	// out is to be written; sending counts what the writer has taken and
	// not finished; werr is the first write error.
	out     []byte
	sending int
	werr    error
	// loop is the loop that watches the socket (nil: none), out whether it
	// waits for the output to be written; told: an input event is on its
	// way and the loop has not read since.
	loop    *evLoop
	wantOut bool
	told    bool
	// running: the goroutines run (nb); stopping asks them to end;
	// workers counts those still running.
	running, stopping bool
	workers           int
	closed            bool
}

// bridgeAhead bounds what a bridge reads ahead of the loop: past it, the
// socket is left to fill, and its peer to wait, as with a socket the loop
// reads itself.
const bridgeAhead = 64 << 10

// bridgeTokens hands out the bridges' tokens (never reused).
var bridgeTokens atomic.Int32

func newBridge(nc net.Conn) *bridge {
	b := &bridge{nc: nc, token: bridgeTokens.Add(-1)}
	if b.token >= 0 {
		b.token = bridgeTokens.Add(-1) // wrapped: after 2^31 sockets
	}
	b.cond.L = &b.mu
	return b
}

// newBridgedIO returns a rawIO that moves nc's bytes through a bridge.
func newBridgedIO(nc net.Conn) *rawIO {
	return &rawIO{br: newBridge(nc), fd: -1, raddr: nc.RemoteAddr(), laddr: nc.LocalAddr()}
}

// start runs the goroutines (toRaw); the caller holds mu.
func (b *bridge) start() {
	if b.running {
		return
	}
	b.running = true
	b.workers = 2
	go b.reader()
	go b.writer()
}

// stop ends the goroutines, once what was written is sent or
// bridgeCloseWait has passed (toRuntime): the connection's reads and
// writes wait again. What was read ahead is read first.
func (b *bridge) stop() {
	b.mu.Lock()
	if !b.running {
		b.mu.Unlock()
		return
	}
	b.stopping = true
	b.cond.Broadcast()
	b.mu.Unlock()
	// A read in progress ends at its deadline, a write to a peer that
	// does not read at bridgeCloseWait.
	b.nc.SetReadDeadline(time.Unix(1, 0))
	b.nc.SetWriteDeadline(time.Now().Add(bridgeCloseWait))
	b.mu.Lock()
	for b.workers > 0 {
		b.cond.Wait()
	}
	b.running, b.stopping = false, false
	b.mu.Unlock()
	b.nc.SetReadDeadline(time.Time{})
	b.nc.SetWriteDeadline(time.Time{})
}

func (b *bridge) reader() {
	buf := make([]byte, 16<<10)
	for {
		b.mu.Lock()
		for len(b.in)-b.off >= bridgeAhead && !b.stopping && !b.closed {
			b.cond.Wait()
		}
		if b.stopping || b.closed || b.rerr != nil {
			b.done()
			return
		}
		b.mu.Unlock()
		n, err := b.nc.Read(buf)
		b.mu.Lock()
		if n > 0 {
			if b.off > 0 && b.off == len(b.in) {
				b.in, b.off = b.in[:0], 0
			}
			b.in = append(b.in, buf[:n]...)
		}
		if err != nil {
			var ne net.Error
			if b.stopping && errors.As(err, &ne) && ne.Timeout() {
				b.done()
				return
			}
			b.rerr = err
		}
		b.tellIn()
		b.mu.Unlock()
	}
}

// done ends a goroutine; the caller holds mu, which done releases.
func (b *bridge) done() {
	b.workers--
	b.cond.Broadcast()
	b.mu.Unlock()
}

// tellIn posts an input event to the watching loop unless one is on its
// way; the caller holds mu.
func (b *bridge) tellIn() {
	if b.loop != nil && !b.told && (b.off < len(b.in) || b.rerr != nil) {
		b.told = true
		b.loop.notify(b.token, evIn)
	}
}

func (b *bridge) writer() {
	var batch []byte
	for {
		b.mu.Lock()
		for len(b.out) == 0 && !b.stopping && !b.closed && b.werr == nil {
			b.cond.Wait()
		}
		if len(b.out) == 0 || b.werr != nil {
			// A connection closed with output queued is closed here,
			// once the output is written (close).
			b.out = b.out[:0]
			closed := b.closed
			b.done()
			if closed {
				b.nc.Close()
			}
			return
		}
		batch, b.out = b.out, batch[:0]
		b.sending = len(batch)
		b.mu.Unlock()
		_, err := b.nc.Write(batch)
		b.mu.Lock()
		b.sending = 0
		if err != nil && b.werr == nil {
			// What is queued is dropped, as a socket's write error
			// drops it: the loop hears of the end from the reads.
			b.werr = err
			b.out = b.out[:0]
		}
		if len(b.out) == 0 {
			if b.loop != nil && b.wantOut {
				b.loop.notify(b.token, evOut)
			}
			b.cond.Broadcast() // flushBlocking
		}
		b.mu.Unlock()
	}
}

// read takes what was read ahead (nb: errAgain when there is nothing yet;
// otherwise it waits, or reads the connection itself once the goroutines
// have stopped).
func (b *bridge) read(p []byte, nb bool) (int, error) {
	b.mu.Lock()
	if b.off == len(b.in) && !nb && !b.running && b.rerr == nil {
		b.mu.Unlock()
		return b.nc.Read(p)
	}
	for b.off == len(b.in) && b.rerr == nil && !nb && !b.closed {
		b.cond.Wait()
	}
	defer b.mu.Unlock()
	switch {
	case b.off < len(b.in):
		n := copy(p, b.in[b.off:])
		b.off += n
		if b.off == len(b.in) {
			b.in, b.off = b.in[:0], 0
			b.told = false
			b.cond.Broadcast() // the reader may go on
			// An end of the stream behind the input is a new event,
			// as a socket's would be.
			b.tellIn()
		}
		return n, nil
	case b.rerr != nil:
		return 0, b.rerr
	case b.closed:
		return 0, net.ErrClosed
	}
	b.told = false
	return 0, errAgain
}

// write queues p for the writer (nb), or writes it.
func (b *bridge) write(p []byte, nb bool) (int, error) {
	b.mu.Lock()
	if !nb && !b.running {
		b.mu.Unlock()
		return b.nc.Write(p)
	}
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return 0, net.ErrClosed
	case b.werr != nil:
		return 0, b.werr
	}
	b.out = append(b.out, p...)
	b.cond.Broadcast()
	if !nb {
		for (len(b.out) > 0 || b.sending > 0) && b.werr == nil && !b.closed {
			b.cond.Wait()
		}
		if b.werr != nil {
			return 0, b.werr
		}
	}
	return len(p), nil
}

// pending returns what was queued and is not written yet.
func (b *bridge) pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.out) + b.sending
}

// flushBlocking waits until the queue is written.
func (b *bridge) flushBlocking() {
	b.mu.Lock()
	for (len(b.out) > 0 || b.sending > 0) && b.werr == nil && !b.closed && b.running {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

// watch makes l the loop told of the socket's events (nil: none); as
// with epoll, input already there is announced at once.
func (b *bridge) watch(l *evLoop) {
	b.mu.Lock()
	b.loop, b.wantOut, b.told = l, false, false
	b.tellIn()
	b.mu.Unlock()
}

// reannounce announces again input read ahead whose event may have gone to
// no one (the loop's tables did not hold the socket then).
func (b *bridge) reannounce() {
	b.mu.Lock()
	b.told = false
	b.tellIn()
	b.mu.Unlock()
}

// setOut makes the loop wait for the queue to be written (out) or not.
func (b *bridge) setOut(l *evLoop, out bool) {
	b.mu.Lock()
	if b.loop == l {
		b.wantOut = out
		if out && len(b.out) == 0 && b.sending == 0 {
			l.notify(b.token, evOut)
		}
	}
	b.mu.Unlock()
}

// shutRead ends the input as a shut read side would: reads return the end
// of the stream once what was read ahead is taken.
func (b *bridge) shutRead() {
	b.mu.Lock()
	if b.rerr == nil {
		b.rerr = io.EOF
	}
	b.cond.Broadcast()
	b.tellIn()
	b.mu.Unlock()
	if cr, ok := b.nc.(interface{ CloseRead() error }); ok {
		cr.CloseRead()
	}
}

// alive reports, like peekAlive, whether nothing arrived on an idle socket.
func (b *bridge) alive() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.off == len(b.in) && b.rerr == nil && !b.closed
}

// close closes the connection; what the loop wrote last (an error before
// it closes a client) is written first, for at most bridgeCloseWait.
func (b *bridge) close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return net.ErrClosed
	}
	b.closed = true
	b.loop = nil
	b.cond.Broadcast()
	later := b.running && b.werr == nil && (len(b.out) > 0 || b.sending > 0)
	b.mu.Unlock()
	if later {
		b.nc.SetWriteDeadline(time.Now().Add(bridgeCloseWait))
		return nil // the writer closes nc
	}
	return b.nc.Close()
}

// bridgeCloseWait bounds the write of what is queued when a bridged
// connection is closed.
const bridgeCloseWait = time.Second
