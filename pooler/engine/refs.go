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
// a statement under it (Client.stmts). Its lock is a leaf, held for a
// map update when a client prepares, closes or leaves, and for a pass
// over one server's cache when a count fell to zero since that server
// last served.
type stmtRefs struct {
	mu sync.Mutex
	n  map[string]int
	// gen advances whenever a count falls to zero.
	gen atomic.Uint64
}

func (r *stmtRefs) ref(name string) {
	r.mu.Lock()
	if r.n == nil {
		r.n = make(map[string]int)
	}
	r.n[name]++
	r.mu.Unlock()
}

func (r *stmtRefs) unref(name string) {
	r.mu.Lock()
	if r.n[name] <= 1 {
		delete(r.n, name)
		r.gen.Add(1)
	} else {
		r.n[name]--
	}
	r.mu.Unlock()
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
	l.Refs.mu.Lock()
	for n := s.lru.head; n != nil; {
		next := n.next
		if l.Refs.n[n.name] == 0 {
			s.doom(n.name)
		}
		n = next
	}
	l.Refs.mu.Unlock()
	s.refGen = gen
}
