package pooler

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// The steps a loop takes for one message, each an event fed to the
// client's engine and the step it answers carried out: admit a framed
// client message (what the engine reads, the capture, the policy's
// verdict), forward it (the engine's plan), relay a server message and
// carry out what follows it (serverMessage, settle), and the ends of a
// client or a server (vanish, serverLost). The event loops (evloop*.go)
// read, write and wait around them.

// inbound is one framed client message in a relay's hands: what the
// engine reads of its body and the policy's verdict on it.
type inbound struct {
	typ  byte
	n    int
	body []byte
	// consumed: the message was read out of c.r into body.
	consumed bool
	adm      engine.Admission
}

// admit takes the client message framed by f, whose header is next in
// c.r: it reads what the engine reads of the body (engine.Client.Reads),
// shows the message to the capture and has the engine judge it (Admit).
// ok is false when the message was answered here (a refusal) and the
// loop goes on with the next one; an error means the client went away.
// The loop calls admit only for a message it has whole in its buffer
// (pre: the body of a larger one, gathered).
func (c *clientConn) admit(f engine.Frame, batched bool, pre []byte) (m inbound, ok bool, err error) {
	m.typ, m.n = f.Type, f.Len
	if pre != nil {
		m.body, m.consumed = pre, true
	} else if look, whole := c.eng.Reads(m.typ, m.n); look {
		m.body, m.consumed, err = c.frontendBody(m.n, whole)
	}
	if err != nil {
		return m, false, err
	}
	if c.rec != nil && m.typ != 'd' && !c.eng.Holding() {
		// A held message was shown to the capture when it was judged.
		c.recordFrontend(m.typ, m.n, m.body, batched)
	}
	if a, held := c.eng.TakeHeld(); held {
		// Judged before it had to wait.
		m.adm = a
		return m, true, nil
	}
	var effs []StateEffect
	if c.eng.Classifies(m.typ) {
		effs = c.classifyMessage(m.typ, m.n, m.body)
	}
	m.adm = c.eng.Admit(m.typ, effs, !c.detached())
	if m.adm.Reply == nil {
		return m, true, nil
	}
	// Refused outright: the client stays usable.
	if !m.consumed {
		if err := discardMessage(c.r, headerLen+m.n); err != nil {
			// moreToCome: the loop drops the rest as it comes.
			return m, false, err
		}
	}
	c.send(m.adm.Reply)
	return m, false, nil
}

// forward writes one client message to its server s as the engine plans
// it (engine.Client.Send). An error wrapping errWrite is the server's;
// any other is the client's (the message was cut short).
func (c *clientConn) forward(s *serverConn, m *inbound) error {
	c.noteFrontend(m.typ, m.n)
	var k engine.Counters
	pl := c.eng.Send(&s.eng, m.typ, m.body, m.n, m.adm, &k)
	if c.eng.Tracked() {
		if due := s.eng.SynthDue(); due != s.synthHead.Load() {
			s.synthHead.Store(due)
		}
		if k != (engine.Counters{}) {
			st := &c.pool.stats
			st.clientParses.Add(k.ClientParses)
			st.serverParses.Add(k.ServerParses)
			st.binds.Add(k.Binds)
			st.evictions.Add(k.Evictions)
		}
	}
	if pl.PinChanged {
		c.pinPlace(pl.Pinned)
	}
	return c.writePlan(s.w, m.typ, m.n, m.body, m.consumed, &pl)
}

// moreToCome is what copyMessage and discardMessage return on an event
// loop's non-blocking reader when the rest of the message (left bytes)
// has not arrived yet: the loop copies it to the server (or, with drop,
// discards it) as it comes (evLoop.streamClient).
type moreToCome struct {
	left int
	drop bool
}

// streamed returns the moreToCome err is, or nil (err nil included).
func streamed(err error) *moreToCome {
	if err == nil {
		return nil
	}
	var more *moreToCome
	if errors.As(err, &more) {
		return more
	}
	return nil
}

func (e *moreToCome) Error() string {
	return fmt.Sprintf("%d bytes of the message still to come", e.left)
}

// discardMessage drops total bytes of a client message from r.
func discardMessage(r *bufio.Reader, total int) error {
	d, err := r.Discard(total)
	if err != nil && errors.Is(err, errAgain) {
		return &moreToCome{left: total - d, drop: true}
	}
	return err
}

