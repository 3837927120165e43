package pooler

import (
	"bufio"
	"errors"
	"io"
)

// This file holds the relay's prepared-statement mode (see prepared.go):
// trackFrontend decides, under clientConn.mu, what a client message does
// to the client's and the server's statements and which responses it
// expects; writePlan then sends it; trackBackend matches the server's
// responses against the pending queue in the pump.

// planAction is what happens to the client's message itself.
type planAction uint8

const (
	planRaw     planAction = iota // forward unchanged
	planDrop                      // answered or refused by the pooler: not sent
	planRename                    // sent with the statement name replaced
	planReplace                   // a simple Query sent with other text (replace)
)

// plan is what writePlan sends to the server for one client message.
type plan struct {
	// closeName, when set, is a statement evicted from the server's
	// cache: a Close is sent first.
	closeName string
	// inject is set for a Parse the pooler sends before the message
	// (injName, injRest).
	inject  bool
	injName string
	injRest []byte
	action  planAction
	// newName replaces the statement name (Parse, Bind, Describe); skip
	// is how many body bytes of the original the replacement covers
	// (for Bind: portal and statement name with their NULs).
	newName string
	head    []byte // Bind: the portal name; Describe: the kind byte
	tail    []byte // Parse: the rest of the body after the name
	skip    int
	replace string
}

// frontendBody returns the body of the client message whose header is
// next in c.r: a view into the read buffer (want bytes at most) when the
// whole message fits, or, for a larger message with whole set, a copy
// read from the client (consumed reports that the message has then been
// taken out of c.r).
func (c *clientConn) frontendBody(n int, whole bool) (body []byte, consumed bool, err error) {
	if headerLen+n <= c.r.Size() {
		b, err := c.r.Peek(headerLen + n)
		if err != nil {
			return nil, false, err
		}
		return b[headerLen:], false, nil
	}
	if !whole {
		b, err := c.r.Peek(c.r.Size())
		if err != nil && len(b) <= headerLen {
			return nil, false, err
		}
		return b[headerLen:], false, nil
	}
	if _, err := c.r.Discard(headerLen); err != nil {
		return nil, true, err
	}
	body = make([]byte, n)
	_, err = io.ReadFull(c.r, body)
	return body, true, err
}

// needsBody reports whether the tracked relay looks into a client message
// of type typ, and whether it needs all of it.
func needsBody(typ byte) (look, whole bool) {
	switch typ {
	case 'P', 'D', 'C':
		return true, true
	case 'B', 'Q':
		// A Query's start shows whether it is DEALLOCATE.
		return true, false
	}
	return false, false
}

// pushSynth queues an answer of the pooler's own. When nothing is pending
// before it, it is due at once: the pump or the client goroutine sends it
// (synthHead tells them). c.mu is held.
func (s *serverConn) pushSynth(msg []byte) {
	if s.q.len() == 0 {
		s.synthHead.Store(true)
	}
	s.q.push(pend{kind: pkSynth, msg: msg})
}

// makeRoom evicts the least recently used statement of a full cache and
// returns its name for a Close ("" when there is room). c.mu is held.
func (c *clientConn) makeRoom(s *serverConn) string {
	if s.lru.len() < c.proxy.cfg.MaxPreparedStatements {
		return ""
	}
	name := s.lru.oldest()
	s.lru.remove(name)
	s.q.push(pend{kind: pkInjClose, name: name})
	c.pool.stats.evictions.Add(1)
	return name
}

// ensureNamed makes sure the server will hold st when the next message
// reaches it, planning a Parse (and an eviction) if it does not. c.mu is
// held.
func (c *clientConn) ensureNamed(s *serverConn, st *stmt, pl *plan) {
	if s.lru.touch(st.srv) {
		return
	}
	pl.closeName = c.makeRoom(s)
	pl.inject, pl.injName, pl.injRest = true, st.srv, st.rest
	s.lru.add(st.srv, s.qseq)
	s.q.push(pend{kind: pkInjParse, name: st.srv})
	c.pool.stats.serverParses.Add(1)
}

