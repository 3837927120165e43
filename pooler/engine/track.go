package engine

import (
	"bytes"
	"fmt"
	"strconv"
)

// PlanAction is what happens to the client's message itself.
type PlanAction uint8

const (
	PlanRaw     PlanAction = iota // forward unchanged
	PlanDrop                      // answered or refused by the pooler: not sent
	PlanRename                    // sent with the statement name replaced
	PlanReplace                   // a simple Query sent with other text (replace)
)

// Plan is what the driver sends to the server for one client message.
type Plan struct {
	// Closes are statements the server must not use again (doomed): a
	// Close for each is sent first.
	Closes []string
	// CloseName, when set, is a statement evicted from the server's
	// cache: a Close is sent first (after Closes).
	CloseName string
	// Inject is set for a Parse the pooler sends before the message
	// (InjName, InjRest); InjSync for a Sync sent after it.
	Inject  bool
	InjSync bool
	InjName string
	InjRest []byte
	Action  PlanAction
	// NewName replaces the statement name (Parse, Bind, Describe); Skip
	// is how many body bytes of the original the replacement covers
	// (for Bind: portal and statement name with their NULs).
	NewName string
	Head    []byte // Bind: the portal name; Describe: the kind byte
	Tail    []byte // Parse: the rest of the body after the name
	Skip    int
	Replace string
	// Effects are what a Bind's statement does to session state when it
	// runs (Send applies them).
	Effects []StateEffect
	// PinChanged says that the message changed the client's pin to its
	// server, to Pinned (Send).
	Pinned, PinChanged bool
}

// Server is the protocol state of one server connection that prepared-
// statement tracking keeps: the statements it holds, the responses it
// owes, whose unnamed statement it has. Like Client it has no lock: it is
// used by the owner of the client the server is attached to.
type Server struct {
	lru          stmtLRU
	q            pendQueue
	unnamedOwner *Client
	unnamedGen   uint64
	// qseq counts the simple Queries and Executes sent (for DEALLOCATE
	// ALL and DISCARD ALL).
	qseq uint64
	// skipping is set when an extended-protocol message failed and no
	// Sync has been sent since: the server skips every message up to the
	// next Sync.
	skipping bool
	// doomed are statements the server holds that must not be used
	// again: they are closed before the server's next extended-protocol
	// message (Plan.Closes) and are not in lru meanwhile.
	doomed []string
	// txNew are the statements added to lru since the server's last
	// ReadyForQuery with status I, and txUndone says that something of
	// that transaction was rolled back since (a ROLLBACK, ROLLBACK TO or
	// an error): see Server.ready.
	txNew    []string
	txUndone bool
	// txSchema says that a schema change (schemaChangeTag) ran in the
	// server's current transaction: its end starts a new epoch again.
	txSchema bool
	// refGen is the generation of the statement counts when the server
	// last served a client (serve).
	refGen uint64
}

// addStmt records that the server holds (or is about to hold) statement
// name, added at query sequence number seq.
func (s *Server) addStmt(name string, seq uint64) {
	s.lru.add(name, seq)
	s.txNew = append(s.txNew, name)
}

// doom takes statement name off the server's cache and has it closed
// before the server's next extended-protocol message.
func (s *Server) doom(name string) {
	if s.lru.m[name] == nil {
		return
	}
	s.lru.remove(name)
	s.doomed = append(s.doomed, name)
}

