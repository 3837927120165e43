package engine

import (
	"sync"
	"sync/atomic"
)

// What a client sees of a server's protocol statements.
//
// Servers share statements: a client that prepares a text another client
// prepared on the same server gets the server's statement (prepared.go).
// A statement that no client holds any more is of no use to anyone but
// shows in the next client's pg_prepared_statements (drivers' own tests
// count it there). So before a server serves a client (the first message
// after it is attached), it dooms the statements of its cache that no
// client holds (Server.serve): they are closed ahead of that message or,
// when it is a simple Query, ahead of the client's next extended-protocol
// message (a simple Query sent first still sees them). Statements that
// other clients hold now stay and are seen: sharing them is what saves
// the Parse. A held statement from before a schema change stays too: its
// holder gets from it what PostgreSQL gives (0A000 when its result type
// changed) rather than a plan made again behind its back, and no one else
// is given it (names carry the schema epoch).

// stmtRefs counts, per server-side statement name, the clients that hold
// a statement under it (Client.stmts), across loops, with no lock: each
// name has a count of its own (stmtRef) in a map whose entries are
// written once and then only read, which is what sync.Map is for. A
// count that falls to zero retires its entry (-1) unless a client took
// the name meanwhile; a retired entry is taken out of the map by whoever
// finds it, and a client that takes the name then stores a new one.
type stmtRefs struct {
	m sync.Map // name → *stmtRef
	// gen advances whenever a count falls to zero.
	gen atomic.Uint64
}

// stmtRef is one name's count of holders; -1 once retired.
type stmtRef struct{ n atomic.Int64 }

func (r *stmtRefs) ref(name string) {
	for {
		v, ok := r.m.Load(name)
		if !ok {
			v, _ = r.m.LoadOrStore(name, new(stmtRef))
		}
		e := v.(*stmtRef)
		for {
			n := e.n.Load()
			if n < 0 {
				r.m.CompareAndDelete(name, e) // retired: make room
				break
			}
			if e.n.CompareAndSwap(n, n+1) {
				return
			}
		}
	}
}

// unref gives back a ref: the entry it counted in is in the map until
// its count falls to zero.
func (r *stmtRefs) unref(name string) {
	v, ok := r.m.Load(name)
	if !ok {
		return
	}
	e := v.(*stmtRef)
	if e.n.Add(-1) > 0 {
		return
	}
	if e.n.CompareAndSwap(0, -1) {
		r.m.CompareAndDelete(name, e)
	}
	r.gen.Add(1)
}

// held returns how many clients hold a statement under name.
func (r *stmtRefs) held(name string) int64 {
	if v, ok := r.m.Load(name); ok {
		return max(v.(*stmtRef).n.Load(), 0)
	}
	return 0
}

// putStmt gives the client statement st under its name cname.
func (c *Client) putStmt(cname string, st *stmt) {
	if c.stmts == nil {
		c.stmts = make(map[string]*stmt)
	}
	if old := c.stmts[cname]; old != nil {
		c.Limits.Refs.unref(old.srv)
	}
	c.stmts[cname] = st
	c.Limits.Refs.ref(st.srv)
}

// dropStmt takes the client's statement cname away, if it has one.
func (c *Client) dropStmt(cname string) {
	st := c.stmts[cname]
	if st == nil {
		return
	}
	delete(c.stmts, cname)
	c.Limits.Refs.unref(st.srv)
}

// DropStatements forgets every statement of the client's: it has left
// (Vanish). Calling it again does nothing.
func (c *Client) DropStatements() {
	for cname := range c.stmts {
		c.dropStmt(cname)
	}
}

// serve is called with the first message a client sends through a server
// newly attached to it: see the top of this file.
func (s *Server) serve(l *Limits) {
	gen := l.Refs.gen.Load()
	if s.refGen == gen {
		return
	}
	for n := s.lru.head; n != nil; {
		next := n.next
		if l.Refs.held(n.name) == 0 {
			s.doom(n.name)
		}
		n = next
	}
	s.refGen = gen
}