// errWrite marks a failed write in copyMessage.
var errWrite = errors.New("write failed")

// copyMessage moves one whole message of total bytes from r to w. A read
// error is returned as is, a write error wrapped in errWrite (and the rest
// of the message still consumed from r).
func copyMessage(w *bufio.Writer, r *bufio.Reader, total int) error {
	if total <= r.Size() {
		b, err := r.Peek(total)
		if err != nil {
			return err
		}
		_, werr := w.Write(b)
		r.Discard(total)
		if werr != nil {
			return errWrite
		}
		return nil
	}
	var werr error
	for total > 0 {
		chunk := min(total, r.Size())
		b, err := r.Peek(chunk)
		if len(b) == 0 && err != nil {
			if werr == nil && errors.Is(err, errAgain) {
				// An event loop's reader: the rest comes later.
				return &moreToCome{left: total}
			}
			return err
		}
		if werr == nil {
			_, werr = w.Write(b)
		}
		r.Discard(len(b))
		total -= len(b)
	}
	if werr != nil {
		return errWrite
	}
	return nil
}

// setUp makes the server acquired at login the client's (session and
// record mode; attachAtLogin): it applies the client's settings and
// parameters when the server lacks them, blocking the login goroutine. In
// transaction mode the loop runs the same setup without blocking
// (evLoop.bind). On failure the server is given back.
func (c *clientConn) setUp(s *serverConn) (*serverConn, error) {
	s.leaveLoop() // this goroutine uses it now
	q, restored := c.setupSQL(s)
	if q != "" {
		if _, err := s.runInternal(q); err != nil {
			c.pool.putBack(s, setupFate(err))
			return nil, err
		}
	}
	c.setUpDone(s, restored)
	return s, nil
}

// setupSQL returns the query that makes s fit for the client, "" when
// it is fit already: what the server must carry for this client (in
// session and record mode its startup parameters beyond the tracked
// ones, in transaction mode the settings that follow it under preserve),
// then the tracked parameters it lacks. restored says that the query
// restores settings.
func (c *clientConn) setupSQL(s *serverConn) (q string, restored bool) {
	sets := append(c.eng.Startup[:len(c.eng.Startup):len(c.eng.Startup)], c.eng.Session.Settings...)
	if len(sets) == 0 && s.sig == c.params.sig {
		return "", false
	}
	var b strings.Builder
	if len(sets) > 0 {
		b.WriteString(engine.RestoreSQL(sets))
		b.WriteByte(';')
	}
	s.paramsSQL(&b, c.params.m, sets)
	return b.String(), len(sets) > 0
}

// setUpDone attaches s, which ran the client's setup query (restored:
// with its settings) or needed none, to the client.
func (c *clientConn) setUpDone(s *serverConn, restored bool) {
	p := c.proxy
	if restored {
		// The server now carries the client's settings: they are read
		// back and reset when it goes back to the pool.
		for _, st := range c.eng.Session.Settings {
			engine.SetAdd(&c.eng.Session.Touched, st.Name)
		}
		if p.cfg.Mode == ModeTransaction {
			// Startup parameters too: the server goes back to the pool
			// after the transaction.
			for _, st := range c.eng.Startup {
				engine.SetAdd(&c.eng.Session.Touched, st.Name)
			}
		}
	}
	if c.params.sig != s.sig {
		m := maps.Clone(c.params.m)
		for _, k := range engine.TrackedParams {
			if v, ok := s.params[k]; ok {
				m[k] = v
			}
		}
		c.params = p.params.intern(m)
	}
	c.server = s
	c.move(engine.Attached)
	c.eng.Attached(p.cfg.Mode != ModeTransaction)
	s.eng.ResetQueue()
	s.synthHead.Store(false)
	p.stats.attaches.Add(1)
	c.pool.ctr.assignments.Add(1)
}

// flushClient flushes what was relayed to the client; with done it also
// gives the write buffer back (the server is being released).
func (c *clientConn) flushClient(done bool) {
	if c.w != nil {
		c.w.Flush()
		if done {
			c.putWriter()
		}
	}
}

// smResult is what became of the server after serverMessage.
type smResult int

