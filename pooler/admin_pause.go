package pooler

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync/atomic"
	"time"
)

// What the console's PAUSE, RESUME, DISABLE, ENABLE, RECONNECT and WAIT_CLOSE
// do to pools, and pool resizing.

// resize changes the pool size; waiters get the new slots.
func (p *pool) resize(n int) {
	p.lock()
	p.size = n
	var grant []*waiter
	for p.open < p.size && !p.closed && p.waiters.Len() > 0 && p.takeCaps() {
		w := p.popWaiter()
		p.open++
		grant = append(grant, w)
	}
	p.unlock()
	for _, w := range grant {
		w.give(nil)
	}
}

// pauseState is the console's PAUSE: all databases, or some.
type pauseState struct {
	// cur is what is paused now; nil while nothing is. It needs no lock:
	// a pauseSnap is never changed once published, and PAUSE, RESUME and
	// KILL publish a new one with CompareAndSwap, retrying when another
	// console client published first, so each decides on the snapshot it
	// replaces and exactly one of them closes its channel.
	cur atomic.Pointer[pauseSnap]
}

// pauseSnap is one published state of PAUSE, never changed. resumed is
// closed by the RESUME or KILL (kick) that replaces the snapshot; a PAUSE
// of one more database passes it on to its new snapshot instead, so the
// clients waiting on it wait on.
type pauseSnap struct {
	all     bool
	dbs     map[string]bool
	resumed chan struct{}
}

// state returns what s pauses; a nil s pauses nothing.
func (s *pauseSnap) state() (all bool, dbs map[string]bool) {
	if s == nil {
		return false, nil
	}
	return s.all, s.dbs
}

