package pooler

import (
	"slices"
	"sync/atomic"
)

// connCap counts the server connections of one database or one user over
// all its pools, against a cap (max_db_connections, max_user_connections).
// Servers are counted always, with atomics, when a pool opens one and when
// the backend of one it closed has exited (never when it lends or takes
// back one): a cap counts what PostgreSQL counts, and one set by RELOAD or
// SET starts from the true count. max 0 is no cap, and then nothing else
// is done. A pool takes a slot of both its caps before it connects a
// server; a client that finds no slot waits in its pool's queue, and a
// slot given back is offered to the waiting pools under the cap.
type connCap struct {
	n   atomic.Int64 // servers open or being connected
	max atomic.Int64 // 0: no cap
	// starved is set when a client waits because the cap is full, until
	// a wake finds no pool to give a slot to: meanwhile a server given
	// back with no client of its own pool waiting is closed rather than
	// kept idle, so that the waiting pool gets its slot.
	starved atomic.Bool
	// onWay counts the servers closed to make room under the cap whose
	// backends have not exited yet (pool.evict): while a slot is on its
	// way to the waiting pools, a server given back is not closed for
	// them too.
	onWay atomic.Int64

	// pools are the pools under the cap: a slice never changed once
	// stored, replaced whole by add and remove (under Proxy.mu, so they
	// do not race each other), so that wakes and evictions read it
	// without a lock; a pool that left it meanwhile is closed and grants
	// nothing.
	pools atomic.Pointer[[]*pool]
	next  atomic.Int64 // where the next wake starts, for fairness
}

// list returns the pools under the cap.
func (c *connCap) list() []*pool {
	if l := c.pools.Load(); l != nil {
		return *l
	}
	return nil
}