const (
	smNext      smResult = iota // still attached: go on
	smReleased                  // released at a ReadyForQuery
	smCleaning                  // released into a clean an event loop runs (evLoop.clean)
	smVerifying                 // an event loop reads the server's state first (evLoop.verifyAttached)
	smLost                      // failed; serverLost has run
)

// serverMessage relays one server message of type typ and body length n
// (all of it buffered in s.r) as the engine decides (engine.Client.Server)
// and does the step that follows it: smNext (the server stays), or the
// results of settle and verifyAttached, or smLost (serverLost ran).
func (c *clientConn) serverMessage(s *serverConn, typ byte, n int) smResult {
	if c.eng.Tracked() && s.synthHead.Load() {
		c.emitDueSynths(s, false)
	}
	m := engine.ServerMsg{Type: typ, Len: n}
	if (engine.SeesBody(typ) || typ == 'S') && n <= maxSmallMessage {
		if b, err := s.r.Peek(headerLen + n); err == nil {
			m.Body = b[headerLen:]
		}
	}
	st := c.eng.Server(&s.eng, m, c.gone)
	if st.Then == engine.Lost {
		c.serverLost(s)
		return smLost
	}
	if typ == 'S' && m.Body != nil {
		s.noteParam(c, m.Body)
	}
	if st.Forward && c.rec != nil && typ != 'D' && typ != 'd' {
		c.recordBackend(s, typ, n)
	}
	if err := c.relayOut(s, headerLen+n, st.Forward); err != nil {
		c.serverLost(s)
		return smLost
	}
	if c.eng.Tracked() {
		c.emitIfDue(s)
	}
	if st.Status == 0 {
		return smNext // not a ReadyForQuery of the client's
	}
	c.noteReady(st.Status)
	if st.Then == engine.Verify {
		// The loop reads the server's state without blocking and
		// goes on with settle then.
		s.loop.verifyAttached(c, s, st.Status)
		return smVerifying
	}
	return c.settle(s, st.Status, st.Then, st.Owed)
}

// settle carries out the engine's decision on the attached server s after
// a ReadyForQuery with status (engine.Client.Server, Settle): it stays
// (smNext), goes back to its pool (smReleased), or goes back once the
// loop cleaned it (smCleaning). Once released, s is no longer the
// caller's.
func (c *clientConn) settle(s *serverConn, status byte, then engine.Then, owed int) smResult {
	if owed > 0 {
		c.proxy.log.Warn("responses pending at release; server kept", "user", c.user, "pending", owed)
	}
	release := then == engine.Release || then == engine.Clean
	gone := c.gone
	if release {
		c.server = nil
		if !gone {
			c.move(engine.Idle)
		}
	}
	if status == 'I' && c.routineChanged.CompareAndSwap(true, false) {
		// The transaction that changed a routine is over: what was
		// learned meanwhile may be the old definition.
		c.proxy.routines.invalidate()
	}
	if !release {
		return smNext
	}
	// The client's ReadyForQuery leaves once its server is back in the
	// pool, or its clean is under way (and counted), so that what the
	// client does next sees the pool as it left it (SHOW SERVERS,
	// Snapshot.Verifications).
	r := smReleased
	if then == engine.Clean {
		// The loop cleans s without blocking and gives it back when
		// the answers are in.
		if s.loop.clean(c, s, gone) {
			r = smCleaning
		}
	} else {
		// Off the event loop before another client may have it.
		s.loop.dropServer(s)
		c.pool.putBack(s, reuse)
	}
	c.flushClient(true)
	if !gone && c.proxy.closing.Load() {
		c.closeForShutdown()
	}
	return r
}

// serverLost handles a server whose stream ended or broke while attached:
// the server is closed and its slot freed, and the client, unless it is
// gone, gets an error (unless the server sent its own FATAL) and is closed.
func (c *clientConn) serverLost(s *serverConn) {
	explain := c.eng.ServerLost()
	gone := c.gone
	if c.server == s {
		c.server = nil
		if !gone {
			// The client is closed below.
			c.move(engine.Closing)
		}
	}
	c.pool.putBack(s, closeServer)
	c.proxy.stats.serversLost.Add(1)
	if gone {
		return
	}
	c.setEndReason("server connection lost")
	if explain {
		c.writer().Write(fatal(codeConnectionFailure, "server connection lost"))
	}
	c.flushClient(true)
	c.proxy.log.Info("server connection lost; client closed", "user", c.user, "database", c.database)
	c.conn.Close()
}