// ready takes a ReadyForQuery with status: at the end of a transaction
// (status I) in which something was rolled back, the statements first
// prepared on the server in it are doomed. Parse analysis resolved them
// against the catalog as the transaction saw it, and PostgreSQL keeps
// protocol statements across a rollback: one planned against a type or
// table the transaction created is left pointing at an object that no
// longer exists ("cache lookup failed for type N" for every client that
// would share it). A ROLLBACK TO SAVEPOINT undoes part of a transaction
// only; which statements depended on what it undid is not known, so all
// of the transaction's new ones go.
//
// A schema change in the transaction started a new epoch when it ran, so
// that the client's own later statements were not taken for older ones;
// other clients preparing meanwhile still saw the catalog as before it,
// so its end (commit or rollback) starts another.
func (s *Server) ready(status byte, l *Limits) {
	if status != 'I' {
		return
	}
	if s.txUndone {
		for _, name := range s.txNew {
			s.doom(name)
		}
	}
	if s.txSchema {
		l.advanceEpoch()
	}
	clear(s.txNew)
	s.txNew, s.txUndone, s.txSchema = s.txNew[:0], false, false
}

// takeDoomed plans the Close of every doomed statement (their answers are
// swallowed) and forgets them.
func (s *Server) takeDoomed(pl *Plan) {
	if len(s.doomed) == 0 {
		return
	}
	for _, name := range s.doomed {
		s.q.push(pend{kind: pkInjClose, name: name, doomed: true})
	}
	pl.Closes = append(pl.Closes, s.doomed...)
	s.doomed = nil
}

// Counters are what tracking counts for the driver (Client.Send adds
// to them).
type Counters struct {
	ClientParses, ServerParses, Binds, Evictions int64
}

// Statements is the number of the client's named protocol statements.
func (c *Client) Statements() int { return len(c.stmts) }

// Statements is the number of server-side statements the server holds.
func (s *Server) Statements() int { return s.lru.len() }

// Pending is the number of responses the server still owes.
func (s *Server) Pending() int { return s.q.len() }

// ResetQueue forgets the pending responses (a server newly attached owes
// none).
func (s *Server) ResetQueue() { s.q.reset() }

// ExpectQuery notes a simple Query the pooler sends itself in the
// client's stream (the clean-up after a client left): everything up to its
// ReadyForQuery is owed.
func (s *Server) ExpectQuery() {
	s.SimpleQuery()
	s.q.push(pend{kind: pkQuery})
}

// SimpleQuery notes a simple Query the pooler sends on the server (to set
// it up or clean it): PostgreSQL drops the unnamed statement then, so no
// client's unnamed statement is there any more.
func (s *Server) SimpleQuery() { s.unnamedOwner = nil }

// SynthDue reports whether an answer of the pooler's own is at the head of
// the queue: due now, with nothing before it.
func (s *Server) SynthDue() bool {
	f := s.q.front()
	return f != nil && f.kind == pkSynth
}

// PopSynth returns the next due answer of the pooler's own, or nil.
func (s *Server) PopSynth() []byte {
	if !s.SynthDue() {
		return nil
	}
	return s.q.pop().msg
}

// backend matches a server message of type typ that may complete a
// pending entry (MayComplete) against the queue. It reports whether the
// message goes on to the client: not when it answers a Parse or Close the
// pooler sent itself. body is the message body when the driver has it
// (small CommandComplete messages), else nil.
func (c *Client) backend(s *Server, typ byte, body []byte) (forward bool) {
	forward = true
	switch {
	case typ == 'E':
		s.txUndone = true
	case typ == 'Z' && len(body) == 1:
		s.ready(body[0], c.Limits)
	}
	e := s.q.front()
	if e == nil {
		return true
	}
	if (e.kind == pkQuery || e.kind == pkExecute) && typ == 'C' && body != nil {
		if tag, _, _ := CString(body); isRollbackTag(tag) {
			s.txUndone = true
		}
		if isDeallocateAllTag(body) {
			s.lru.removeBefore(e.seq)
			for name, st := range c.stmts {
				if st.seq < e.cseq {
					c.dropStmt(name)
				}
			}
		} else if tag, _, _ := CString(body); schemaChangeTag(tag) {
			if bytes.Equal(tag, []byte("DROP TABLE")) && c.Session.holds() && c.Session.tempDrops > 0 {
				// The client's own temporary table: only its private
				// statements could name it, and they are named by the
				// generation of its temporary objects.
				c.Session.tempDrops--
			} else {
				c.Limits.advanceEpoch()
				s.txSchema = true
			}
		}
	}
	if typ == 'E' && e.kind == pkQuery && e.undo != nil {
		c.deallocateFailed(s, e)
	}
	if typ == 'E' && body != nil && isStalePlan(body) {
		// A statement planned against objects that changed since (a
		// schema change made elsewhere): the client will prepare it again,
		// and that Parse must reach the server.
		c.Limits.advanceEpoch()
	}
	if done, failed := completes(e.kind, typ); done {
		ent := s.q.pop()
		switch ent.kind {
		case pkInjParse, pkInjClose:
			forward = failed
		case pkInjSync:
			forward = false
		}
		if failed {
			c.entryFailed(s, &ent)
			for f := s.q.front(); f != nil && !f.kind.syncs(); f = s.q.front() {
				dropped := s.q.pop()
				c.entryDropped(s, &dropped)
			}
			f := s.q.front()
			// No Sync sent yet: the messages still to come up to it
			// are skipped too.
			s.skipping = f == nil
			if f != nil && f.kind == pkInjSync {
				// The pooler's own Sync ends the skip before the
				// client's message, which has an answer of its own.
				forward = false
			}
		}
	}
	return forward
}

