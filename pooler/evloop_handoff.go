package pooler

import ()

// adopt takes a client from its goroutine or from login: between
// transactions (nothing attached), or, in session and record mode, with
// the server it keeps for its session (taken with it: watch).
func (l *evLoop) adopt(c *clientConn) {
	fd, err := l.take(c.raw)
	if err != nil {
		c.loop.Store(nil)
		go c.closed() // closed meanwhile
		return
	}
	// A descriptor reused after a close the loop did not see is simply
	// taken over.
	l.own[c] = fd
	l.clients.set(fd, c)
	if c.kill.Load() != nil {
		c.shutRead() // ended on its way here (end): read to the end below
	}
	s := c.server
	if s != nil {
		if err := l.watch(s); err != nil {
			s.lclient = c
			l.serverGone(c, s)
			return
		}
		s.lclient, s.lblocked = c, false
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
	l.touch(c, true)
}

// take makes the loop watch rio's socket and returns its key in the
// loop's tables: its descriptor, or a bridge's token when it has none or
// the epoll set refuses it (max_user_watches): it is bridged then.
func (l *evLoop) take(rio *rawIO) (int32, error) {
	fd, err := rio.toRaw()
	if err != nil {
		return -1, err
	}
	if err := l.add(rio, int32(fd)); err != nil {
		if fd, err = rio.toBridge(); err != nil {
			return -1, err
		}
		l.p.stats.bridged.Add(1)
		l.add(rio, int32(fd))
	}
	return int32(fd), nil
}

// closed ends a client whose socket closed before a loop took it.
func (c *clientConn) closed() {
	c.vanish()
	c.done()
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
	c.loop.Store(nil)
}

// finish ends a client the loop closed between transactions.
func (l *evLoop) finish(c *clientConn) {
	l.forget(c)
	c.vanish()
	c.done()
}

// flushBlocking writes what nb writes left over, waiting for the socket
// (nb is cleared). The caller holds the writer's lock.
func (r *rawIO) flushBlocking() {
	if r.br != nil {
		r.br.flushBlocking()
		return
	}
	if len(r.pend) > 0 {
		r.write(r.pend)
		r.pend = nil
	}
}