// protocolError closes a client that sent a malformed message.
func (c *clientConn) protocolError(err error) {
	c.vanished.Store(true) // nothing more from the server after the FATAL
	var tl *engine.TooLargeError
	if errors.As(err, &tl) {
		c.send(fatal(codeProtocolViolation, "%v", err))
	} else {
		c.send(fatal(codeProtocolViolation, "invalid message: %v", err))
	}
	c.setEndReason("protocol violation")
	c.proxy.log.Info("client closed: protocol violation", "user", c.user, "err", err)
	c.vanish()
}

// closeForShutdown closes a client between transactions during shutdown.
func (c *clientConn) closeForShutdown() {
	c.setEndReason("pooler shutdown")
	c.send(fatal(codeAdminShutdown, "the pooler is shutting down"))
	c.conn.Close()
}

// vanish cleans up after a client that disconnected, sent Terminate or is
// being closed, following the engine's plan (Client.Vanish).
func (c *clientConn) vanish() {
	if m := c.kill.Load(); m != nil && !c.vanished.Load() {
		// Closed by the pooler (a timeout): the client learns why.
		c.send(*m)
		c.setEndReason(string(parseErrorFields((*m)[headerLen:])['M']))
	}
	c.vanished.Store(true)
	c.gone = true
	c.move(engine.Closing)
	s := c.server
	var srv *engine.Server
	if c.eng.Tracked() && s != nil {
		srv = &s.eng
	}
	plan := c.eng.Vanish(s != nil, srv)
	act, queries := plan.Action, plan.Queries
	switch act {
	case engine.VanishNothing:
		return
	case engine.VanishCancelClose:
		// The server is closed at once and its query cancelled aside:
		// the cancel dials PostgreSQL, which must not hold up an event
		// loop.
		s.close()
		go func() {
			if err := s.sendCancel(); err != nil {
				c.proxy.log.Warn("cancel of a vanished client's query failed", "user", c.user, "err", err)
			}
		}()
	case engine.VanishClose:
		// Given back through the release site, which ends the backend's
		// session and frees its slot once PostgreSQL no longer counts it
		// (terminate): closing the socket here freed the slot at once,
		// while the exiting backend still held its session's advisory
		// locks and counted against the pool and the caps.
		c.server = nil
		if l := s.loop; l != nil {
			l.dropServer(s)
		}
		c.pool.putBack(s, closeServer)
		c.proxy.stats.serversLost.Add(1)
	default:
		var err error
		for _, q := range queries {
			err = errors.Join(err, writeQuery(s.w, q))
		}
		if err == nil {
			err = s.w.Flush()
		}
		if err != nil {
			s.close()
		}
	}
	c.proxy.log.Debug("client left with a server attached", "user", c.user, "action", int(act))
}

var _ io.Reader = (*bufio.Reader)(nil)

// recordFrontend shows a client message to the capture before it is
// forwarded: body when the relay read it already, else as much of it as
// the read buffer holds.
func (c *clientConn) recordFrontend(typ byte, n int, body []byte, batched bool) {
	if captureToggle && c.recOff.Load() {
		return
	}
	if body == nil && n > 0 {
		b, _ := c.r.Peek(min(headerLen+n, c.r.Size()))
		if len(b) > headerLen {
			body = b[headerLen:]
		}
	}
	if batched {
		c.rec.FrontendBatched(typ, body, n)
	} else {
		c.rec.Frontend(typ, body, n)
	}
}

// recordBackend shows a server message to the capture before it is
// relayed, when it fits in the read buffer (data rows are never shown).
// Once the client has gone, what the server answers is the pooler's own
// clean-up and not recorded.
func (c *clientConn) recordBackend(s *serverConn, typ byte, n int) {
	if captureToggle && c.recOff.Load() {
		return
	}
	if headerLen+n > s.r.Size() || c.vanished.Load() {
		return
	}
	if b, err := s.r.Peek(headerLen + n); err == nil {
		c.rec.Backend(typ, b[headerLen:])
	}
}