// pushSynth queues an answer of the pooler's own. When nothing is pending
// before it, it is due at once (SynthDue).
func (s *Server) pushSynth(msg []byte) {
	s.q.push(pend{kind: pkSynth, msg: msg})
}

// makeRoom evicts the least recently used statement of a full cache and
// returns its name for a Close ("" when there is room).
func (c *Client) makeRoom(s *Server, ctr *Counters) string {
	if s.lru.len() < c.Limits.MaxPrepared {
		return ""
	}
	name := s.lru.oldest()
	s.lru.remove(name)
	s.q.push(pend{kind: pkInjClose, name: name})
	ctr.Evictions++
	return name
}

// ensureNamed makes sure the server will hold st when the next message
// reaches it, planning a Parse (and an eviction) if it does not.
func (c *Client) ensureNamed(s *Server, st *stmt, pl *Plan, ctr *Counters) {
	if s.lru.touch(st.srv) {
		return
	}
	pl.CloseName = c.makeRoom(s, ctr)
	pl.Inject, pl.InjName, pl.InjRest = true, st.srv, st.rest
	s.addStmt(st.srv, s.qseq)
	s.q.push(pend{kind: pkInjParse, name: st.srv})
	ctr.ServerParses++
}

// ensureUnnamed makes the server's unnamed statement the client's current
// one, or makes sure the server has none when the client has none.
func (c *Client) ensureUnnamed(s *Server, pl *Plan, ctr *Counters) {
	if s.unnamedOwner == c && s.unnamedGen == c.unnamedGen {
		return
	}
	if c.unnamed == nil {
		if s.unnamedOwner != nil {
			pl.CloseName = "\x00unnamed" // see writePlan
			s.q.push(pend{kind: pkInjClose, name: "\x00unnamed"})
			s.unnamedOwner = nil
		}
		return
	}
	pl.Inject, pl.InjName, pl.InjRest = true, "", c.unnamed
	s.q.push(pend{kind: pkInjParse, seq: c.unnamedGen})
	s.unnamedOwner, s.unnamedGen = c, c.unnamedGen
	ctr.ServerParses++
}