// ensureUnnamed makes the server's unnamed statement the client's current
// one, or makes sure the server has none when the client has none.
// c.mu is held.
func (c *clientConn) ensureUnnamed(s *serverConn, pl *plan) {
	if s.unnamedOwner == c && s.unnamedGen == c.unnamedGen {
		return
	}
	if c.unnamed == nil {
		if s.unnamedOwner != nil {
			pl.closeName = "\x00unnamed" // see writePlan
			s.q.push(pend{kind: pkInjClose, name: "\x00unnamed"})
			s.unnamedOwner = nil
		}
		return
	}
	pl.inject, pl.injName, pl.injRest = true, "", c.unnamed
	s.q.push(pend{kind: pkInjParse, seq: c.unnamedGen})
	s.unnamedOwner, s.unnamedGen = c, c.unnamedGen
	c.pool.stats.serverParses.Add(1)
}

// sqlDeallocate handles a query that is `DEALLOCATE name` for one of the
// client's protocol statements (the server knows it by another name):
// the statement leaves the client's map, the server is made to hold it
// (so that the command succeeds there) and drops it from its cache, and
// the caller sends the command with srv, the server's name. It reports
// false for any other query, which goes to the server unchanged. c.mu is
// held.
func (c *clientConn) sqlDeallocate(s *serverConn, query []byte, pl *plan) (ok bool, srv string) {
	if len(c.stmts) == 0 {
		return false, "" // nothing of the client's to deallocate: no parse
	}
	name, ok := deallocateTarget(query)
	if !ok {
		return false, ""
	}
	st := c.stmts[name]
	if st == nil {
		return false, "" // an SQL-level statement, or an error from the server
	}
	c.ensureNamed(s, st, pl)
	s.lru.remove(st.srv)
	delete(c.stmts, name)
	return true, st.srv
}

// trackFrontend records what client message typ (body: see
// frontendBody) does and plans how it is sent. c.mu is held and s is the
// attached server.
//
// After an extended-protocol message failed, PostgreSQL ignores every
// message up to the next Sync, including those the client sends after
// the error reached the pooler (a pipelining client such as psycopg 3
// sends the rest of its pipeline later): while s.skipping, what such a
// message would have done is undone at once and no response is expected
// for it.
func (c *clientConn) trackFrontend(s *serverConn, typ byte, body []byte, n int) plan {
	if !s.skipping || typ == 'S' {
		return c.planFrontend(s, typ, body, n)
	}
	mark := len(s.q.buf)
	pl := c.planFrontend(s, typ, body, n)
	for i := mark; i < len(s.q.buf); i++ {
		c.entryDropped(s, &s.q.buf[i])
	}
	clear(s.q.buf[mark:])
	s.q.buf = s.q.buf[:mark]
	f := s.q.front()
	s.synthHead.Store(f != nil && f.kind == pkSynth)
	return pl
}

