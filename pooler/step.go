package pooler

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// The steps a loop takes for one message: admit a framed client message
// (what the engine must see, the capture, the policy's verdict), forward
// it, relay a server message (serverMessage) and act on a ReadyForQuery
// (readyForQuery), and the ends of a client or a server (vanish,
// serverLost). The event loops (evloop*.go) read, write and wait around
// them.

// inbound is one framed client message in a relay's hands: what the
// engine needs of its body and the policy's verdict on it.
type inbound struct {
	typ  byte
	n    int
	body []byte
	// consumed: the message was read out of c.r into body.
	consumed bool
	effs     []StateEffect
	replace  string
}

// admit takes the client message framed by f, whose header is next in
// c.r, as far as both relays handle it alike: it reads what the engine
// must see of the body, shows the message to the capture and runs the
// session-state policy. ok is false when the message was answered here
// (a refusal) and the relay goes on with the next one; an error means the
// client went away. The loop calls admit only for a message it has whole
// in its buffer (pre: the start of a larger one, gathered or streamed).
func (c *clientConn) admit(f engine.Frame, batched bool, pre []byte) (m inbound, ok bool, err error) {
	m.typ, m.n = f.Type, f.Len
	switch {
	case pre != nil:
		// An event loop gathered the body (seesWhole).
		m.body, m.consumed = pre, true
	case c.seesWhole(m.typ, m.n):
		m.body, m.consumed, err = c.frontendBody(m.n, true)
	case c.tracked:
		if look, _ := needsBody(m.typ); look {
			m.body, m.consumed, err = c.frontendBody(m.n, false)
		}
	}
	if err != nil {
		return m, false, err
	}
	if c.rec != nil && m.typ != 'd' && !c.eng.Holding() {
		// A held message was shown to the capture when it was judged.
		c.recordFrontend(m.typ, m.n, m.body, batched)
	}
	effs, replace, refused, err := c.judge(m.typ, m.n, m.body, m.consumed)
	m.effs, m.replace = effs, replace
	return m, !refused && err == nil, err
}

// seesWhole reports whether the pooler reads the whole body of a client
// message of type typ and body length n before it forwards it: the
// classifier sees a whole statement, however large, and the tracked relay
// some messages' whole bodies (needsBody).
func (c *clientConn) seesWhole(typ byte, n int) bool {
	if c.tracked {
		if _, whole := needsBody(typ); whole {
			return true
		}
	}
	return c.eng.PolicyOn() && (typ == 'Q' || typ == 'P') && n <= maxClassifiedQuery
}

// judge returns the policy's verdict on the client's next message: the
// one held for it (a driver judged it before the message had to wait),
// else a fresh one from policyStep, whose results it returns.
func (c *clientConn) judge(typ byte, n int, body []byte, consumed bool) (effs []StateEffect, replace string, refused bool, err error) {
	if effs, replace, held := c.eng.TakeHeld(); held {
		return effs, replace, false, nil
	}
	return c.policyStep(typ, n, body, consumed)
}

// policyStep runs the session-state policy on a client's Query or Parse
// (policyOn): it returns the message's effects, or under the reject
// policy the query that raises the refusal inside a transaction; refused
// is set when the refusal was answered here and the message consumed.
func (c *clientConn) policyStep(typ byte, n int, body []byte, consumed bool) (effs []StateEffect, replace string, refused bool, err error) {
	if !c.eng.PolicyOn() || typ != 'Q' && typ != 'P' {
		return nil, "", false, nil
	}
	effs = c.classifyMessage(typ, n, body)
	policy := c.eng.Policy()
	attached := false
	if len(effs) > 0 && policy == PolicyReject {
		attached = !c.detached()
	}
	switch engine.Judge(policy, typ, effs, attached) {
	case engine.Pass:
		return effs, "", false, nil
	case engine.RefuseParse:
		if c.tracked {
			c.eng.RejectNextParse(engine.Refusal(effs))
		}
		return nil, "", false, nil
	case engine.RaiseOnServer:
		return nil, engine.RaiseQuery(effs), false, nil
	}
	// Refused outright: the client stays usable.
	if !consumed {
		if err := discardMessage(c.r, headerLen+n); err != nil {
			// moreToCome: an event loop drops the rest as it comes.
			return nil, "", true, err
		}
	}
	c.send(append(engine.Refusal(effs), 'Z', 0, 0, 0, 5, 'I'))
	return nil, "", true, nil
}

