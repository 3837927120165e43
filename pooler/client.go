package pooler

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
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

// ignoredStartupParams are accepted from clients and dropped, as
// PgBouncer's ignore_startup_parameters is commonly set up to do.
var ignoredStartupParams = map[string]bool{"extra_float_digits": true}

// clientConn is one client of the proxy.
//
// Its states: login (startup packet, authentication, welcome), then
// detached (no server; the client goroutine blocks reading the client) and
// attached (a server is attached; the client goroutine writes the client's
// messages to it and a pump goroutine relays the server's messages back).
// In transaction mode the first message of a transaction attaches a server
// and the pump detaches it at the ReadyForQuery that makes mayRelease true;
// in session and record mode the server stays attached until the client
// leaves. When the client leaves, onVanish decides how its server is
// cleaned up; a server that fails closes the client.
type clientConn struct {
	proxy *Proxy
	conn  net.Conn
	// polledFD is the socket's descriptor while the client is parked in
	// the idle poller, else -1 (under the poller's lock).
	polledFD int32
	// hdr is writePlan's scratch space for message headers (client
	// goroutine only: a local array would escape to the heap).
	hdr [headerLen + 2]byte
	// waiter is the client's place in its pool's wait queue (reused).
	waiter waiter
	// rio reads and writes conn for the buffers (rawio.go; the tls.Conn
	// of a client that uses TLS).
	rio io.ReadWriter
	// idleKind, idleRx and idleSince are the janitor's view of an idle
	// client (enforceClientTimeouts; under mu): which timeout applies,
	// the received bytes when it was first seen so, and when.
	idleKind  string
	idleRx    int64
	idleSince time.Time
	// kill is the FATAL a client closed by the pooler gets (a timeout):
	// set before its socket's read side is shut, sent by vanish.
	kill atomic.Pointer[[]byte]
	// pooled is set while the client counts in c.pool.clients (under
	// Proxy.mu).
	pooled bool
	// tls is set once the client's TLS handshake is done: conn and rio
	// are its tls.Conn, which only the goroutine relay drives and whose
	// decrypted bytes a bufferless wait on the socket would not see.
	tls bool
	r   *bufio.Reader

	// wmu guards w, which both the client goroutine (errors) and the pump
	// (relayed server messages) write to. w is taken from clientWriters
	// when needed and given back once flushed between transactions.
	wmu sync.Mutex
	w   *bufio.Writer

	user, database, appName string
	pool                    *pool
	key                     cancelKey

	// mu guards the fields below and params.
	mu sync.Mutex
	// server is the attached server, or nil.
	server *serverConn
	// st is the protocol state of the attached server.
	st engine.RelState
	// pumps counts the client's running pump goroutine (at most one):
	// attach and vanish, both on the client goroutine, wait for it.
	pumps sync.WaitGroup
	// place is where the client is (engine.Place), changed only by
	// moveLocked.
	place engine.Place
	// gone is set once vanish ran (the client disconnected or is being
	// closed).
	gone bool
	// vanished is gone for the pump's hot path: it drops server output.
	vanished atomic.Bool
	// params are the client's tracked parameters (varcache): what it asked
	// for at startup, updated by every ParameterStatus it was sent; sig is
	// paramsSig(params).
	params map[string]string
	sig    uint64

	// parkedAt is when the client goroutine began waiting for the client's
	// next message (UnixNano; 0 while it is not waiting); nudged is set,
	// under nmu, when the janitor ended that wait with a read deadline so
	// that the client waits without a read buffer (waitIdle).
	parkedAt atomic.Int64
	// rec records the session when the proxy captures (nil otherwise);
	// endReason is what its session end says (under mu).
	rec       *capture.Session
	endReason string
	// recOff skips the capture for the client's current round trip, in
	// measurement builds only (capturetoggle.go).
	recOff atomic.Bool

	// verifying is open (under mu) while the pump reads the state of the
	// client's server (verifyAttached): the client's next message waits.
	verifying chan struct{}
	// knownFn is the client's test of routines known to change nothing
	// (knownClean), made once.
	knownFn func(name string) bool
	// routineChanged is set when the client's transaction creates, alters
	// or drops a routine or schema: what the pooler learns of routines
	// until that transaction ends may be the old definitions, so it is
	// forgotten again when it does (readyForQuery).
	routineChanged atomic.Bool
	// startupSets are startup parameters beyond the tracked ones, set on
	// every server the client gets (see login's carry).
	startupSets []engine.Setting
	nmu         sync.Mutex
	nudged      bool

	// tracked is set in transaction mode with prepared-statement support:
	// the relay looks at every message (track.go).
	tracked bool
	// eng is the client's I/O-free protocol state (package engine):
	// framing, the relay state of its server, its protocol
	// statements. Under mu, except the framing (client goroutine or loop
	// only).
	eng engine.Client

	// Event-loop state (evloop.go). inLoop is set from the hand-off to an
	// event loop until the loop lets the client go; which loop owns it is
	// that loop's own record (evLoop.own). The fields after it are used by
	// the owning loop alone: lwait is set while the client waits in its
	// pool's queue (its first unrelayed message was judged already:
	// eng.Hold), lout while the loop watches the socket for writing.
	inLoop atomic.Bool
	lwait  bool
	lmore  bool // the socket may hold bytes the loop has not read
	lout   bool
	// finished is set by done.
	finished atomic.Bool

	// ctr counts for the statistics (stats.go); admin is set for a client
	// of the admin console (admin.go).
	ctr   clientCounters
	admin bool
}

