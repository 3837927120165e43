package pooler

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// clientReadBufSize is the read buffer size of a client connection (held
// only while the client is active); larger messages are streamed through
// it.
const clientReadBufSize = 8 << 10

// clientWriteBufSize is the size of the pooled write buffers a client
// holds only while it is being written to (an idle client holds none).
const clientWriteBufSize = 16 << 10

var clientWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, clientWriteBufSize) }}

// clientConn is one client of the proxy.
//
// It logs in on the goroutine that accepted it (startup packet,
// authentication, welcome), then an event loop relays for it (evloop.go):
// detached (no server) or attached. In transaction mode the first message
// of a transaction attaches a server and the ReadyForQuery at which the
// engine allows it releases the server (settle); in session and
// record mode the server stays attached until the client leaves. When the
// client leaves, the engine decides how its server is cleaned up
// (vanish); a server that fails closes the client.
type clientConn struct {
	proxy *Proxy
	conn  net.Conn
	// wt is the client's place in its pool's wait queue while it waits
	// there on its loop (the loop's: evLoop.waiterFor), nil otherwise.
	wt *waiter
	// rio reads and writes conn for the buffers (rawio.go; the tls.Conn
	// of a client that uses TLS).
	rio io.ReadWriter
	// tsince and tkind (below, where it packs) are the timeout that runs
	// for the client and since when (monotonic nanoseconds since
	// statsEpoch): its last message, or the change of its state that
	// started that timeout (its loop's: evLoop.touch, timedOut).
	tsince int64
	// kill is the FATAL a client closed by the pooler gets (a timeout,
	// KILL): set before its owner shuts its socket's read side, sent by
	// vanish.
	kill atomic.Pointer[[]byte]
	// pooled is set while the client counts in c.pool.clients (under
	// Proxy.mu).
	pooled bool
	// tls is set once the client's TLS handshake is done: conn and rio
	// are its tls.Conn. raw is the socket, under the tls.Conn or not,
	// which an event loop owns.
	tls   bool
	tkind engine.TimeoutKind
	raw   *rawIO
	r     *bufio.Reader

	// w is the client's write buffer, written only by its owner (the
	// login goroutine, then its loop; a console client's goroutine):
	// others that must end a client post to its owner (end). It is taken
	// from clientWriters when needed and given back once flushed between
	// transactions.
	w *bufio.Writer

	user, database, appName string
	pool                    *pool
	key                     cancelKey

	// The fields below and params are the client's owner's (its loop's,
	// once it is logged in): others ask the owner (loopMsg) or act on the
	// socket (kill, shutRead).
	//
	// server is the attached server, or nil.
	server *serverConn
	// place is where the client is (engine.Place), changed only by
	// move.
	place engine.Place
	// gone is set once vanish ran (the client disconnected or is being
	// closed).
	gone bool
	// vanished is gone for the relay's hot path: it drops server output.
	vanished atomic.Bool
	// params are the client's tracked parameters (varcache), a set shared
	// with the clients that have the same values (params.go).
	params *paramSet

	// rec records the session when the proxy captures (nil otherwise);
	// endReason is what its session end says.
	rec       *capture.Session
	endReason string
	// recOff skips the capture for the client's current round trip, in
	// measurement builds only (capturetoggle.go).
	recOff atomic.Bool

	// sqlPrepared are the texts of the client's SQL-level PREPAREs, by
	// name, for what their EXECUTEs reach (reach.go).
	sqlPrepared map[string]string
	// routineChanged is set when the client's transaction creates, alters
	// or drops a routine or schema: what the pooler learns of routines
	// until that transaction ends may be the old definitions, so it is
	// forgotten again when it does (settle).
	routineChanged atomic.Bool
	// eng is the client's protocol engine (package engine): it is fed
	// the events of the client and of its server and decides what
	// follows them.
	eng engine.Client

	// Event-loop state (evloop.go). loop is the loop the client is handed
	// to, from the hand-off until the loop lets the client go (whether
	// the loop owns it yet is its own record, evLoop.own): whoever must
	// end the client posts to it (end). The fields after it are used by
	// the owning loop alone: lwait is set while the client waits, for a
	// server (its pool's queue, a login aside, a paused database) or for
	// the pooler's own queries on its server (setup, verify, clean); its
	// first unrelayed message was judged already (eng.Hold). lout is set
	// while the loop watches the socket for writing.
	loop  atomic.Pointer[evLoop]
	lwait bool
	lmore bool // the socket may hold bytes the loop has not read
	lout  bool
	lhup  bool // the client closed its end: read until the end (see serverConn.lhup)
	// A message larger than the read buffer: lleft is what is still to
	// come of one the loop streams to the server (or drops: ldrop);
	// lbig gathers one the pooler must see whole.
	lleft int
	ldrop bool
	lbig  *bigMessage
	// finished is set by done; ready once the login is over (Snapshot
	// shows the client from then on).
	finished, ready atomic.Bool

	// ctr counts for the statistics (stats.go); admin is set for a client
	// of the admin console (admin.go).
	ctr   clientCounters
	admin bool
}