// planFrontend is trackFrontend for a server that is not skipping.
func (c *clientConn) planFrontend(s *serverConn, typ byte, body []byte, n int) plan {
	var pl plan
	switch typ {
	case 'P':
		if r := c.rejectParse; r != nil {
			c.rejectParse = nil
			s.pushSynth(r)
			c.eng.SkipTillSync()
			pl.action = planDrop
			return pl
		}
		effs := c.parseEffs
		c.parseEffs = nil
		name, rest, ok := cstring(body)
		if !ok {
			s.q.push(pend{kind: pkParse, name: "\x00invalid"})
			return pl
		}
		c.pool.stats.clientParses.Add(1)
		if len(name) == 0 {
			if text, after, ok := cstring(rest); ok {
				if st, srv := c.sqlDeallocate(s, text, &pl); st {
					// The unnamed statement deallocates one of the
					// client's protocol statements: sent as its server
					// name.
					rest = append(append([]byte("DEALLOCATE "+srv), 0), after...)
					pl.action, pl.newName, pl.tail, pl.skip = planRename, "", rest, len(body)
				}
			}
			c.unnamedEffs = effs
			c.unnamed = append(c.unnamed[:0], rest...)
			c.unnamedGen++
			s.unnamedOwner, s.unnamedGen = c, c.unnamedGen
			s.q.push(pend{kind: pkParse, seq: c.unnamedGen})
			c.pool.stats.serverParses.Add(1)
			return pl
		}
		if c.stmts == nil {
			c.stmts = make(map[string]*stmt)
		}
		cname := string(name)
		if _, dup := c.stmts[cname]; dup {
			s.pushSynth(errorResponse("ERROR", codeDuplicatePreparedStatement, "prepared statement %q already exists", name))
			c.eng.SkipTillSync()
			pl.action = planDrop
			return pl
		}
		st := &stmt{srv: serverStmtName(rest), rest: append([]byte(nil), rest...), seq: c.qseq, effs: effs}
		c.stmts[cname] = st
		pl.action = planRename
		pl.newName, pl.tail, pl.skip = st.srv, st.rest, len(body)
		if s.lru.touch(st.srv) {
			s.pushSynth(msgParseComplete)
			s.q.buf[len(s.q.buf)-1].name, s.q.buf[len(s.q.buf)-1].cname = st.srv, cname
			pl.action = planDrop
			return pl
		}
		pl.closeName = c.makeRoom(s)
		s.lru.add(st.srv, s.qseq)
		s.q.push(pend{kind: pkParse, name: st.srv, cname: cname})
		c.pool.stats.serverParses.Add(1)
	case 'B':
		c.pool.stats.binds.Add(1)
		portal, rest, ok := cstring(body)
		var name []byte
		if ok {
			name, _, ok = cstring(rest)
		}
		if ok {
			var effs []StateEffect
			if len(name) == 0 {
				c.ensureUnnamed(s, &pl)
				effs = c.unnamedEffs
			} else if st := c.stmts[string(name)]; st != nil {
				c.ensureNamed(s, st, &pl)
				pl.action = planRename
				pl.newName, pl.head, pl.skip = st.srv, portal, len(portal)+1+len(name)+1
				effs = st.effs
			}
			if effs != nil && c.proxy.cfg.OnSessionState != PolicyAllow {
				c.state.Apply(effs, isTracked)
				if c.proxy.cfg.OnSessionState == PolicyPreserve {
					c.setPinnedLocked(c.state.Held())
				}
			}
		}
		s.q.push(pend{kind: pkBind})
	case 'D':
		if len(body) < 2 || body[0] != 'S' {
			s.q.push(pend{kind: pkDescribeP})
			return pl
		}
		if name, _, ok := cstring(body[1:]); ok {
			if len(name) == 0 {
				c.ensureUnnamed(s, &pl)
			} else if st := c.stmts[string(name)]; st != nil {
				c.ensureNamed(s, st, &pl)
				pl.action = planRename
				pl.newName, pl.head, pl.skip = st.srv, body[:1], len(body)
			}
		}
		s.q.push(pend{kind: pkDescribeS})
	case 'C':
		if len(body) >= 2 && body[0] == 'S' {
			if name, _, ok := cstring(body[1:]); ok {
				if len(name) == 0 {
					c.unnamed = nil
					s.unnamedOwner = nil
				} else {
					// The client's statement only: others may share the
					// server's statement, which stays cached.
					st := c.stmts[string(name)]
					delete(c.stmts, string(name))
					s.pushSynth(msgCloseComplete)
					s.q.buf[len(s.q.buf)-1].cname, s.q.buf[len(s.q.buf)-1].undo = string(name), st
					pl.action = planDrop
					return pl
				}
			}
		}
		s.q.push(pend{kind: pkClose})
	case 'E':
		// Numbered like a simple Query: it may run DEALLOCATE ALL or
		// DISCARD ALL (see trackBackend).
		s.qseq++
		c.qseq++
		s.q.push(pend{kind: pkExecute, seq: s.qseq, cseq: c.qseq})
	case 'S':
		c.eng.Synced()
		s.skipping = false
		s.q.push(pend{kind: pkSync})
	case 'Q':
		// A simple Query drops the unnamed statement.
		s.qseq++
		c.qseq++
		c.unnamed, c.unnamedEffs = nil, nil
		s.unnamedOwner = nil
		if len(body) == n && n > 0 {
			if st, srv := c.sqlDeallocate(s, body[:n-1], &pl); st {
				pl.action, pl.replace = planReplace, "DEALLOCATE "+srv
			}
		}
		s.q.push(pend{kind: pkQuery, seq: s.qseq, cseq: c.qseq})
	case 'F':
		s.q.push(pend{kind: pkQuery})
	}
	return pl
}