// moveLocked moves the client to another place (c.mu held). A move the
// engine refuses is a pooler bug: it is logged and counted
// (Snapshot.InvalidMoves), and the client stays where it was.
func (c *clientConn) moveLocked(to engine.Place) {
	from := c.place
	if err := engine.Move(&c.place, to); err != nil {
		c.proxy.stats.invalidMoves.Add(1)
		c.proxy.log.Error("client state machine: invalid move", "from", from.String(), "to", to.String(), "user", c.user, "database", c.database)
	}
}

// move is moveLocked for a caller that does not hold c.mu.
func (c *clientConn) move(to engine.Place) {
	c.mu.Lock()
	c.moveLocked(to)
	c.mu.Unlock()
}

// setPinnedLocked pins the attached client's server, or ends the pin
// (c.mu held).
func (c *clientConn) setPinnedLocked(pinned bool) {
	c.eng.SetPinned(pinned)
	if pinned {
		c.moveLocked(engine.Pinned)
	} else if c.place == engine.Pinned {
		c.moveLocked(engine.Attached)
	}
}

// writer returns the client's write buffer, taking one from the pool if
// it has none. c.wmu must be held.
func (c *clientConn) writer() *bufio.Writer {
	if c.w == nil {
		c.w = clientWriters.Get().(*bufio.Writer)
		c.w.Reset(c.rio)
	}
	return c.w
}

// putWriter gives an empty write buffer back to the pool. c.wmu must be
// held.
func (c *clientConn) putWriter() {
	if c.w != nil && c.w.Buffered() == 0 {
		c.w.Reset(nil)
		clientWriters.Put(c.w)
		c.w = nil
	}
}

// send writes b to the client and flushes.
func (c *clientConn) send(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	w := c.writer()
	_, err := w.Write(b)
	if err == nil {
		err = w.Flush()
	}
	c.mu.Lock()
	attached := c.server != nil
	c.mu.Unlock()
	if !attached {
		c.putWriter()
	}
	return err
}

