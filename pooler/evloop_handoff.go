package pooler

import (
	"errors"
)

// adopt takes a client from its goroutine or from login: between
// transactions (nothing attached), or, in session and record mode, with
// the server it keeps for its session (taken with it: watch).
func (l *evLoop) adopt(c *clientConn) {
	rio := c.raw
	rfd, err := rio.toRaw()
	if err != nil {
		c.inLoop.Store(false)
		l.giveUp(c) // closed meanwhile
		return
	}
	fd := int32(rfd)
	// A descriptor reused after a close the loop did not see is simply
	// taken over.
	l.own[c] = fd
	l.clients.set(fd, c)
	if err := l.add(rio, fd); err != nil {
		l.clients.del(fd)
		delete(l.own, c)
		c.inLoop.Store(false)
		l.giveUp(c)
		return
	}
	c.mu.Lock()
	s := c.server
	c.mu.Unlock()
	if s != nil {
		switch err := l.watch(s); {
		case errors.Is(err, errEpoll):
			l.eject(c, s, handoffEpoll)
			return
		case err != nil:
			s.lclient = c
			l.serverGone(c, s)
			return
		}
		s.lclient, s.lfatal, s.lblocked = c, false, false
		l.servers.set(s.lfd, s)
		// What the server sent meanwhile is relayed now.
		l.serverReadable(s)
		if !l.owns(c) {
			return
		}
	}
	if l.p.closing.Load() && s == nil {
		c.closeForShutdown()
		l.finish(c)
		return
	}
	// Whatever the client sent meanwhile is read now: the epoll set
	// reports only what arrives from here on.
	l.clientReadable(c)
}

// giveUp hands a client that closed before the loop took it to a
// goroutine, which cleans up after it.
func (l *evLoop) giveUp(c *clientConn) {
	c.raw.toRuntime()
	go c.resume(nil)
}

// owns reports whether the loop owns c (loop goroutine only).
func (l *evLoop) owns(c *clientConn) bool {
	_, ok := l.own[c]
	return ok
}

// forget takes the client out of the loop's set: from here on the loop
// does not touch it.
func (l *evLoop) forget(c *clientConn) {
	fd, ok := l.own[c]
	if !ok {
		return
	}
	delete(l.own, c)
	if l.clients.get(fd) == c {
		l.clients.del(fd)
		l.del(c.raw, fd)
	}
	c.inLoop.Store(false)
}

// finish ends a client the loop closed between transactions.
func (l *evLoop) finish(c *clientConn) {
	l.forget(c)
	c.vanish()
	c.done()
}

// eject hands the client to the goroutine relay, with s (attached on the
// loop, or acquired for it and not set up yet), for what the loop does
// not do itself (why: counted in Snapshot.Handoffs).
func (l *evLoop) eject(c *clientConn, s *serverConn, why handoff) {
	l.p.stats.handoffs[why].Add(1)
	if c.lbig != nil {
		// A message gathered whole (frontend) cannot change drivers:
		// the goroutine relay reads messages from the socket's buffer.
		if s != nil {
			c.pool.putBack(s, reuse)
		}
		c.protocolError(errors.New("a large message could not be relayed"))
		l.afterVanish(c)
		return
	}
	if s == nil {
		c.mu.Lock()
		s = c.server
		c.mu.Unlock()
	}
	l.forget(c)
	c.wmu.Lock()
	if c.w != nil {
		c.w.Flush()
	}
	c.raw.toRuntime()
	c.wmu.Unlock()
	c.lout = false
	if s != nil && s.lclient == c {
		// Attached on the loop: the pump takes over.
		fatal := s.lfatal
		l.dropServer(s)
		s.wmu.Lock()
		s.w.Flush()
		s.leaveLoop()
		s.wmu.Unlock()
		s.lout = false
		c.pumps.Add(1)
		go c.pump(s, fatal)
		s = nil
	}
	go c.resume(s)
}

// resume runs the goroutine relay for a client the loop handed over,
// first setting up the server acquired for it (s, when not nil).
func (c *clientConn) resume(s *serverConn) {
	c.wmu.Lock()
	if c.raw != nil {
		c.raw.flushBlocking()
	}
	c.wmu.Unlock()
	if c.r == nil {
		c.getReader()
	}
	if s != nil {
		if _, err := c.setUp(s, true); err != nil {
			c.send(c.failure(err))
			c.proxy.log.Info("client closed: no server", "user", c.user, "database", c.database, "err", err)
			c.vanish()
			c.done()
			return
		}
	}
	c.run()
}

// flushBlocking writes what nb writes left over, waiting for the socket
// (nb is cleared). The caller holds the writer's lock.
func (r *rawIO) flushBlocking() {
	if r.br != nil {
		r.br.flushBlocking()
		return
	}
	if len(r.pend) > 0 {
		r.write(r.pend, r.writeFn)
		r.pend = nil
	}
}