// writePlan sends the client's message (header next in c.r, or already
// consumed into body) to the server as planned. Errors follow
// copyMessage: a failed write is errWrite, anything else is the client's.
func (c *clientConn) writePlan(w *bufio.Writer, typ byte, n int, body []byte, consumed bool, pl *plan) error {
	buf := &c.hdr
	if pl.closeName != "" {
		if pl.closeName == "\x00unnamed" {
			w.Write(putHeader(buf[:0], 'C', 2))
			w.Write([]byte{'S', 0})
		} else {
			w.Write(putHeader(buf[:0], 'C', 1+len(pl.closeName)+1))
			w.WriteByte('S')
			w.WriteString(pl.closeName)
			w.WriteByte(0)
		}
	}
	if pl.inject {
		w.Write(putHeader(buf[:0], 'P', len(pl.injName)+1+len(pl.injRest)))
		w.WriteString(pl.injName)
		w.WriteByte(0)
		w.Write(pl.injRest)
	}
	switch pl.action {
	case planReplace:
		if !consumed {
			if _, err := c.r.Discard(headerLen + n); err != nil {
				return err
			}
		}
		writeQuery(w, pl.replace)
	case planDrop:
		if !consumed {
			if _, err := c.r.Discard(headerLen + n); err != nil {
				return err
			}
		}
	case planRename:
		var newLen int
		switch typ {
		case 'P':
			newLen = len(pl.newName) + 1 + len(pl.tail)
		case 'B':
			newLen = len(pl.head) + 1 + len(pl.newName) + 1 + n - pl.skip
		default: // 'D'
			newLen = len(pl.head) + len(pl.newName) + 1
		}
		w.Write(putHeader(buf[:0], typ, newLen))
		if len(pl.head) > 0 || typ == 'B' {
			w.Write(pl.head)
		}
		if typ == 'B' {
			w.WriteByte(0)
		}
		w.WriteString(pl.newName)
		w.WriteByte(0)
		if typ == 'P' {
			w.Write(pl.tail)
		}
		if consumed {
			if typ == 'B' {
				w.Write(body[pl.skip:])
			}
			break
		}
		if _, err := c.r.Discard(headerLen + pl.skip); err != nil {
			return err
		}
		if rest := n - pl.skip; rest > 0 {
			if err := copyMessage(w, c.r, rest); err != nil {
				return err
			}
		}
	default:
		if consumed {
			w.Write(putHeader(buf[:0], typ, n))
			w.Write(body)
		} else if err := copyMessage(w, c.r, headerLen+n); err != nil {
			return err
		}
	}
	// bufio.Writer errors are sticky: one check covers every write.
	if _, err := w.Write(nil); err != nil {
		return errWrite
	}
	return nil
}