// readAuthMessage reads a PasswordMessage-type ('p') message during login.
func (c *clientConn) readAuthMessage() ([]byte, error) {
	h, err := c.r.Peek(headerLen)
	if err != nil {
		return nil, err
	}
	typ, n, err := engine.ParseHeader(h, maxStartupLen)
	if err != nil {
		return nil, err
	}
	if typ != 'p' {
		return nil, errors.New("expected a password message")
	}
	c.r.Discard(headerLen)
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// serveClient logs one client in and then relays for it until it leaves.
// The relay runs on a fresh goroutine: login (SCRAM, the first server's
// connection) needs a deep stack, and an idle client should keep only a
// small one.
func (p *Proxy) serveClient(nc net.Conn) {
	c := &clientConn{
		proxy:    p,
		conn:     nc,
		polledFD: -1,
		r:        clientReaders.Get().(*bufio.Reader),
		eng:      engine.Client{Limits: &p.limits},
	}
	c.rio = newRawIO(nc)
	if r, ok := c.rio.(*rawIO); ok {
		c.conn = r
	}
	c.r.Reset(c.rio)
	ok := c.handshake()
	p.endLogin(nc)
	if !ok {
		if c.attached() {
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
	if c.loopable() {
		c.toLoop()
		return
	}
	go c.run()
}

// loopable reports whether an event loop may relay for the client:
// transaction mode, a plain socket, no capture, servers without TLS
// (evloop.go).
func (c *clientConn) loopable() bool {
	if c.proxy.loops == nil || c.admin || c.rec != nil || c.proxy.cfg.Mode != ModeTransaction || c.proxy.closing.Load() {
		return false
	}
	if c.pool != nil && c.pool.tls.Load() {
		return false // see bind
	}
	_, ok := c.rio.(*rawIO)
	return ok
}

// toLoop hands a client between transactions to an event loop.
func (c *clientConn) toLoop() {
	c.pumps.Wait()
	c.inLoop.Store(true)
	c.proxy.pickLoop().post(loopMsg{kind: msgAdopt, c: c})
}

// run relays for a logged-in client until it leaves. A client idle for a
// while goes on on a fresh goroutine (idle), so that the goroutine that
// holds an idle client has a small stack.
func (c *clientConn) run() {
	if c.admin {
		c.serveAdmin()
		c.done()
		return
	}
	relaying := &c.proxy.stats.relaying
	relaying.Add(1)
	ok := c.relay()
	relaying.Add(-1)
	if !ok && c.loopable() && c.detached() {
		// Between transactions: an event loop takes the client. One that
		// still holds a server (inside a transaction, or pinned by
		// session state) waits below with its pump running, and goes to
		// a loop once it is between transactions again.
		c.toLoop()
		return
	}
	if !ok {
		if !c.proxy.idlePoll.park(c) {
			go c.idle()
		}
		return
	}
	c.done()
}

// wake resumes a client the idle poller held (its socket became readable,
// or the proxy is shutting down).
func (c *clientConn) wake() {
	c.getReader()
	c.run()
}

// getReader takes a read buffer from the pool.
func (c *clientConn) getReader() {
	c.r = clientReaders.Get().(*bufio.Reader)
	c.r.Reset(c.rio)
}

// idle waits without a read buffer for an idle client's next message,
// then relays again.
func (c *clientConn) idle() {
	if err := c.waitIdle(); err != nil {
		c.vanish()
		c.done()
		return
	}
	c.run()
}

// local reports whether the client came through the Unix-domain socket.
func (c *clientConn) local() bool {
	return c.conn.LocalAddr().Network() == "unix"
}

// shutRead shuts the read side of the client's socket: whichever driver
// has the client then reads the end of the stream and lets it vanish
// (sending c.kill), as when the client leaves. Writes still work.
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
	if err != nil {
		// A socket that cannot be shut for reading is closed: the
		// goroutine relay notices at its next read.
		c.conn.Close()
	}
}

// setEndReason says why the session ended (the first reason counts).
func (c *clientConn) setEndReason(r string) {
	c.mu.Lock()
	if c.endReason == "" {
		c.endReason = r
	}
	c.mu.Unlock()
}

// done cleans up after a client that left.
func (c *clientConn) done() {
	if c.finished.Swap(true) {
		return
	}
	p := c.proxy
	if c.rec != nil {
		c.mu.Lock()
		reason := c.endReason
		c.mu.Unlock()
		if reason == "" {
			reason = "client closed"
		}
		c.rec.End(reason)
	}
	p.removeClient(c)
	c.conn.Close()
	p.wg.Done()
}

// handshake reads the startup packet, counts the client in and logs it
// in; it reports whether the client may go on to the relay.
func (c *clientConn) handshake() bool {
	p := c.proxy
	nc := c.conn
	nc.SetDeadline(time.Now().Add(p.live.login()))
	pkt, err := c.readStartupPacket()
	if err != nil || pkt == nil {
		return false
	}
	if !c.login(pkt) {
		return false
	}
	nc.SetDeadline(time.Time{})
	c.startCapture(pkt)
	return true
}

// startCapture starts the client's capture session (Config.Capture),
// once: before its server is attached at login in session and record
// mode (the pump reads c.rec), after the login otherwise.
func (c *clientConn) startCapture(pkt *startupPacket) {
	if w := c.proxy.cfg.Capture; w != nil && !c.admin && c.rec == nil {
		c.rec = w.StartSession(capture.SessionInfo{
			ClientAddr:      c.conn.RemoteAddr().String(),
			User:            c.user,
			Database:        c.database,
			ApplicationName: c.appName,
			Params:          pkt.params,
		})
	}
}

// clientReaders holds the read buffers of clients; a client idle for a
// while gives its buffer back (waitIdle).
var clientReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, clientReadBufSize) }}