// forward writes one client message to its server s. An error wrapping
// errWrite is the
// server's; any other is the client's (the message was cut short).
func (c *clientConn) forward(s *serverConn, typ byte, n int, body []byte, consumed bool, effs []StateEffect, replace string) error {
	c.eng.Sent(typ)
	c.noteFrontend(typ, n)
	if typ == 'P' && c.tracked {
		// A statement's effects happen when it runs: trackFrontend keeps
		// them with the statement and applies them at Bind.
		c.eng.SetParseEffects(effs)
		effs = nil
	}
	if pinned, ok := c.eng.ApplyEffects(c.eng.Policy(), effs, isTracked); ok {
		c.setPinned(pinned)
	}
	if c.tracked {
		pl := c.trackFrontend(s, typ, body, n)
		if replace != "" {
			pl.Action, pl.Replace = engine.PlanReplace, replace
		}
		return c.writePlan(s.w, typ, n, body, consumed, &pl)
	}
	switch {
	case replace != "":
		if !consumed {
			if err := discardMessage(c.r, headerLen+n); err != nil {
				return err
			}
		}
		if writeQuery(s.w, replace) != nil {
			return errWrite
		}
	case consumed:
		var h [headerLen]byte
		s.w.Write(engine.PutHeader(h[:0], typ, n))
		if _, werr := s.w.Write(body); werr != nil {
			return errWrite
		}
	default:
		return copyMessage(s.w, c.r, headerLen+n)
	}
	return nil
}

// moreToCome is what copyMessage and discardMessage return on an event
// loop's non-blocking reader when the rest of the message (left bytes)
// has not arrived yet: the loop copies it to the server (or, with drop,
// discards it) as it comes (evLoop.streamClient).
type moreToCome struct {
	left int
	drop bool
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
	sets := append(c.startupSets[:len(c.startupSets):len(c.startupSets)], c.eng.Session.Settings...)
	if len(sets) == 0 && s.sig == c.sig {
		return "", false
	}
	var b strings.Builder
	if len(sets) > 0 {
		b.WriteString(engine.RestoreSQL(sets))
		b.WriteByte(';')
	}
	s.paramsSQL(&b, c.params, sets)
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
			for _, st := range c.startupSets {
				engine.SetAdd(&c.eng.Session.Touched, st.Name)
			}
		}
	}
	if c.sig != s.sig {
		for _, k := range trackedParams {
			if v, ok := s.params[k]; ok {
				c.params[k] = v
			}
		}
		c.sig = paramsSig(c.params)
	}
	c.server = s
	c.move(engine.Attached)
	c.eng.Attached(p.cfg.Mode != ModeTransaction)
	s.eng.ResetQueue()
	s.synthHead.Store(false)
	p.stats.attaches.Add(1)
	c.pool.ctr.assignments.Add(1)
}