// move moves the client to another place (its owner only). A move the
// engine refuses is a pooler bug: it is logged and counted
// (Snapshot.InvalidMoves), and the client stays where it was.
func (c *clientConn) move(to engine.Place) {
	from := c.place
	if err := engine.Move(&c.place, to); err != nil {
		c.proxy.stats.invalidMoves.Add(1)
		c.proxy.log.Error("client state machine: invalid move", "from", from.String(), "to", to.String(), "user", c.user, "database", c.database)
	}
}

// pinPlace shows the engine's pin of the client to its server in the
// client's place.
func (c *clientConn) pinPlace(pinned bool) {
	if pinned {
		c.move(engine.Pinned)
	} else if c.place == engine.Pinned {
		c.move(engine.Attached)
	}
}

// writer returns the client's write buffer, taking one from the pool if
// it has none (the client's owner only).
func (c *clientConn) writer() *bufio.Writer {
	if c.w == nil {
		c.w = clientWriters.Get().(*bufio.Writer)
		c.w.Reset(c.rio)
	}
	return c.w
}

// putWriter gives an empty write buffer back to the pool.
func (c *clientConn) putWriter() {
	if c.w != nil && c.w.Buffered() == 0 {
		c.w.Reset(nil)
		clientWriters.Put(c.w)
		c.w = nil
	}
}

// send writes b to the client and flushes.
func (c *clientConn) send(b []byte) error {
	w := c.writer()
	_, err := w.Write(b)
	if err == nil {
		err = w.Flush()
	}
	attached := c.server != nil
	if !attached {
		c.putWriter()
	}
	return err
}

// serveClient logs one client in and then relays for it until it leaves.
// The relay runs on a fresh goroutine: login (SCRAM, the first server's
// connection) needs a deep stack, and an idle client should keep only a
// small one.
func (p *Proxy) serveClient(nc net.Conn) {
	c := &clientConn{
		proxy: p,
		conn:  nc,
		r:     clientReaders.Get().(*bufio.Reader),
		eng:   engine.Client{Limits: &p.limits},
	}
	r := newRawIO(nc, p.cfg.Relay == RelayBridged)
	r.laddr = p.localAddr(r.laddr)
	c.rio, c.conn, c.raw = r, r, r
	c.r.Reset(c.rio)
	ok := c.handshake()
	p.endLogin(nc)
	if !ok {
		if !c.detached() {
			c.vanish() // session mode: the server attached at login goes back
		}
		if c.rec != nil {
			c.rec.End("login failed")
		}
		c.putReader()
		p.removeClient(c)
		nc.Close()
		p.wg.Done()
		return
	}
	c.ready.Store(true)
	if c.admin {
		c.serveAdmin()
		c.done()
		return
	}
	// A shutdown that began meanwhile closes the client on its loop.
	c.toLoop()
}

// bigMessage is a client message larger than the read buffer that an
// event loop gathers whole: its frame, and its body so far (complete at
// its capacity).
type bigMessage struct {
	f    engine.Frame
	body []byte
}