// putReader gives the read buffer back; it must be empty.
func (c *clientConn) putReader() {
	if c.r != nil {
		c.r.Reset(nil)
		clientReaders.Put(c.r)
		c.r = nil
	}
}

// waitIdle waits, holding no read buffer, until a client that has been
// idle for a while sends something or goes away: it polls the socket with
// a one-byte MSG_PEEK, so nothing is read. Afterwards c.r is a buffer from
// the pool again.
func (c *clientConn) waitIdle() error {
	if c.r.Buffered() > 0 {
		return nil
	}
	c.putReader()
	c.proxy.stats.bufferless.Add(1)
	defer func() {
		c.proxy.stats.bufferless.Add(-1)
		c.r = clientReaders.Get().(*bufio.Reader)
		c.r.Reset(c.rio)
	}()
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var b [1]byte
	return rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR
	})
}

// nudge ends the wait of a client that has been waiting for its next
// message since before cutoff (UnixNano) by setting a past read deadline,
// so that it goes on waiting in waitIdle without a read buffer. The
// janitor calls it; it reports whether the client was nudged.
func (c *clientConn) nudge(cutoff int64) bool {
	if c.tls {
		return false // see clientConn.tls
	}
	c.nmu.Lock()
	defer c.nmu.Unlock()
	if at := c.parkedAt.Load(); at != 0 && at < cutoff && !c.nudged {
		c.nudged = true
		c.conn.SetReadDeadline(time.Unix(0, 1))
		return true
	}
	return false
}

// unpark ends a wait for the client's next message; it reports whether
// the janitor nudged the client meanwhile (its read deadline is cleared
// again here).
func (c *clientConn) unpark() bool {
	c.nmu.Lock()
	c.parkedAt.Store(0)
	n := c.nudged
	if n {
		c.nudged = false
		c.conn.SetReadDeadline(time.Time{})
	}
	c.nmu.Unlock()
	return n
}