// sqlDeallocate handles a query that is `DEALLOCATE name` for one of the
// client's protocol statements, st (the server knows it as st.srv): the
// statement leaves the client's map and the server's cache, and the
// caller sends the command with st.srv. held says that the server holds
// st.srv. Otherwise the plan first closes whatever the server may still
// hold under that name (a doomed copy) and has it hold a placeholder, an
// empty statement, under it: the command then gets PostgreSQL's own
// answer, success or a failed transaction's refusal, whatever the
// statement's text would do now. st is nil for any other query, which
// goes to the server unchanged, and while the server skips to a Sync.
func (c *Client) sqlDeallocate(s *Server, query []byte, pl *Plan) (cname string, st *stmt, held bool) {
	if len(c.stmts) == 0 || s.skipping {
		return "", nil, false // nothing of the client's to deallocate, or skipped
	}
	name, ok := deallocateTarget(query)
	if !ok {
		return "", nil, false
	}
	st = c.stmts[name]
	if st == nil {
		return "", nil, false // an SQL-level statement, or an error from the server
	}
	held = s.lru.touch(st.srv)
	if held {
		s.lru.remove(st.srv)
	} else {
		pl.CloseName = st.srv
		s.q.push(pend{kind: pkInjClose, name: st.srv, doomed: true})
		pl.Inject, pl.InjName, pl.InjRest = true, st.srv, placeholderParse
		s.q.push(pend{kind: pkInjParse, name: st.srv})
	}
	c.dropStmt(name)
	return name, st, held
}

// placeholderParse is the body of a Parse after its name: the empty
// query, no parameter types.
var placeholderParse = []byte{0, 0, 0}

// deallocateFailed undoes a SQL DEALLOCATE that failed or never ran (a
// failed transaction refuses it, and its Parse in the extended protocol):
// the client's statement is back, and the server's copy too when it had
// one; a placeholder the server may hold is closed before its next
// extended-protocol message.
func (c *Client) deallocateFailed(s *Server, e *pend) {
	if _, ok := c.stmts[e.cname]; !ok {
		c.putStmt(e.cname, e.undo)
	}
	switch srv := e.undo.srv; {
	case s.lru.m[srv] != nil:
	case e.held:
		s.lru.add(srv, 0)
	default:
		s.doomed = append(s.doomed, srv)
	}
	e.undo = nil
}

// Frontend records what client message typ does and plans how it is
// sent; s is the attached server. body is the message body (for a Bind or
// a Query, at least its start), n the body's length.
//
// After an extended-protocol message failed, PostgreSQL ignores every
// message up to the next Sync, including those the client sends after
// the error reached the pooler (a pipelining client such as psycopg 3
// sends the rest of its pipeline later): while s.skipping, what such a
// message would have done is undone at once and no response is expected
// for it.
func (c *Client) frontend(s *Server, typ byte, body []byte, n int, ctr *Counters) Plan {
	if c.fresh {
		c.fresh = false
		s.serve(c.Limits)
	}
	var pl Plan
	mark := len(s.q.buf)
	switch typ {
	case 'P', 'B', 'D', 'E', 'C', 'S', 'H':
		// Closed ahead of an extended-protocol message only: after a
		// Close that failed, the server skips every message up to a
		// Sync, which a simple Query does not bring (and none may come
		// between the messages of a COPY). Not while the server skips
		// (a Sync among them would bring no CloseComplete).
		if len(s.doomed) > 0 && !s.skipping {
			s.takeDoomed(&pl)
		}
	}
	skipped := s.skipping && typ != 'S'
	c.planFrontend(s, typ, body, n, ctr, &pl)
	if !skipped {
		return pl
	}
	for i := mark; i < len(s.q.buf); i++ {
		c.entryDropped(s, &s.q.buf[i])
	}
	clear(s.q.buf[mark:])
	s.q.buf = s.q.buf[:mark]
	return pl
}

