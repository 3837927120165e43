package pooler

import (
	"bufio"
	"errors"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// clientReadable reads and relays the client's messages until its socket
// has nothing more.
func (l *evLoop) clientReadable(c *clientConn) { l.relayClient(c, false) }

// relayClient relays what the client sent, reading its socket until a
// read comes back short. drained says that the socket held nothing more
// when the loop last read it, so what is buffered is all there is until
// the next edge: after a wait for a server this saves a read that would
// find nothing.
func (l *evLoop) relayClient(c *clientConn, drained bool) {
	if c.lwait {
		c.lmore = true // read after bind
		return
	}
	if c.r == nil {
		c.getReader()
	}
	defer func() {
		if l.owns(c) {
			c.lmore = !drained
		}
	}()
	for {
		if !l.frontend(c) || !l.owns(c) {
			return
		}
		if drained || c.r.Buffered() == c.r.Size() {
			// A read shorter than the room it had emptied the socket:
			// what arrives later is a new edge.
			l.dropIdleReader(c)
			return
		}
		got, short, err := readMore(c.r)
		if got > 0 {
			// Behind TLS a short read is one record: the socket may
			// hold more, which no new edge would announce.
			drained = short && !c.tls && !c.lhup
			continue
		}
		if errors.Is(err, errAgain) {
			drained = true
			l.dropIdleReader(c)
			return
		}
		// EOF, reset or closed.
		if c.r.Buffered() == 0 {
			c.putReader()
		}
		l.flushServerOf(c)
		if c.lleft > 0 && !c.ldrop {
			// The server has part of a message and cannot be reused.
			c.eng.Broke()
		}
		c.vanish()
		l.afterVanish(c)
		return
	}
}

// readMore reads once into r (nb mode). got is how many bytes came; short
// that the read had room for more, so the socket is empty now; err is the
// read's error when nothing came (errAgain: nothing to read yet).
func readMore(r *bufio.Reader) (got int, short bool, err error) {
	before := r.Buffered()
	_, err = r.Peek(before + 1)
	got = r.Buffered() - before
	return got, got > 0 && got < r.Size()-before, err
}

// dropIdleReader gives back the read buffer of a client with nothing
// buffered and no server: it may wait long for its next message.
func (l *evLoop) dropIdleReader(c *clientConn) {
	if c.r.Buffered() == 0 && !!c.detached() {
		c.putReader()
	}
}

// frontend relays the client's complete buffered messages. It reports
// false when the loop is done with the client for now (it waits for a
// server, or left).
func (l *evLoop) frontend(c *clientConn) bool {
	var written *serverConn
	// batched: a message after the first of this read (the capture's
	// mark of a pipeline).
	batched := false
	if captureToggle && c.rec != nil {
		c.recOff.Store(captureOff.Load())
	}
	defer func() {
		if written != nil {
			l.flushServer(c, written)
		}
	}()
	for {
		if c.lleft > 0 {
			// The rest of a message larger than the read buffer.
			if !l.streamClient(c, &written) {
				return false
			}
			if c.lleft > 0 {
				return true
			}
			continue
		}
		var pre []byte // the body gathered
		if g := c.lbig; g != nil {
			if len(g.body) < cap(g.body) {
				k := min(cap(g.body)-len(g.body), c.r.Buffered())
				b, _ := c.r.Peek(k)
				g.body = append(g.body, b...)
				c.r.Discard(k)
				if len(g.body) < cap(g.body) {
					return true
				}
			}
			pre = g.body
		}
		var f engine.Frame
		if c.lbig != nil {
			f = c.lbig.f // gathered whole
		} else {
			if c.r.Buffered() < headerLen {
				if c.r.Buffered() == 0 && c.eng.Tracked() {
					s := c.server
					if s != nil && s.synthHead.Load() && s.lleft == 0 {
						// Not inside a server message still streaming.
						c.emitDueSynths(s, true)
					}
				}
				return true
			}
			h, _ := c.r.Peek(headerLen)
			f = c.eng.Frame(h)
			switch f.Act {
			case engine.Violation:
				l.flushWritten(c, &written)
				c.protocolError(f.Err)
				l.afterVanish(c)
				return false
			case engine.Terminate:
				l.flushWritten(c, &written)
				c.vanish()
				l.afterVanish(c)
				return false
			}
			switch {
			case f.Total > c.r.Size():
				l.flushWritten(c, &written)
				if goOn, ret := l.large(c, f); !goOn {
					return ret
				}
				if c.lleft > 0 || c.lbig != nil {
					continue // dropped, or gathered
				}
				// Streamed: judged on what the full buffer shows of it.
			case c.r.Buffered() < f.Total:
				return true
			case f.Act == engine.Skip:
				c.r.Discard(f.Total)
				continue
			}
		}
		typ, total := f.Type, f.Total
		m, ok, err := c.admit(f, batched, pre) // whole in the buffer (or gathered): no read
		batched = true
		if !ok {
			c.lbig = nil
			if more := streamed(err); more != nil {
				c.lleft, c.ldrop = more.left, more.drop
			}
			continue
		}
		s := c.server
		if s == nil {
			l.flushWritten(c, &written)
			if engine.IgnoredDetached(typ) {
				if c.lbig != nil {
					c.lbig = nil
				} else {
					c.r.Discard(total)
				}
				continue
			}
			// The verdict waits with the message; whichever driver
			// sends it takes it (TakeHeld).
			c.eng.Hold(m.adm)
			if !l.attach(c) {
				return false
			}
			c.eng.TakeHeld()
			s = c.server
		}
		if c.eng.Saturated(&s.eng) {
			// The server owes the client as many answers as the
			// pooler keeps track of: go on as they come (the client
			// reads them: serverReadable).
			l.flushWritten(c, &written)
			c.eng.Hold(m.adm)
			return false
		}
		if written != s {
			l.flushWritten(c, &written)
			if rio := s.raw; rio.pending() > l.outMax {
				// The server does not keep up: go on when it drains
				// (serverWritable).
				c.eng.Hold(m.adm)
				return false
			}
			written = s
		}
		err = c.forward(s, &m)
		c.lbig = nil
		switch more := streamed(err); {
		case err == nil:
		case more != nil:
			// Streamed: the rest goes to s (or is dropped) as it comes.
			c.lleft, c.ldrop = more.left, more.drop
		case errors.Is(err, errWrite):
			l.flushWritten(c, &written)
			l.serverFailed(c, s)
			return false
		default:
			c.eng.Broke()
			l.flushWritten(c, &written)
			c.vanish()
			l.afterVanish(c)
			return false
		}
	}
}

// large starts a client message larger than the read buffer, framed by f
// (its header is next in c.r). goOn says that frontend goes on with it;
// otherwise frontend returns ret. A message for no server is dropped as
// it comes; any other gets the server first (so that no partial message
// waits for one). A message the engine reads whole (engine.Client.Reads)
// is then gathered (lbig) and judged whole; any other is judged on what
// the full read buffer shows of it, and forward streams it (moreToCome).
func (l *evLoop) large(c *clientConn, f engine.Frame) (goOn, ret bool) {
	if f.Act == engine.Skip {
		c.lleft, c.ldrop = f.Total, true
		return true, true
	}
	if c.detached() {
		if engine.IgnoredDetached(f.Type) {
			c.lleft, c.ldrop = f.Total, true
			return true, true
		}
		if !l.attach(c) {
			return false, false // goes on once the server is attached
		}
	}
	if _, whole := c.eng.Reads(f.Type, f.Len); whole {
		c.r.Discard(headerLen)
		c.lbig = &bigMessage{f: f, body: make([]byte, 0, f.Len)}
		return true, true
	}
	if c.r.Buffered() < c.r.Size() {
		return false, true // the head of the message is read first
	}
	return true, true
}

// streamClient moves what the client's socket brought of the rest of a
// large message (c.lleft) to its server, or drops it. It reports false
// when frontend stops: the server does not keep up (serverWritable goes
// on), or failed.
func (l *evLoop) streamClient(c *clientConn, written **serverConn) bool {
	k := min(c.lleft, c.r.Buffered())
	if k == 0 {
		return true
	}
	if c.ldrop {
		c.r.Discard(k)
		c.lleft -= k
		return true
	}
	s := c.server
	if s == nil {
		// The server failed (the client is being closed).
		c.ldrop = true
		return true
	}
	if *written != s {
		l.flushWritten(c, written)
		if rio := s.raw; rio.pending() > l.outMax {
			return false
		}
		*written = s
	}
	b, _ := c.r.Peek(k)
	_, err := s.w.Write(b)
	c.r.Discard(k)
	c.lleft -= k
	if err != nil {
		l.flushWritten(c, written)
		l.serverFailed(c, s)
		return false
	}
	return true
}

// flushWritten flushes the server frontend wrote to.
func (l *evLoop) flushWritten(c *clientConn, written **serverConn) {
	if s := *written; s != nil {
		*written = nil
		l.flushServer(c, s)
	}
}

// flushServer flushes what the client wrote to s.
func (l *evLoop) flushServer(c *clientConn, s *serverConn) {
	err := s.w.Flush()
	rio := s.raw
	pend := rio.pending() > 0
	if err != nil {
		s.close()
		if s.lclient == c {
			l.serverFailed(c, s)
		}
		return
	}
	if pend && !s.lout && s.loop == l {
		s.lout = true
		l.modify(s.raw, s.lfd, true)
	}
}

// flushServerOf flushes the client's attached server, if any.
func (l *evLoop) flushServerOf(c *clientConn) {
	s := c.server
	if s != nil && s.lclient == c {
		l.flushServer(c, s)
	}
}

// attach gets the client a server without blocking. It reports whether
// the client has one now; otherwise it waits in the pool's queue (the
// loop gets a message) or was closed.
func (l *evLoop) attach(c *clientConn) bool {
	p := l.p
	if p.closing.Load() {
		l.noServer(c, errPoolClosed)
		return false
	}
	c.move(engine.Waiting)
	if p.pause.paused(c.pool.key.database) {
		l.pauseAside(c)
		return false
	}
	w := l.waiterFor(c)
	a, s, err := c.pool.admit(w, time.Now().Add(p.live.waitLimit()))
	if a == admitQueued {
		c.wt = w
	} else {
		l.spareWaiter(w)
	}
	switch a {
	case admitServer:
		return l.bind(c, s, false)
	case admitSlot:
		// A new server: it logs in aside while the client waits here.
		l.loginAside(c, false)
	case admitRefused:
		l.noServer(c, err)
	case admitQueued:
		c.lwait = true
	}
	return false
}

// pauseAside waits, on a goroutine that holds nothing of the client's,
// while the client's database is paused (PAUSE), as a goroutine's
// acquire does; the client waits on its loop (lwait) for the msgResumed
// that ends the wait (RESUME, or the wait timeout, KILL or shutdown).
func (l *evLoop) pauseAside(c *clientConn) {
	c.lwait = true
	p, pl, w := l.p, c.pool, &waiter{c: c}
	deadline := time.Now().Add(p.live.waitLimit())
	go func() {
		err := pl.pauseWait(p.ctx, deadline, w)
		l.post(loopMsg{kind: msgResumed, c: c, err: err})
	}()
}

// loginAside logs a server in for the client on a goroutine of its own,
// in the slot the pool admitted it to, or (granted) gave it after a wait;
// the client waits on the loop (lwait) for the msgLoggedIn that brings
// the server or the failure. The goroutine holds the server, never the
// client.
func (l *evLoop) loginAside(c *clientConn, granted bool) {
	c.lwait = true
	p, pl := l.p, c.pool
	params := c.params.m
	go func() {
		var s *serverConn
		var err error
		if granted {
			s, err = pl.connectGranted(p.ctx, params)
		} else {
			s, err = pl.connectSlot(p.ctx, params)
		}
		l.post(loopMsg{kind: msgLoggedIn, c: c, s: s, err: err})
	}()
}

// bind attaches s to the client on the loop; when s must be set up for
// the client first, the client waits (lwait) while s runs the setup query
// (runQueries). It reports whether s is attached now; async says that
// the client's message that asked for the server waits in its buffer
// (bind runs for an inbox message), and it is then relayed here.
func (l *evLoop) bind(c *clientConn, s *serverConn, async bool) bool {
	if err := l.watch(s); err != nil {
		l.p.stats.serversLost.Add(1)
		c.pool.putBack(s, closeServer)
		ok := l.attach(c)
		if ok && async {
			l.relayClient(c, !c.lmore)
			return false
		}
		return ok
	}
	s.lclient, s.lblocked = c, false
	l.servers.set(s.lfd, s)
	if q, restored := c.setupSQL(s); q != "" {
		// The client waits on its loop until s has run the query.
		c.lwait = true
		err := l.runQueries(c, s, []string{q}, false, func(err error, _ []string) {
			if err != nil {
				l.setUpFailed(c, s, err)
				return
			}
			c.lwait = false
			c.setUpDone(s, restored)
			l.relayClient(c, !c.lmore)
		})
		if err != nil {
			l.setUpFailed(c, s, err)
		}
		return false
	}
	c.setUpDone(s, false)
	if async {
		// The message that asked for the server is still buffered.
		l.relayClient(c, !c.lmore)
		return false
	}
	return true
}

// watch makes the loop watch s's socket (take), unless it does already;
// an error is a socket closed.
func (l *evLoop) watch(s *serverConn) error {
	if s.loop == l {
		if s.raw.br != nil {
			// What a bridge announced while s was idle went to no one:
			// announced again now that s has a client.
			s.raw.br.reannounce()
		}
		return nil
	}
	rio := s.raw
	if s.loop != nil {
		s.loop.del(rio, s.lfd)
		s.loop = nil
	}
	fd, err := l.take(rio)
	if err != nil {
		return err
	}
	s.loop, s.lfd, s.lout = l, fd, false
	return nil
}

// setUpFailed gives back a server whose setup for the waiting client c
// failed (setupFate) and closes the client, as a goroutine's failed
// setUp does.
func (l *evLoop) setUpFailed(c *clientConn, s *serverConn, err error) {
	c.lwait = false
	l.dropServer(s)
	c.pool.putBack(s, setupFate(err))
	l.noServer(c, err)
}

// noServer closes a client that gets no server.
func (l *evLoop) noServer(c *clientConn, err error) {
	c.send(c.failure(err))
	l.p.log.Info("client closed: no server", "user", c.user, "database", c.database, "err", err)
	c.vanish()
	l.afterVanish(c)
}

// flushClient writes out what was relayed to the client.
// What the socket does not take waits in pend; armOut, after the event,
// makes the loop watch the socket for it.
func (l *evLoop) flushClient(c *clientConn) {
	if c.w != nil {
		c.w.Flush()
	}
}

// armOut makes the loop watch a client's socket for writing when bytes
// wait for it. Whatever wrote them (a release's flush, an answer of the
// pooler's own, a refusal) may not have looked; this runs after every
// event and message the loop handles for the client.
func (l *evLoop) armOut(c *clientConn) {
	fd, ok := l.own[c]
	if !ok || c.lout {
		return
	}
	pend := c.raw.pending() > 0
	if pend {
		c.lout = true
		l.modify(c.raw, fd, true)
	}
}

// clientWritable writes what the client's socket did not take before.
func (l *evLoop) clientWritable(c *clientConn) {
	rio := c.raw
	left, _ := rio.flushPend()
	small := rio.pending() <= l.outMax
	if !left && c.lout {
		c.lout = false
		l.modify(rio, l.own[c], false)
	}
	if small {
		s := c.server
		if s != nil && s.lclient == c && s.lblocked {
			s.lblocked = false
			l.serverReadable(s)
		}
	}
}
