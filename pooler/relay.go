package pooler

import (
	"errors"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// relay forwards the client's messages to servers until the client leaves
// (it returns true) or has been idle long enough to wait without a read
// buffer (false: the caller continues on a fresh goroutine, see
// clientConn.run). It runs on the client goroutine; see clientConn for the
// states.
func (c *clientConn) relay() bool {
	p := c.proxy
	// locked is the server whose wmu this goroutine holds while a burst of
	// client messages is written to it; it is flushed and unlocked before
	// the goroutine blocks reading the client.
	var locked *serverConn
	unlock := func() {
		if locked == nil {
			return
		}
		if err := locked.w.Flush(); err != nil {
			locked.close() // the pump sees the failure and reports it
		}
		locked.wmu.Unlock()
		locked = nil
	}
	var err error
	// served is set once the relay waited for the client here: a client
	// woken from the idle poller reads before it may park again.
	served := false
	for {
		if c.r.Buffered() == 0 {
			unlock()
			if c.tracked {
				c.mu.Lock()
				s := c.server
				c.mu.Unlock()
				if s != nil && s.synthHead.Load() {
					c.emitDueSynths(s, true)
				}
			}
		}
		var h []byte
		// batched: the message came in the same read as the one before.
		batched := c.r.Buffered() != 0
		if captureToggle && !batched {
			c.recOff.Store(captureOff.Load())
		}
		if !batched {
			if p.loops != nil && c.loopable() && c.detached() {
				// Between transactions: an event loop waits for the
				// client's next message.
				return false
			}
			if served && p.stats.relaying.Load() > p.budget.Load() && p.idlePoll.ready() && c.detached() {
				// Many clients at once: one between transactions waits
				// in the idle poller right away. The runtime keeps every
				// goroutine it ever ran (and its stack) for reuse, so a
				// goroutine per idle client would cost memory for good.
				return false
			}
			served = true
			c.parkedAt.Store(time.Now().UnixNano())
			h, err = c.r.Peek(headerLen)
			if c.unpark() && err != nil && isTimeout(err) {
				// The janitor found the client idle for a while: it waits
				// on without a read buffer, on a goroutine of its own with
				// a small stack.
				return false
			}
		} else {
			h, err = c.r.Peek(headerLen)
		}
		if err != nil {
			unlock()
			c.vanish()
			return true
		}
		f := c.eng.Frame(h)
		typ, n := f.Type, f.Len
		switch f.Act {
		case engine.Violation:
			unlock()
			c.protocolError(f.Err)
			return true
		case engine.Terminate:
			unlock()
			c.vanish()
			return true
		case engine.Skip:
			if _, err := c.r.Discard(f.Total); err != nil {
				unlock()
				c.vanish()
				return true
			}
			continue
		}
		m, ok, err := c.admit(f, batched, nil)
		if err != nil {
			unlock()
			c.vanish()
			return true
		}
		if !ok {
			continue
		}
		typ, n, body, consumed := m.typ, m.n, m.body, m.consumed
		c.mu.Lock()
		if c.verifying != nil {
			// The pump is reading the server's state (verifyAttached),
			// which needs the server's write lock.
			c.mu.Unlock()
			unlock()
			c.mu.Lock()
			c.waitVerifiedLocked()
		}
		s := c.server
		if s == nil {
			c.mu.Unlock()
			unlock()
			if engine.IgnoredDetached(typ) {
				if _, err := c.r.Discard(headerLen + n); err != nil {
					c.vanish()
					return true
				}
				continue
			}
			if s, err = c.attach(); err != nil {
				if err != errClientClosing {
					c.send(c.failure(err))
					p.log.Info("client closed: no server", "user", c.user, "database", c.database, "err", err)
				}
				c.vanish()
				return true
			}
			c.mu.Lock()
			if c.server != s {
				c.mu.Unlock()
				if consumed {
					// The message was read already; the failed server
					// closes the client anyway.
					c.vanish()
					return true
				}
				continue // the server failed at once; the pump closes the client
			}
		}
		if locked != s {
			if locked != nil {
				locked.wmu.Unlock() // a server that failed meanwhile
			}
			s.wmu.Lock()
			locked = s
		}
		err = c.forward(s, typ, n, body, consumed, m.effs, m.replace)
		if err != nil {
			if errors.Is(err, errWrite) {
				s.close()
				continue
			}
			// The client went away in the middle of a message: the
			// server has half of it and cannot be reused.
			c.mu.Lock()
			c.eng.Broke()
			c.mu.Unlock()
			unlock()
			c.vanish()
			return true
		}
	}
}

// relayBudget is how many clients may wait on a goroutine of their own
// before those between transactions go to the idle poller as soon as they
// wait, rather than after idleNudgeAfter (Proxy.budget; tests lower it).
const relayBudget = 1024

// detached reports whether no server is attached to the client.
func (c *clientConn) detached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server == nil
}