// clientWrite copies one message from the server to the client buffer.
// Write errors are ignored: a vanished client's server is still drained.
func (c *clientConn) clientWrite(s *serverConn, total int) error {
	if c.vanished.Load() {
		_, err := s.r.Discard(total)
		return err
	}
	c.ctr.tx += int64(total)
	err := copyMessage(c.writer(), s.r, total)
	if errors.Is(err, errWrite) {
		return nil
	}
	return err
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
// (its header is buffered in s.r) to the client and keeps the relay state;
// it reads the message from s.r, all of it unless the server failed.
func (c *clientConn) serverMessage(s *serverConn, typ byte, n int, fatalSeen *bool) smResult {
	if c.tracked {
		if s.synthHead.Load() {
			c.emitDueSynths(s, false)
		}
		if engine.MayComplete(typ) {
			var body []byte
			var status byte
			switch typ {
			case 'C', 'E', 'Z':
				if n <= maxSmallMessage {
					if b, err := s.r.Peek(headerLen + n); err == nil {
						body = b[headerLen:]
					}
				}
			}
			switch typ {
			case 'Z':
				if n != 1 || body == nil {
					c.serverLost(s, *fatalSeen)
					return smLost
				}
				status = body[0]
			case 'E':
				if body != nil && isFatal(body) {
					*fatalSeen = true
				}
			}
			if err := c.trackBackend(s, typ, n, body); err != nil {
				c.serverLost(s, *fatalSeen)
				return smLost
			}
			if typ == 'Z' {
				return c.readyForQuery(s, status)
			}
			return smNext
		}
	}
	if c.rec != nil && typ != 'D' && typ != 'd' {
		c.recordBackend(s, typ, n)
	}
	switch typ {
	case 'Z':
		b, err := s.r.Peek(headerLen + 1)
		if err != nil || n != 1 {
			c.serverLost(s, *fatalSeen)
			return smLost
		}
		status := b[headerLen]
		if err := c.clientWrite(s, headerLen+n); err != nil {
			c.serverLost(s, *fatalSeen)
			return smLost
		}
		return c.readyForQuery(s, status)
	case 'S':
		if n <= maxSmallMessage {
			b, err := s.r.Peek(headerLen + n)
			if err == nil {
				if name, value, ok := parseParameterStatus(b[headerLen:]); ok {
					s.params[name] = value
					if isTracked(name) {
						c.params[name] = value
						s.sig = paramsSig(s.params)
						c.sig = paramsSig(c.params)
					}
				}
			}
		}
	case 'E':
		if n <= maxSmallMessage {
			if b, err := s.r.Peek(headerLen + n); err == nil && isFatal(b[headerLen:]) {
				*fatalSeen = true
			}
		}
	}
	if err := c.clientWrite(s, headerLen+n); err != nil {
		c.serverLost(s, *fatalSeen)
		return smLost
	}
	return smNext
}

// isFatal reports whether an ErrorResponse body has severity FATAL or
// PANIC.
func isFatal(body []byte) bool {
	sev := parseErrorFields(body)['V']
	return sev == "FATAL" || sev == "PANIC"
}

// readyForQuery updates the relay state after a ReadyForQuery with the
// given status was relayed, and releases the server when the engine says
// so: smReleased, smCleaning (an event loop cleans it
// first and gives it back then), smVerifying (an event loop reads the
// server's state first and decides then), or smNext (kept). Once
// released, s is no longer the caller's.
func (c *clientConn) readyForQuery(s *serverConn, status byte) smResult {
	c.eng.Ready(status)
	c.noteReady(status)
	if c.eng.MustVerify(status, c.gone) {
		// Statements whose effects only the server knows: it is read
		// before the server may go back to the pool, so that what pins
		// the client pins it now. The loop reads it without blocking
		// and goes on with releaseAtReady then.
		s.loop.verifyAttached(c, s, status)
		return smVerifying
	}
	return c.releaseAtReady(s, status)
}

// releaseAtReady releases the server after a ReadyForQuery with status
// when the engine says so (see readyForQuery).
func (c *clientConn) releaseAtReady(s *serverConn, status byte) smResult {
	owed := 0
	if c.tracked {
		owed = s.eng.Pending()
	}
	verdict := c.eng.Release(owed)
	if verdict == engine.KeepOwed {
		c.proxy.log.Warn("responses pending at release; server kept", "user", c.user, "pending", owed)
	}
	release := verdict == engine.ReleaseNow
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
	if c.mustClean() {
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
func (c *clientConn) serverLost(s *serverConn, fatalSeen bool) {
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
	if !fatalSeen {
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
	if c.tracked && s != nil {
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
		s.close()
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
