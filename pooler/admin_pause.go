package pooler

import (
	"context"
	"fmt"
	"sort"
	"sync"
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
	// on is set while anything is paused (acquire's only check).
	on      atomic.Bool
	mu      sync.Mutex
	all     bool
	dbs     map[string]bool
	resumed chan struct{}
}

// pausedNow returns whether everything is paused and the databases paused
// one by one.
func (p *Proxy) pausedNow() (bool, []string) {
	ps := &p.pause
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var dbs []string
	for db := range ps.dbs {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	return ps.all, dbs
}

// pauseDB pauses db ("" for all databases).
func (p *Proxy) pauseDB(db string) error {
	ps := &p.pause
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case ps.all:
		return &adminError{code: "55000", msg: "already paused"}
	case db != "" && ps.dbs[db]:
		return &adminError{code: "55000", msg: fmt.Sprintf("database %q is already paused", db)}
	case isAdminDatabase(db):
		return adminErrorf("cannot pause the admin console")
	}
	if ps.resumed == nil {
		ps.resumed = make(chan struct{})
	}
	if db == "" {
		ps.all = true
	} else {
		if ps.dbs == nil {
			ps.dbs = make(map[string]bool)
		}
		ps.dbs[db] = true
	}
	ps.on.Store(true)
	return nil
}

// resumeDB resumes db ("" for everything).
func (p *Proxy) resumeDB(db string) error {
	ps := &p.pause
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case db == "" && !ps.all && len(ps.dbs) == 0:
		return &adminError{code: "55000", msg: "nothing is paused"}
	case db != "" && ps.all:
		return &adminError{code: "55000", msg: "all databases are paused: RESUME without a database name"}
	case db != "" && !ps.dbs[db]:
		return &adminError{code: "55000", msg: fmt.Sprintf("database %q is not paused", db)}
	}
	if db == "" {
		ps.all, ps.dbs = false, nil
	} else {
		delete(ps.dbs, db)
	}
	close(ps.resumed)
	ps.resumed = nil
	if ps.all || len(ps.dbs) > 0 {
		ps.resumed = make(chan struct{})
	} else {
		ps.on.Store(false)
	}
	return nil
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

// paused reports whether db is paused (all databases or db by name).
func (ps *pauseState) paused(db string) bool {
	if !ps.on.Load() {
		return false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.all || ps.dbs[db]
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
		ps.mu.Lock()
		ch := ps.resumed
		paused := ps.all || ps.dbs[pl.key.database]
		ps.mu.Unlock()
		if w.killed() {
			return errKilled
		}
		if !paused || ch == nil {
			return nil
		}
		if t == nil {
			t = time.NewTimer(time.Until(deadline))
			counted = true
			pl.ctr.pauseWaiting.Add(1)
		}
		select {
		case <-ch:
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if !off {
		delete(p.disabled, db)
		return
	}
	if p.disabled == nil {
		p.disabled = make(map[string]bool)
	}
	p.disabled[db] = true
}

func (p *Proxy) isDisabled(db string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disabled[db]
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