// readStartupPacket reads startup packets until a StartupMessage: it
// answers an SSLRequest with the TLS handshake when TLS to clients is on
// (else 'N', as a GSSENCRequest), refuses a plaintext client when the
// mode requires TLS, and handles a CancelRequest. It returns nil when the
// connection is done.
func (c *clientConn) readStartupPacket() (*startupPacket, error) {
	for i := 0; ; i++ {
		pkt, err := readStartup(c.r)
		if err != nil {
			if errors.Is(err, errUnsupportedProtocol) {
				c.send(fatal(codeFeatureNotSupported, "%v", err))
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isTimeout(err) {
				c.send(fatal(codeProtocolViolation, "invalid startup packet: %v", err))
			}
			c.proxy.log.Debug("client startup failed", "addr", c.conn.RemoteAddr().String(), "err", err)
			return nil, err
		}
		switch pkt.kind {
		case startupSSL:
			if c.tls {
				c.send(fatal(codeProtocolViolation, "SSL request on a connection already using TLS"))
				return nil, nil
			}
			cfg := c.proxy.clientTLS.Load()
			if cfg == nil {
				break // declined below, as GSSENCRequest
			}
			if c.r.Buffered() > 0 {
				// Bytes sent before the handshake would be taken as if
				// they had come encrypted (CVE-2021-23222's kind).
				c.send(fatal(codeProtocolViolation, "received unencrypted data after SSL request"))
				return nil, nil
			}
			if _, err := c.conn.Write([]byte{'S'}); err != nil {
				return nil, err
			}
			tc := tls.Server(c.conn, cfg)
			if err := tc.Handshake(); err != nil {
				c.proxy.log.Info("client TLS handshake failed", "addr", c.conn.RemoteAddr().String(), "err", err)
				return nil, err
			}
			c.conn, c.rio, c.tls = tc, tc, true
			c.r.Reset(tc)
			continue
		case startupGSSENC:
			// Declined below.
		case startupCancel:
			c.proxy.forwardCancel(&pkt.cancel)
			return nil, nil
		default:
			if c.proxy.cfg.ClientTLSMode.requires() && !c.tls && !c.local() {
				c.send(fatal(codeInvalidAuth, "SSL required"))
				c.proxy.log.Info("client refused: TLS required", "addr", c.conn.RemoteAddr().String())
				return nil, nil
			}
			return pkt, nil
		}
		switch pkt.kind {
		case startupSSL, startupGSSENC:
			// Encryption is declined, so a client may send its startup
			// packet right behind the request without waiting for the
			// 'N' (nothing would be read as encrypted): buffered data is
			// fine. More than a few requests in a row is not.
			if i > 2 {
				c.send(fatal(codeProtocolViolation, "unexpected data after encryption request"))
				return nil, nil
			}
			if _, err := c.conn.Write([]byte{'N'}); err != nil {
				return nil, err
			}
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// login checks the startup parameters, authenticates the client and sends
// the welcome. It reports whether the client may go on.
func (c *clientConn) login(pkt *startupPacket) bool {
	p := c.proxy
	if p.closing.Load() {
		c.send(fatal(codeCannotConnectNow, "the pooler is shutting down"))
		return false
	}
	var out []byte
	if pkt.minor > 0 {
		// Offer 3.0 and list the protocol options it does not know.
		var unknown []string
		for k := range pkt.params {
			if strings.HasPrefix(k, "_pq_.") {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		out = encode(out, &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
	}
	c.user = pkt.params["user"]
	c.database = pkt.params["database"]
	if c.database == "" {
		c.database = c.user
	}
	c.params = make(map[string]string)
	// carry: the client's other startup parameters are set on every
	// server it gets. In session and record mode it has a server of its
	// own, which gets them at attach (DISCARD ALL resets them when the
	// client leaves); in transaction mode under preserve and reset they
	// follow the client as its SETs do (set at each attach, reset at each
	// release). Under allow, or with the classification off, transaction
	// mode refuses them, as PgBouncer does.
	carry := p.cfg.Mode != ModeTransaction || p.cfg.Classifier != nil &&
		(p.cfg.OnSessionState == PolicyPreserve || p.cfg.OnSessionState == PolicyReset)
	for k, v := range pkt.params {
		switch {
		case k == "user" || k == "database" || strings.HasPrefix(k, "_pq_.") || ignoredStartupParams[k]:
		case isTracked(k):
			c.params[canonicalParam(k)] = v
		case carry && validParamName(k):
			c.startupSets = append(c.startupSets, engine.Setting{Name: k, Value: v})
		case carry && k == "options":
			// PGOPTIONS / options=-c name=value: the same settings.
			sets, err := parseStartupOptions(v)
			if err != nil {
				c.send(append(out, fatal(codeProtocolViolation, "unsupported startup parameter options: %v", err)...))
				return false
			}
			for _, st := range sets {
				if isTracked(st.Name) {
					c.params[canonicalParam(st.Name)] = st.Value
				} else {
					c.startupSets = append(c.startupSets, st)
				}
			}
		case p.cfg.Mode == ModeTransaction:
			c.send(append(out, fatal(codeProtocolViolation, "unsupported startup parameter: %s (in transaction mode a startup parameter is carried per client under --on-session-state preserve or reset; this pooler runs %s)", k, sessionStateText(p.cfg))...))
			return false
		default:
			c.send(append(out, fatal(codeProtocolViolation, "unsupported startup parameter: %s", k)...))
			return false
		}
	}
	c.appName = c.params["application_name"]
	c.eng.Startup = c.startupSets
	if len(out) > 0 {
		if err := c.send(out); err != nil {
			return false
		}
		out = out[:0]
	}
	if err := p.auth.authenticate(c, c.database, c.user); err != nil {
		var le *errLookup
		if errors.As(err, &le) {
			c.send(fatal(codeInvalidAuth, "authentication failed: the pooler could not look the user up on the server"))
			p.log.Warn("client login: auth_query failed", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String(), "err", err)
		} else if errors.Is(err, errCertUser) {
			c.send(fatal(codeInvalidAuth, "certificate authentication failed for user %q", c.user))
			p.log.Info("client login failed: certificate", "user", c.user, "addr", c.conn.RemoteAddr().String())
		} else if errors.Is(err, errAuthFailed) {
			c.send(fatal(codeInvalidPassword, "password authentication failed for user %q", c.user))
			p.log.Info("client login failed", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		} else if !errors.Is(err, io.EOF) {
			c.send(fatal(codeInvalidAuth, "authentication failed: %v", err))
			p.log.Info("client authentication error", "user", c.user, "addr", c.conn.RemoteAddr().String(), "err", err)
		}
		return false
	}
	// Counted against max_client_conn once authenticated, so that logins
	// that stall cannot fill it (they are bounded by MaxLoginClients and
	// the login timeout); an admin user may take one connection more, so
	// that the console works when clients are at the limit.
	if !p.addClient(c, isAdminDatabase(c.database) && p.isAdmin(c.user)) {
		c.send(fatal(codeTooManyConnections, "no more connections allowed (max_client_conn)"))
		p.log.Info("client refused: max_client_conn reached", "user", c.user, "addr", c.conn.RemoteAddr().String())
		return false
	}
	if isAdminDatabase(c.database) {
		return c.adminLogin(out)
	}
	if !p.admits(c.database) {
		// PgBouncer's words, after authentication as there.
		c.send(fatal(codeInvalidCatalogName, "no such database: %s", c.database))
		p.log.Info("client refused: database not in the allow-list", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		return false
	}
	if p.isDisabled(c.database) {
		// PostgreSQL's words for a database that allows no connections.
		c.send(fatal(codeObjectNotInPrerequisiteState, "database \"%s\" is not currently accepting connections (DISABLE on the pooler's console)", c.database))
		p.log.Info("client refused: database disabled", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		return false
	}
	c.pool = p.poolFor(c)
	c.tracked = p.cfg.Mode == ModeTransaction && p.cfg.MaxPreparedStatements > 0
	c.eng.SetPolicy(p.cfg.OnSessionState, p.cfg.Mode == ModeTransaction && p.cfg.Classifier != nil)
	ctx, cancel := context.WithTimeout(p.ctx, p.live.waitLimit())
	defer cancel()
	defaults, err := c.pool.welcomeParams(ctx, time.Now().Add(p.live.waitLimit()))
	if err != nil {
		c.send(c.failure(err))
		p.log.Warn("client login: no server", "user", c.user, "database", c.database, "err", err)
		return false
	}
	out = encode(out, &pgproto3.AuthenticationOk{})
	names := make([]string, 0, len(defaults))
	for k := range defaults {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range trackedParams {
		if _, ok := c.params[k]; !ok {
			if v, ok := defaults[k]; ok {
				c.params[k] = v
			}
		}
	}
	for _, k := range names {
		v := defaults[k]
		if cv, ok := c.params[k]; ok {
			v = cv
		}
		out = encode(out, &pgproto3.ParameterStatus{Name: k, Value: v})
	}
	c.sig = paramsSig(c.params)
	var pid uint32
	if p.cfg.Mode != ModeTransaction {
		// One server per client: it is attached now, so that the client
		// is told its real process ID (pg_terminate_backend, joins with
		// pg_stat_activity work as without the pooler); the cancel
		// secret stays the pooler's.
		c.move(engine.Idle)
		c.startCapture(pkt)
		s, err := c.attach()
		if err != nil {
			c.send(c.failure(err))
			p.log.Warn("client login: no server", "user", c.user, "database", c.database, "err", err)
			return false
		}
		pid = s.pid
	}
	c.key = p.registerCancelKey(c, pid)
	sent := false
	defer func() {
		if !sent {
			p.unregisterCancelKey(c.key)
		}
	}()
	secret := make([]byte, 4)
	binary.BigEndian.PutUint32(secret, c.key.secret)
	out = encode(out, &pgproto3.BackendKeyData{ProcessID: c.key.pid, SecretKey: secret}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := c.send(out); err != nil {
		return false
	}
	sent = true
	if c.place == engine.LoggingIn {
		c.move(engine.Idle)
	}
	p.log.Debug("client logged in", "user", c.user, "database", c.database, "application_name", c.appName, "addr", c.conn.RemoteAddr().String())
	return true
}

// connectReason is the last part of a connection error (dial tcp
// 127.0.0.1:5432: connect: connection refused → connection refused):
// the cause, without the host names and users that pgconn's text lists.
func connectReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// failure is the FATAL a client that gets no server is sent: its kill
// message (taken, so that it is sent once) when KILL ended its wait, else
// serverFailure's.
func (c *clientConn) failure(err error) []byte {
	if errors.Is(err, errKilled) {
		if m := c.kill.Swap(nil); m != nil {
			return *m
		}
	}
	return serverFailure(err)
}

// serverFailure turns a failure to get a server into a FATAL for the
// client: the server's own error when it sent one.
func serverFailure(err error) []byte {
	var pgErr *pgconn.PgError
	var se *serverError
	switch {
	case errors.Is(err, errKilled):
		return fatal(codeAdminShutdown, "the database was killed on the pooler's admin console (KILL)")
	case errors.Is(err, errWaitTimeout):
		return fatal(codeProtocolViolation, "query_wait_timeout")
	case errors.Is(err, errPoolClosed):
		return fatal(codeAdminShutdown, "the pooler is shutting down")
	case isServerAuthError(err):
		return fatal(codeInvalidAuth, "server login failed: %v", err)
	case errors.As(err, &pgErr):
		var down *serverDownError
		if errors.As(err, &down) {
			return fatal(pgErr.Code, "server login failed: %s (server down)", pgErr.Message)
		}
		return fatal(pgErr.Code, "server login failed: %s", pgErr.Message)
	case errors.As(err, &se):
		f := parseErrorFields(se.body)
		return fatal(f['C'], "could not apply the client's settings on the server: %s", f['M'])
	default:
		var down *serverDownError
		if errors.As(err, &down) {
			return fatal(codeConnectionFailure, "could not connect to the server: %s (server down)", connectReason(down.err))
		}
		return fatal(codeConnectionFailure, "could not connect to the server")
	}
}

// randomKey returns a random cancel key.
func randomKey() cancelKey {
	var b [8]byte
	rand.Read(b[:])
	return cancelKey{pid: binary.BigEndian.Uint32(b[:4])&0x7fffffff | 1, secret: binary.BigEndian.Uint32(b[4:])}
}

// validParamName reports whether a startup parameter name looks like a
// run-time parameter (letters, digits, _ and a dot for custom settings).
// "options" is not one: its -c switches are not taken apart.
// parseStartupOptions reads the options startup parameter as PostgreSQL
// does (words split on white space, a backslash keeps the next character)
// and returns its settings: -c name=value, -cname=value and --name=value,
// with dashes in the name read as underscores. Other command-line switches
// are refused: a pooler cannot give them to a server it shares or has
// already started.
func parseStartupOptions(v string) ([]engine.Setting, error) {
	var words []string
	var cur []byte
	in := false
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case engine.IsSpace(ch):
			if in {
				words = append(words, string(cur))
				cur, in = cur[:0], false
			}
			continue
		case ch == '\\' && i+1 < len(v):
			i++
			ch = v[i]
		}
		cur, in = append(cur, ch), true
	}
	if in {
		words = append(words, string(cur))
	}
	var sets []engine.Setting
	for i := 0; i < len(words); i++ {
		w := words[i]
		var opt string
		switch {
		case w == "-c":
			if i+1 == len(words) {
				return nil, fmt.Errorf("-c without a setting")
			}
			i++
			opt = words[i]
		case strings.HasPrefix(w, "--"):
			opt = w[2:]
		case strings.HasPrefix(w, "-c"):
			opt = w[2:]
		default:
			return nil, fmt.Errorf("only -c name=value settings are supported, not %q", w)
		}
		name, value, ok := strings.Cut(opt, "=")
		name = strings.ReplaceAll(name, "-", "_")
		if !ok || !validParamName(name) {
			return nil, fmt.Errorf("invalid setting %q", opt)
		}
		sets = append(sets, engine.Setting{Name: name, Value: value})
	}
	return sets, nil
}

func validParamName(k string) bool {
	if k == "" || k == "options" || k == "replication" {
		return false
	}
	for i := 0; i < len(k); i++ {
		ch := k[i]
		if !(ch == '_' || ch == '.' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}