// pausedNow returns whether everything is paused and the databases paused
// one by one.
func (p *Proxy) pausedNow() (bool, []string) {
	s := p.pause.cur.Load()
	if s == nil {
		return false, nil
	}
	var dbs []string
	for db := range s.dbs {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	return s.all, dbs
}

// pauseDB pauses db ("" for all databases).
func (p *Proxy) pauseDB(db string) error {
	ps := &p.pause
	for {
		old := ps.cur.Load()
		all, dbs := old.state()
		switch {
		case all:
			return &adminError{code: "55000", msg: "already paused"}
		case db != "" && dbs[db]:
			return &adminError{code: "55000", msg: fmt.Sprintf("database %q is already paused", db)}
		case isAdminDatabase(db):
			return adminErrorf("cannot pause the admin console")
		}
		next := &pauseSnap{all: all, dbs: dbs}
		if old != nil {
			next.resumed = old.resumed
		} else {
			next.resumed = make(chan struct{})
		}
		if db == "" {
			next.all = true
		} else {
			next.dbs = make(map[string]bool, len(dbs)+1)
			maps.Copy(next.dbs, dbs)
			next.dbs[db] = true
		}
		if ps.cur.CompareAndSwap(old, next) {
			return nil
		}
	}
}

// resumeDB resumes db ("" for everything).
func (p *Proxy) resumeDB(db string) error {
	ps := &p.pause
	for {
		old := ps.cur.Load()
		all, dbs := old.state()
		switch {
		case db == "" && !all && len(dbs) == 0:
			return &adminError{code: "55000", msg: "nothing is paused"}
		case db != "" && all:
			return &adminError{code: "55000", msg: "all databases are paused: RESUME without a database name"}
		case db != "" && !dbs[db]:
			return &adminError{code: "55000", msg: fmt.Sprintf("database %q is not paused", db)}
		}
		// Nothing paused is a nil snapshot; the others get a channel of
		// their own, as old's is closed.
		var next *pauseSnap
		if db != "" && len(dbs) > 1 {
			next = &pauseSnap{dbs: make(map[string]bool, len(dbs)-1), resumed: make(chan struct{})}
			for d := range dbs {
				if d != db {
					next.dbs[d] = true
				}
			}
		}
		if ps.cur.CompareAndSwap(old, next) {
			close(old.resumed)
			return nil
		}
	}
}

// waitPaused waits, up to the shutdown timeout, until no server of a
// paused pool is attached to a client; it returns how many still are.
func (p *Proxy) waitPaused(db string) int {
	deadline := time.Now().Add(p.cfg.ShutdownTimeout)
	for {
		n := 0
		for _, ps := range p.Snapshot().Pools {
			if db == "" || ps.Database == db {
				n += ps.ServersActive + ps.ServersUsed
			}
		}
		if n == 0 || time.Now().After(deadline) || p.closing.Load() {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// active reports whether anything is paused (acquire's only check).
func (ps *pauseState) active() bool { return ps.cur.Load() != nil }

// paused reports whether db is paused (all databases or db by name).
func (ps *pauseState) paused(db string) bool {
	s := ps.cur.Load()
	return s != nil && (s.all || s.dbs[db])
}

// pauseWait holds a client that wants a server of a paused pool until it
// is resumed, the deadline passes, ctx ends or KILL closes the client of
// its waiter w (nil: none).
func (pl *pool) pauseWait(ctx context.Context, deadline time.Time, w *waiter) error {
	ps := &pl.proxy.pause
	var t *time.Timer
	counted := false
	defer func() {
		if t != nil {
			t.Stop()
		}
		if counted {
			pl.ctr.pauseWaiting.Add(-1)
		}
	}()
	for {
		s := ps.cur.Load()
		if w.killed() {
			return errKilled
		}
		if s == nil || !(s.all || s.dbs[pl.key.database]) {
			return nil
		}
		if t == nil {
			t = time.NewTimer(time.Until(deadline))
			counted = true
			pl.ctr.pauseWaiting.Add(1)
		}
		select {
		case <-s.resumed:
		case <-t.C:
			return errWaitTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// setDisabled refuses (or admits again) new logins to db; its connected
// clients stay.
func (p *Proxy) setDisabled(db string, off bool) {
	for {
		old := p.disabled.Load()
		var cur map[string]bool
		if old != nil {
			cur = *old
		}
		if cur[db] == off {
			return
		}
		next := maps.Clone(cur)
		if off {
			if next == nil {
				next = make(map[string]bool)
			}
			next[db] = true
		} else {
			delete(next, db)
		}
		if p.disabled.CompareAndSwap(old, &next) {
			return
		}
	}
}

func (p *Proxy) isDisabled(db string) bool {
	m := p.disabled.Load()
	return m != nil && (*m)[db]
}

// matchingPools returns the pools of db ("" for all).
func (p *Proxy) matchingPools(db string) []*pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pool
	for k, pl := range p.pools {
		if db == "" || k.database == db {
			out = append(out, pl)
		}
	}
	return out
}

// reconnect closes the servers of db ("" for all) connected before now:
// the idle ones at once, the others when their clients give them back
// (PgBouncer's RECONNECT, after the server moved or its settings changed).
func (p *Proxy) reconnect(db string, now time.Time) {
	for _, pl := range p.matchingPools(db) {
		pl.lock()
		pl.reconnectBefore = now
		pl.unlock()
		pl.reap(time.Now())
	}
}

// waitClosed waits until the servers a RECONNECT of db asked to close are
// closed, at most the shutdown timeout, and returns how many are left.
func (p *Proxy) waitClosed(db string) int {
	deadline := time.Now().Add(p.cfg.ShutdownTimeout)
	for {
		before := map[poolKey]time.Time{}
		for _, pl := range p.matchingPools(db) {
			pl.lock()
			before[pl.key] = pl.reconnectBefore
			pl.unlock()
		}
		n := 0
		for _, s := range p.Snapshot().Servers {
			if t, ok := before[poolKey{database: s.Database, user: s.User}]; ok && s.ConnectTime.Before(t) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) || p.closing.Load() {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