// localAddr returns a, a client socket's own address, shared with the
// clients that came to the same one: the listeners have few, and each
// accepted socket would otherwise keep its own copy.
func (p *Proxy) localAddr(a net.Addr) net.Addr {
	var k any
	switch a := a.(type) {
	case *net.TCPAddr:
		k = a.AddrPort()
	case *net.UnixAddr:
		k = a.Name
	default:
		return a
	}
	v, _ := p.locals.LoadOrStore(k, a)
	return v.(net.Addr)
}

// toLoop hands a logged-in client to an event loop.
func (c *clientConn) toLoop() {
	l := c.proxy.pickLoop()
	c.loop.Store(l)
	if h := handOffHook.Load(); h != nil {
		(*h)(c) // tests: what lands between the two
	}
	l.post(loopMsg{kind: msgAdopt, c: c})
}

// handOffHook, when set, runs in toLoop after the client names its loop
// and before the loop is asked to adopt it (tests).
var handOffHook atomic.Pointer[func(*clientConn)]

// end has the client closed with msg (KILL) by its owner: its loop
// (msgKill), or, when it has none yet, the loop it is handed to (adopt
// looks at c.kill after c.loop is set). A login that must wait for a
// server is woken by its pool (waiter.killed).
func (c *clientConn) end(msg *[]byte) {
	if !c.kill.CompareAndSwap(nil, msg) {
		return
	}
	if l := c.loop.Load(); l != nil {
		l.post(loopMsg{kind: msgKill, c: c})
	}
}

// getReader takes a read buffer from the pool.
func (c *clientConn) getReader() {
	c.r = clientReaders.Get().(*bufio.Reader)
	c.r.Reset(c.rio)
}

// local reports whether the client came through the Unix-domain socket.
func (c *clientConn) local() bool {
	return c.conn.RemoteAddr().Network() == "unix"
}

// shutRead shuts the read side of the client's socket: its owner then
// reads the end of the stream and lets it vanish (sending c.kill), as when
// the client leaves. Writes still work. Its loop calls it, or anyone for a
// console client, which no loop takes (rawIO).
func (c *clientConn) shutRead() {
	nc := c.conn
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	var err error
	switch x := nc.(type) {
	case *rawIO:
		err = x.shutdownRead()
	case interface{ CloseRead() error }:
		err = x.CloseRead()
	default:
		err = errors.ErrUnsupported
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		c.proxy.log.Warn("client socket not shut for reading", "err", err, "user", c.user, "database", c.database)
	}
}

// setEndReason says why the session ended (the first reason counts).
func (c *clientConn) setEndReason(r string) {
	if c.endReason == "" {
		c.endReason = r
	}
}

// done cleans up after a client that left.
func (c *clientConn) done() {
	if c.finished.Swap(true) {
		return
	}
	p := c.proxy
	if c.rec != nil {
		reason := c.endReason
		if reason == "" {
			reason = "client closed"
		}
		c.rec.End(reason)
	}
	p.removeClient(c)
	c.conn.Close()
	p.wg.Done()
}

// clientReaders holds the read buffers of clients; a client idle for a
// while gives its buffer back (dropIdleReader).
var clientReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, clientReadBufSize) }}

// putReader gives the read buffer back; it must be empty.
func (c *clientConn) putReader() {
	if c.r != nil {
		c.r.Reset(nil)
		clientReaders.Put(c.r)
		c.r = nil
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// detached reports whether no server is attached to the client.
func (c *clientConn) detached() bool {
	return c.server == nil
}

// attachAtLogin attaches the server a client keeps for its session
// (session and record mode) while it logs in: the event loop that adopts
// the client takes the server with it (evLoop.adopt).
func (c *clientConn) attachAtLogin() (*serverConn, error) {
	p := c.proxy
	c.move(engine.Waiting)
	s, err := c.pool.acquire(p.ctx, time.Now().Add(p.live.waitLimit()), c.params.m, &waiter{c: c})
	if err != nil {
		return nil, err
	}
	return c.setUp(s)
}
