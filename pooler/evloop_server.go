package pooler

import (
	"errors"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// leaveLoop takes a server that a goroutine is about to use out of the
// event loop that last had it.
func (s *serverConn) leaveLoop() {
	if s.loop != nil {
		s.loop.del(s.raw, s.lfd)
		s.loop = nil
	}
	s.raw.toRuntime()
}

// serverReadable relays the server's answers to its client.
func (l *evLoop) serverReadable(s *serverConn) {
	c := s.lclient
	if c == nil {
		return
	}
	if s.lquery != nil {
		l.queryAnswers(s)
		return
	}
	drained := false
	for {
		switch l.backend(c, s) {
		case smReleased, smCleaning, smVerifying, smLost:
			return
		}
		if s.lblocked {
			// Relaying goes on when the client's socket drains
			// (clientWritable).
			l.flushClient(c)
			return
		}
		if drained {
			l.flushClient(c)
			return
		}
		got, short, err := readMore(s.r)
		if got > 0 {
			// Behind TLS a short read is one record: the socket may
			// hold more, which no new edge would announce.
			drained = short && !s.tls && !s.lhup
			continue
		}
		if errors.Is(err, errAgain) {
			l.flushClient(c)
			return
		}
		l.serverGone(c, s)
		return
	}
}

// backend relays the server's complete buffered messages; smNext means
// that more must be read (or the client's socket must drain first:
// s.lblocked).
func (l *evLoop) backend(c *clientConn, s *serverConn) smResult {
	for {
		if s.lleft > 0 {
			if s.r.Buffered() == 0 {
				return smNext
			}
			if c.raw.pending() > l.outMax {
				s.lblocked = true
				return smNext
			}
			l.streamAnswer(c, s)
			continue
		}
		if s.r.Buffered() < headerLen {
			return smNext
		}
		h, _ := s.r.Peek(headerLen)
		typ, n, ok := engine.ServerHeader(h)
		if !ok {
			l.serverGone(c, s)
			return smLost
		}
		total := headerLen + n
		if total > s.r.Size() {
			if typ == 'Z' {
				l.serverGone(c, s) // a ReadyForQuery has one byte
				return smLost
			}
			l.startAnswer(c, s, typ, total)
			continue
		}
		if s.r.Buffered() < total {
			return smNext
		}
		if c.raw.pending() > l.outMax {
			s.lblocked = true
			return smNext
		}
		switch r := c.serverMessage(s, typ, n); r {
		case smReleased:
			// s is no longer this client's, nor perhaps this loop's.
			l.afterRelease(c)
			return r
		case smCleaning, smVerifying:
			return r
		case smLost:
			l.dropServer(s)
			l.afterServerLost(c)
			return r
		}
	}
}

// startAnswer starts relaying a server message of type typ larger than
// the read buffer (total bytes with its header) as it arrives
// (streamAnswer): the relay state sees its type only (for a tracked client, the engine decides
// whether it is the client's or the answer to a message of the pooler's
// own, which is dropped), and the capture shows none of it.
func (l *evLoop) startAnswer(c *clientConn, s *serverConn, typ byte, total int) {
	if c.eng.Tracked() && s.synthHead.Load() {
		c.emitDueSynths(s, false)
	}
	// Never a ReadyForQuery (backend checked), so the step is Stay.
	forward := c.eng.Server(&s.eng, engine.ServerMsg{Type: typ, Len: total - headerLen}, c.gone).Forward
	if forward {
		c.ctr.tx += int64(total)
	}
	s.lleft, s.ldrop = total, !forward
}

// streamAnswer relays to c what s has buffered of the message being
// streamed (s.lleft), or drops it (s.ldrop, or a client that left); at
// the message's end it sends the pooler's own answers that became due
// (as serverMessage does after a whole message).
func (l *evLoop) streamAnswer(c *clientConn, s *serverConn) {
	k := min(s.lleft, s.r.Buffered())
	b, _ := s.r.Peek(k)
	if !s.ldrop && !c.vanished.Load() {
		c.writer().Write(b) // a failed write is the client's end, seen on its socket
	}
	s.r.Discard(k)
	s.lleft -= k
	if s.lleft == 0 && c.eng.Tracked() {
		c.emitIfDue(s)
	}
}

// unverified reports whether the client's routines changed its server's
// state in ways only the server knows, not read yet (verify).
func (c *clientConn) unverified() bool {
	return c.eng.Session.Unverified()
}

// afterRelease goes on with a client whose server went back to its pool.
func (l *evLoop) afterRelease(c *clientConn) {
	gone := c.gone
	switch {
	case gone:
		c.done()
	case l.p.closing.Load():
		// settle closed the client.
		l.finish(c)
	case c.lmore || c.r != nil && c.r.Buffered() > 0:
		// The client's next transaction is buffered already, or came
		// while it waited for a clean (lwait: not read yet).
		l.relayClient(c, !c.lmore)
	default:
		if c.r != nil {
			c.putReader()
		}
	}
}

// clean cleans s, which its client c released, of c's session state
// without blocking, with the plan of cleanPlan: the readback and the cleanup leave together (runQueries) and s goes back to
// its pool at their end. Meanwhile the client waits (lwait), so that its
// next server gets the settings read back. It reports whether the clean is
// under way; otherwise s was given back already.
func (l *evLoop) clean(c *clientConn, s *serverConn, gone bool) bool {
	if c.unverified() {
		// What the client's routines left is read first, then cleaned
		// (and read back, under preserve) with the rest.
		l.verify(c, s, func(ok, _ bool) {
			switch {
			case !ok: // lost too
				l.p.log.Warn("could not read a server's session state; server closed", "user", c.user)
				c.dropServerState()
				l.dropServer(s)
				c.pool.putBack(s, closeServer)
			case l.clean(c, s, gone):
				return // its end goes on with the client
			}
			l.afterRelease(c)
		})
		return true
	}
	pl, ok := c.cleanPlan(gone)
	switch {
	case !ok:
		l.dropServer(s)
		c.pool.putBack(s, closeServer)
		return false
	case pl.readback == "" && pl.cleanup == "":
		l.dropServer(s)
		c.cleanFinish(nil, nil)
		c.pool.putBack(s, reuse)
		return false
	}
	var qs []string
	for _, q := range []string{pl.readback, pl.cleanup} {
		if q != "" {
			qs = append(qs, q)
		}
	}
	err := l.runQueries(c, s, qs, pl.readback != "", func(err error, row []string) {
		l.dropServer(s)
		if err == nil && len(row) != len(pl.names) {
			err = errBadInternalAnswer
		}
		if err != nil {
			c.cleanFailed("could not clean a server of session state; server closed", err)
			c.pool.putBack(s, closeServer)
		} else {
			c.cleanFinish(pl.names, row)
			c.pool.putBack(s, reuse)
		}
		if !gone {
			c.lwait = false
		}
		l.afterRelease(c)
	})
	if err != nil {
		l.dropServer(s)
		c.cleanFailed("could not clean a server of session state; server closed", err)
		c.pool.putBack(s, closeServer)
		return false
	}
	if !gone {
		c.lwait = true
	}
	return true
}

// dropServer forgets a server that is no longer attached on this loop
// (its descriptor stays in the epoll set: see leaveLoop).
func (l *evLoop) dropServer(s *serverConn) {
	if l.servers.get(s.lfd) == s {
		l.servers.del(s.lfd)
	}
	s.lclient = nil
	s.lblocked = false
}

// serverGone handles a server whose stream ended or broke.
func (l *evLoop) serverGone(c *clientConn, s *serverConn) {
	if q := s.lquery; q != nil {
		s.lquery = nil
		q.done(errServerGone, nil)
		return
	}
	c.serverLost(s)
	l.dropServer(s)
	l.afterServerLost(c)
}

// serverFailed handles a write to the server that failed: s is closed.
func (l *evLoop) serverFailed(c *clientConn, s *serverConn) {
	if s.lclient != c {
		return
	}
	l.serverGone(c, s)
}

// afterServerLost finishes a client whose server was lost: serverLost
// wrote it an error and closed its socket.
func (l *evLoop) afterServerLost(c *clientConn) {
	gone := c.gone
	l.forget(c)
	if !gone {
		c.vanish()
	}
	c.done()
}

// afterVanish finishes a client that left (vanish ran): at once when
// nothing is attached, else once the server is clean (released) or lost.
func (l *evLoop) afterVanish(c *clientConn) {
	l.forget(c)
	s := c.server
	if s == nil {
		c.done()
		return
	}
	if s.lclient != c {
		return // cannot happen: a loop client's server is on the loop
	}
	// vanish either wrote the clean-up to s (its answers release it) or
	// closed s; a closed socket leaves the epoll set without an event.
	l.flushServer(c, s)
	if s.lclient != c {
		return
	}
	if _, err := s.r.Peek(1); err != nil && !errors.Is(err, errAgain) {
		l.serverGone(c, s)
		return
	}
	l.serverReadable(s)
}

// errServerGone is a server whose stream ended or broke.
var errServerGone = errors.New("server connection lost")

// serverWritable writes what the server's socket did not take before.
func (l *evLoop) serverWritable(s *serverConn) {
	rio := s.raw
	left, _ := rio.flushPend()
	small := rio.pending() <= l.outMax
	if !left && s.lout {
		s.lout = false
		l.modify(rio, s.lfd, false)
	}
	if c := s.lclient; c != nil && small && (c.eng.Holding() || c.lleft > 0) && !c.lwait {
		l.clientReadable(c)
	}
}