// take reserves a slot, unless the cap is reached.
func (c *connCap) take() bool {
	for {
		n := c.n.Load()
		if m := c.max.Load(); m > 0 && n >= m {
			return false
		}
		if c.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// full reports whether the cap is reached.
func (c *connCap) full() bool {
	m := c.max.Load()
	return m > 0 && c.n.Load() >= m
}

// release gives a slot back and, under a cap, offers it to a waiting pool.
func (c *connCap) release() {
	c.n.Add(-1)
	if c.max.Load() > 0 {
		c.wake()
	}
}

// wake grants a slot to the first pool under the cap (from a rotating
// start) that has a waiting client and room for a server; when none has,
// the cap is no longer starved.
func (c *connCap) wake() {
	pools := c.list()
	n := len(pools)
	start := int(c.next.Load())
	for i := range n {
		if pl := pools[(start+i)%n]; pl.grantCapped() {
			c.next.Store(int64((start + i + 1) % n))
			return
		}
	}
	c.starved.Store(false)
}

// evictIdle closes one idle server of a pool under the cap other than
// except, to make room for except's waiting client; it reports whether it
// found one.
func (c *connCap) evictIdle(except *pool) bool {
	var victim *serverConn
	var from *pool
	for _, pl := range c.list() {
		if pl == except {
			continue
		}
		pl.lock()
		if len(pl.idle) > 0 {
			// The least recently used one.
			victim = pl.idle[0]
			pl.idle = slices.Delete(pl.idle, 0, 1)
			from = pl
		}
		pl.unlock()
		if victim != nil {
			break
		}
	}
	if victim == nil {
		return false
	}
	from.putBack(victim, evictServer)
	return true
}

// evict closes a server of the pool to give its slot to a client waiting
// for a full cap (putBack with evictServer). The slot is on its way (onWay) until the backend has
// exited; when it lands, a cap still starved (its first waiting client
// got the slot, others may wait still) has another idle server closed.
func (p *pool) evict(s *serverConn) {
	p.dbCap.onWay.Add(1)
	p.userCap.onWay.Add(1)
	s.terminate(func() {
		p.dbCap.onWay.Add(-1)
		p.userCap.onWay.Add(-1)
		p.slotFreed()
		for _, c := range []*connCap{p.dbCap, p.userCap} {
			if c.starvedNow() && c.full() && c.evictIdle(nil) {
				return
			}
		}
	})
}

// starvedNow reports whether a client waits for a slot of the cap and no
// slot is on its way to it.
func (c *connCap) starvedNow() bool {
	return c.max.Load() > 0 && c.starved.Load() && c.onWay.Load() == 0
}

// add puts pl under the cap; Proxy.mu is held.
func (c *connCap) add(pl *pool) {
	l := append(slices.Clip(c.list()), pl)
	c.pools.Store(&l)
}

// remove takes pl from under the cap; Proxy.mu is held.
func (c *connCap) remove(pl *pool) {
	old := c.list()
	if i := slices.Index(old, pl); i >= 0 {
		l := slices.Delete(slices.Clone(old), i, i+1)
		c.pools.Store(&l)
	}
}

// takeCaps reserves a slot under both of the pool's caps.
func (p *pool) takeCaps() bool {
	if !p.dbCap.take() {
		return false
	}
	if !p.userCap.take() {
		// Given back without a wake: nobody can have been refused the
		// slot in between but for a moment, and the janitor's wakeCaps
		// offers free slots every second.
		p.dbCap.n.Add(-1)
		return false
	}
	return true
}

// freeCaps gives back the caps' slots of a server that closed (or was
// never connected).
func (p *pool) freeCaps() {
	p.dbCap.release()
	p.userCap.release()
}

// capped marks the pool's full caps as starved and closes an idle server
// of another pool under one of them, after a client of p started to wait
// because a cap is full. p must not be locked.
func (p *pool) capped() {
	for _, c := range []*connCap{p.dbCap, p.userCap} {
		if c.full() {
			c.starved.Store(true)
			if c.evictIdle(p) {
				return
			}
		}
	}
}

// capStarved reports whether a client of another pool waits for a slot of
// one of p's caps that no slot is on its way to (a cheap check: two
// atomic loads when no cap is set).
func (p *pool) capStarved() bool { return p.dbCap.starvedNow() || p.userCap.starvedNow() }

// grantCapped gives a slot freed under a cap to the pool's first waiting
// client, when it has one and room for a server.
func (p *pool) grantCapped() bool {
	p.lock()
	if p.closed || p.waiters.Len() == 0 || p.open >= p.size || !p.takeCaps() {
		p.unlock()
		return false
	}
	w := p.popWaiter()
	p.open++
	p.unlock()
	w.give(nil)
	return true
}

// capFor returns the counter of name in caps, making it; p.mu is held.
func capFor(caps map[string]*connCap, name string, max int) *connCap {
	c := caps[name]
	if c == nil {
		c = &connCap{}
		caps[name] = c
	}
	c.max.Store(int64(max))
	return c
}

// dbCapMax is the server connection cap of database name: its entry's
// max_db_connections, else the global one.
func (p *Proxy) dbCapMax(name string) int {
	if db, ok := p.database(name); ok && db.MaxDBConnections > 0 {
		return db.MaxDBConnections
	}
	return p.live.Load().MaxDBConnections
}

// applyCaps sets every cap from the configuration (after RELOAD or SET)
// and offers the slots a raised cap frees to the waiting pools.
func (p *Proxy) applyCaps() {
	p.mu.Lock()
	var caps []*connCap
	for name, c := range p.dbCaps {
		c.max.Store(int64(p.dbCapMax(name)))
		caps = append(caps, c)
	}
	for _, c := range p.userCaps {
		c.max.Store(int64(p.live.Load().MaxUserConnections))
		caps = append(caps, c)
	}
	p.mu.Unlock()
	for _, c := range caps {
		for c.wakeOne() {
		}
	}
}

// wakeOne grants one slot if a pool under the cap waits and the cap has
// room; it reports whether it did.
func (c *connCap) wakeOne() bool {
	if c.full() {
		return false
	}
	for _, pl := range c.list() {
		if pl.grantCapped() {
			return true
		}
	}
	return false
}

// wakeCaps offers the free slots of every cap to the pools that wait (the
// janitor's safety net for a slot given back while a client was about to
// wait).
func (p *Proxy) wakeCaps() {
	p.mu.Lock()
	var caps []*connCap
	for _, c := range p.dbCaps {
		if c.max.Load() > 0 {
			caps = append(caps, c)
		}
	}
	for _, c := range p.userCaps {
		if c.max.Load() > 0 {
			caps = append(caps, c)
		}
	}
	p.mu.Unlock()
	for _, c := range caps {
		for c.wakeOne() {
		}
	}
}