// planFrontend is Frontend for a server that is not skipping; it fills
// pl.
func (c *Client) planFrontend(s *Server, typ byte, body []byte, n int, ctr *Counters, pl *Plan) {
	switch typ {
	case 'P':
		if r := c.rejectParse; r != nil {
			c.rejectParse = nil
			s.pushSynth(r)
			c.skipTillSync = true
			pl.Action = PlanDrop
			return
		}
		effs := c.parseEffs
		c.parseEffs = nil
		name, rest, ok := CString(body)
		if !ok {
			s.q.push(pend{kind: pkParse, name: "\x00invalid"})
			return
		}
		ctr.ClientParses++
		if len(name) == 0 {
			var e pend
			if text, after, ok := CString(rest); ok {
				if cname, st, held := c.sqlDeallocate(s, text, pl); st != nil {
					// The unnamed statement deallocates one of the
					// client's protocol statements: sent as its server
					// name.
					rest = append(append([]byte("DEALLOCATE "+st.srv), 0), after...)
					pl.Action, pl.NewName, pl.Tail, pl.Skip = PlanRename, "", rest, len(body)
					e.cname, e.undo, e.held = cname, st, held
				}
			}
			c.unnamedEffs = effs
			c.unnamed = append(c.unnamed[:0], rest...)
			c.unnamedGen++
			s.unnamedOwner, s.unnamedGen = c, c.unnamedGen
			e.kind, e.seq = pkParse, c.unnamedGen
			s.q.push(e)
			ctr.ServerParses++
			return
		}
		if c.stmts == nil {
			c.stmts = make(map[string]*stmt)
		}
		cname := string(name)
		if _, dup := c.stmts[cname]; dup {
			s.pushSynth(ErrorResponse("ERROR", "42P05", fmt.Sprintf("prepared statement %q already exists", name), ""))
			c.skipTillSync = true
			pl.Action = PlanDrop
			return
		}
		ctx := c.stmtContext()
		if readsPortal(rest) {
			// Never taken from the server's cache, not even the
			// client's own (see readsPortal): a name of its own.
			ctx = "portal " + strconv.FormatUint(nonces.Add(1), 10)
		}
		srv := serverStmtName(serverStmtBase(rest, ctx), c.Limits.Epoch.Load())
		st := &stmt{srv: srv, rest: append([]byte(nil), rest...), seq: c.qseq, effs: effs}
		c.putStmt(cname, st)
		pl.Action = PlanRename
		pl.NewName, pl.Tail, pl.Skip = st.srv, st.rest, len(body)
		if s.lru.touch(st.srv) {
			s.pushSynth(msgParseComplete)
			s.q.buf[len(s.q.buf)-1].name, s.q.buf[len(s.q.buf)-1].cname = st.srv, cname
			pl.Action = PlanDrop
			return
		}
		pl.CloseName = c.makeRoom(s, ctr)
		s.addStmt(st.srv, s.qseq)
		s.q.push(pend{kind: pkParse, name: st.srv, cname: cname})
		ctr.ServerParses++
	case 'B':
		ctr.Binds++
		portal, rest, ok := CString(body)
		var name []byte
		if ok {
			name, _, ok = CString(rest)
		}
		if ok {
			var effs []StateEffect
			if len(name) == 0 {
				c.ensureUnnamed(s, pl, ctr)
				effs = c.unnamedEffs
			} else if st := c.stmts[string(name)]; st != nil {
				c.ensureNamed(s, st, pl, ctr)
				pl.Action = PlanRename
				pl.NewName, pl.Head, pl.Skip = st.srv, portal, len(portal)+1+len(name)+1
				effs = st.effs
			}
			pl.Effects = effs
		}
		s.q.push(pend{kind: pkBind})
	case 'D':
		if len(body) < 2 || body[0] != 'S' {
			s.q.push(pend{kind: pkDescribeP})
			return
		}
		if name, _, ok := CString(body[1:]); ok {
			if len(name) == 0 {
				c.ensureUnnamed(s, pl, ctr)
			} else if st := c.stmts[string(name)]; st != nil {
				c.ensureNamed(s, st, pl, ctr)
				pl.Action = PlanRename
				pl.NewName, pl.Head, pl.Skip = st.srv, body[:1], len(body)
			}
		}
		s.q.push(pend{kind: pkDescribeS})
	case 'C':
		if len(body) >= 2 && body[0] == 'S' {
			if name, _, ok := CString(body[1:]); ok {
				if len(name) == 0 {
					c.unnamed = nil
					s.unnamedOwner = nil
				} else {
					// The client's statement only: others may share the
					// server's statement, which stays cached.
					st := c.stmts[string(name)]
					c.dropStmt(string(name))
					s.pushSynth(msgCloseComplete)
					s.q.buf[len(s.q.buf)-1].cname, s.q.buf[len(s.q.buf)-1].undo = string(name), st
					pl.Action = PlanDrop
					return
				}
			}
		}
		s.q.push(pend{kind: pkClose})
	case 'E':
		// Numbered like a simple Query: it may run DEALLOCATE ALL or
		// DISCARD ALL (see backend).
		s.qseq++
		c.qseq++
		s.q.push(pend{kind: pkExecute, seq: s.qseq, cseq: c.qseq})
	case 'S':
		c.skipTillSync = false
		s.skipping = false
		s.q.push(pend{kind: pkSync})
	case 'Q':
		// A simple Query drops the unnamed statement.
		s.qseq++
		c.qseq++
		c.unnamed, c.unnamedEffs = nil, nil
		s.unnamedOwner = nil
		e := pend{kind: pkQuery, seq: s.qseq, cseq: c.qseq}
		if len(body) == n && n > 0 {
			if cname, st, held := c.sqlDeallocate(s, body[:n-1], pl); st != nil {
				pl.Action, pl.Replace = PlanReplace, "DEALLOCATE "+st.srv
				e.cname, e.undo, e.held = cname, st, held
				if !held {
					// A Close or Parse of the pooler's that failed
					// would make the server skip the Query itself:
					// a Sync of its own ends what they began.
					pl.InjSync = true
					s.q.push(pend{kind: pkInjSync})
				}
			}
		}
		s.q.push(e)
	case 'F':
		s.q.push(pend{kind: pkQuery})
	}
}

