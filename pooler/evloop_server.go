//go:build linux

package pooler

import (
	"errors"
	"syscall"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// lrio returns the server's raw socket, or nil behind TLS.
func (s *serverConn) lrio() *rawIO {
	r, _ := s.rio.(*rawIO)
	return r
}

// leaveLoop takes a server that a goroutine is about to use out of the
// event loop that last had it.
func (s *serverConn) leaveLoop() {
	if s.loop != nil {
		epollCtl(s.loop.ep, syscall.EPOLL_CTL_DEL, int(s.lfd), nil)
		s.loop = nil
	}
	if rio := s.lrio(); rio != nil {
		rio.toRuntime()
	}
}

// serverReadable relays the server's answers to its client.
func (l *evLoop) serverReadable(s *serverConn) {
	c := s.lclient
	if c == nil {
		return
	}
	drained := false
	for {
		switch l.backend(c, s) {
		case smReleased, smLost:
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
			drained = short
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
			l.eject(c, s, noSlot)
			return smLost
		}
		if s.r.Buffered() < total {
			return smNext
		}
		if typ == 'Z' && c.mustClean() {
			// Cleaning the server at its release takes round trips.
			l.eject(c, s, noSlot)
			return smLost
		}
		if rio, _ := c.rio.(*rawIO); len(rio.pend) > loopOut {
			s.lblocked = true
			return smNext
		}
		switch r := c.serverMessage(s, typ, n, &s.lfatal); r {
		case smReleased:
			l.released(c, s)
			return r
		case smLost:
			l.dropServer(s)
			l.afterServerLost(c)
			return r
		}
	}
}

// mustClean reports whether the client's server carries session state
// that cleanServer must take off at its release (engine.Client.MustClean).
func (c *clientConn) mustClean() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eng.MustClean()
}

// released runs after serverMessage gave s back to the pool.
func (l *evLoop) released(c *clientConn, s *serverConn) {
	c.mu.Lock()
	gone := c.gone
	c.mu.Unlock()
	switch {
	case gone:
		c.done()
	case l.p.closing.Load():
		// readyForQuery closed the client.
		l.finish(c)
	case c.r != nil && c.r.Buffered() > 0:
		// The client's next transaction is buffered already.
		l.relayClient(c, !c.lmore)
	default:
		if c.r != nil {
			c.putReader()
		}
	}
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
	c.serverLost(s, s.lfatal)
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
	c.mu.Lock()
	gone := c.gone
	c.mu.Unlock()
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
	c.mu.Lock()
	s := c.server
	c.mu.Unlock()
	if s == nil {
		c.done()
		return
	}
	if s.lclient != c {
		return // cannot happen: a loop client's server is on the loop
	}
	// vanish either wrote the clean-up to s (its answers release it) or
	// closed s; a closed socket leaves the epoll set without an event.
	s.wmu.Lock()
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

// serverWritable writes what the server's socket did not take before.
func (l *evLoop) serverWritable(s *serverConn) {
	s.wmu.Lock()
	rio := s.lrio()
	left, _ := rio.flushPend()
	small := len(rio.pend) <= loopOut
	s.wmu.Unlock()
	if !left && s.lout {
		s.lout = false
		l.modify(s.lfd, false)
	}
	if c := s.lclient; c != nil && small && c.eng.Holding() && !c.lwait {
		l.clientReadable(c)
	}
}