// attach gets a server for the client, sets the client's parameters on
// it and starts the pump.
func (c *clientConn) attach() (*serverConn, error) {
	p := c.proxy
	if p.closing.Load() {
		return nil, errPoolClosed
	}
	// The last pump may still be cleaning its server and reading the
	// client's settings back (preserve): wait for it.
	c.pumps.Wait()
	c.mu.Lock()
	if c.place == engine.Closing {
		// The pump lost the client's server (serverLost) and is closing
		// the client, while this goroutine had its next message: no new
		// server for a client that is closing.
		c.mu.Unlock()
		return nil, errClientClosing
	}
	c.moveLocked(engine.Waiting)
	c.mu.Unlock()
	s, err := c.pool.acquire(p.ctx, time.Now().Add(p.live.waitLimit()), c.params, &c.waiter)
	if err != nil {
		return nil, err
	}
	return c.setUp(s, true)
}

// attachAtLogin attaches the server a client keeps for its session
// (session and record mode) while it logs in: the pump starts only for a
// client that no event loop will relay (an event loop takes the server
// with the client: evLoop.adopt). The choice is made once (c.loopNext),
// so that a shutdown that starts meanwhile cannot leave a server without
// a reader.
func (c *clientConn) attachAtLogin() (*serverConn, error) {
	p := c.proxy
	c.move(engine.Waiting)
	s, err := c.pool.acquire(p.ctx, time.Now().Add(p.live.waitLimit()), c.params, &c.waiter)
	if err != nil {
		return nil, err
	}
	c.loopNext = c.loopable()
	return c.setUp(s, !c.loopNext)
}

// errClientClosing is an attach for a client that is being closed.
var errClientClosing = errors.New("client is closing")

// relayRest copies the last left bytes of a server message to the
// client.
func (c *clientConn) relayRest(s *serverConn, left int) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := copyMessage(c.writer(), s.r, left); err != nil && !errors.Is(err, errWrite) {
		return err
	}
	return nil
}

// pump relays the server's messages to the client while s is attached,
// and releases s when mayRelease says so. fatalSeen carries over from an
// event loop that handed the client over mid-transaction.
func (c *clientConn) pump(s *serverConn, fatalSeen bool) {
	defer c.pumps.Done()
	if rio := s.lrio(); rio != nil && len(rio.pend) > 0 {
		s.wmu.Lock()
		rio.flushBlocking()
		s.wmu.Unlock()
	}
	if left := s.lleft; left > 0 {
		// The rest of a message the loop was streaming.
		s.lleft = 0
		if s.ldrop || c.vanished.Load() {
			_, err := s.r.Discard(left)
			if err != nil {
				c.serverLost(s, fatalSeen)
				return
			}
		} else if err := c.relayRest(s, left); err != nil {
			c.serverLost(s, fatalSeen)
			return
		}
	}
	for {
		if s.r.Buffered() == 0 {
			c.flushClient(false)
		}
		h, err := s.r.Peek(headerLen)
		if err != nil {
			c.serverLost(s, fatalSeen)
			return
		}
		typ, n, ok := engine.ServerHeader(h)
		if !ok {
			c.serverLost(s, fatalSeen)
			return
		}
		if c.serverMessage(s, typ, n, &fatalSeen) != smNext {
			return
		}
	}
}