// entryFailed undoes the bookkeeping of a Parse or Close that failed on
// the server.
func (c *Client) entryFailed(s *Server, e *pend) {
	switch e.kind {
	case pkParse:
		if e.name == "" {
			if e.undo != nil {
				c.deallocateFailed(s, e)
			}
			if c.unnamedGen == e.seq {
				c.unnamed = nil
			}
			if s.unnamedOwner == c && s.unnamedGen == e.seq {
				s.unnamedOwner = nil
			}
			return
		}
		s.lru.remove(e.name)
		if st := c.stmts[e.cname]; st != nil && st.srv == e.name {
			c.dropStmt(e.cname)
		}
	case pkInjParse:
		if e.name == "" {
			if s.unnamedOwner == c && s.unnamedGen == e.seq {
				s.unnamedOwner = nil
			}
			return
		}
		s.lru.remove(e.name)
	case pkInjClose:
		switch {
		case e.doomed:
			s.doomed = append(s.doomed, e.name) // still there
		case e.name != "\x00unnamed":
			s.lru.add(e.name, 0) // still there
		}
	}
}

// entryDropped undoes the bookkeeping of a message the server skipped
// after an error (everything up to the next Sync).
func (c *Client) entryDropped(s *Server, e *pend) {
	switch e.kind {
	case pkParse, pkInjParse, pkInjClose:
		c.entryFailed(s, e)
	case pkSynth:
		// The pooler's own answer to a Parse or Close the server would
		// have skipped: the client's statement is as before.
		switch {
		case e.undo != nil:
			if _, ok := c.stmts[e.cname]; !ok {
				c.putStmt(e.cname, e.undo)
			}
		case e.cname != "":
			if st := c.stmts[e.cname]; st != nil && st.srv == e.name {
				c.dropStmt(e.cname)
			}
		}
	case pkQuery:
		// A simple Query after a failed extended message is skipped as
		// well: no ReadyForQuery will come for it.
		if c.st.PendingSyncs > 0 {
			c.st.PendingSyncs--
		}
	}
}