// emitSynthsLocked sends the pooler's own answers that are due: those at
// the head of the queue. c.wmu and c.mu are held.
func (c *clientConn) emitSynthsLocked(s *serverConn) {
	for e := s.q.front(); e != nil && e.kind == pkSynth; e = s.q.front() {
		m := s.q.pop().msg
		if c.rec != nil && !c.vanished.Load() {
			c.rec.Backend(m[0], m[headerLen:])
		}
		if !c.vanished.Load() {
			c.writer().Write(m)
		}
	}
	s.synthHead.Store(false)
}

// emitDueSynths sends due answers of the pooler's own and flushes; the
// client goroutine calls it before it blocks reading the client, the pump
// before it relays a server message.
func (c *clientConn) emitDueSynths(s *serverConn, flush bool) {
	c.wmu.Lock()
	c.mu.Lock()
	if c.server == s {
		c.emitSynthsLocked(s)
	}
	c.mu.Unlock()
	if flush && c.w != nil && !c.vanished.Load() {
		c.w.Flush()
	}
	c.wmu.Unlock()
}

// trackBackend matches a server message that may complete a pending
// entry against the queue, relays it (unless it answers the pooler's own
// Parse or Close) and then sends the answers of the pooler's own that
// became due. body is the message body when the caller peeked it (small
// CommandComplete messages), else nil.
func (c *clientConn) trackBackend(s *serverConn, typ byte, n int, body []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	forward := true
	if e := s.q.front(); e != nil {
		if (e.kind == pkQuery || e.kind == pkExecute) && typ == 'C' && body != nil && isDeallocateAllTag(body) {
			s.lru.removeBefore(e.seq)
			for name, st := range c.stmts {
				if st.seq < e.cseq {
					delete(c.stmts, name)
				}
			}
		}
		if done, failed := completes(e.kind, typ); done {
			ent := s.q.pop()
			if ent.kind == pkInjParse || ent.kind == pkInjClose {
				forward = failed
			}
			if failed {
				c.entryFailed(s, &ent)
				for f := s.q.front(); f != nil && f.kind != pkSync; f = s.q.front() {
					dropped := s.q.pop()
					c.entryDropped(s, &dropped)
				}
				// No Sync sent yet: the messages still to come up to it
				// are skipped too.
				s.skipping = s.q.front() == nil
			}
		}
	}
	c.mu.Unlock()
	if forward && c.rec != nil {
		c.recordBackend(s, typ, n)
	}
	var err error
	if !forward || c.vanished.Load() {
		_, err = s.r.Discard(headerLen + n)
	} else {
		c.ctr.tx += int64(headerLen + n)
		if err = copyMessage(c.writer(), s.r, headerLen+n); errors.Is(err, errWrite) {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	if f := s.q.front(); f != nil && f.kind == pkSynth {
		c.emitSynthsLocked(s)
	}
	c.mu.Unlock()
	return nil
}

// entryFailed undoes the bookkeeping of a Parse or Close that failed on
// the server. c.mu is held.
func (c *clientConn) entryFailed(s *serverConn, e *pend) {
	switch e.kind {
	case pkParse:
		if e.name == "" {
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
			delete(c.stmts, e.cname)
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
		if e.name != "\x00unnamed" {
			s.lru.add(e.name, 0) // still there
		}
	}
}

// entryDropped undoes the bookkeeping of a message the server skipped
// after an error (everything up to the next Sync). c.mu is held.
func (c *clientConn) entryDropped(s *serverConn, e *pend) {
	switch e.kind {
	case pkParse, pkInjParse, pkInjClose:
		c.entryFailed(s, e)
	case pkSynth:
		// The pooler's own answer to a Parse or Close the server would
		// have skipped: the client's statement is as before.
		switch {
		case e.undo != nil:
			if c.stmts == nil {
				c.stmts = make(map[string]*stmt)
			}
			if _, ok := c.stmts[e.cname]; !ok {
				c.stmts[e.cname] = e.undo
			}
		case e.cname != "":
			if st := c.stmts[e.cname]; st != nil && st.srv == e.name {
				delete(c.stmts, e.cname)
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
