package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"
)

// Protocol-level prepared statements in transaction mode.
//
// A client's named statement lives on whichever server connection the
// client had when it sent the Parse; in transaction mode its next Bind may
// land on another. The pooler therefore keeps, per client, each named
// statement's Parse body (query text and parameter types) and gives it a
// server-side name derived from a hash of that body and of what the text
// resolves against (stmtContext), so that clients preparing the same text
// in the same context share one statement per server. Each server keeps a
// bounded LRU of the names it holds. Before a Bind or Describe that needs
// a statement the server lacks, the pooler sends the Parse first and
// swallows its ParseComplete; Parse, Bind, Describe and Close are
// rewritten to the server-side name.
//
// A server statement goes stale when the objects it was planned against
// change: PostgreSQL replans it and, when its result type changed, fails
// every execution with 0A000 (cached plan must not change result type),
// as it would for a client connected directly; the client's answer is to
// prepare the statement again. So that this Parse reaches a server rather
// than finding the stale statement under the same name, names also carry
// the proxy's schema epoch (Limits.Epoch), which a schema change sent
// through the pooler (ALTER, DROP) advances when it runs and again when
// its transaction ends (other clients may prepare meanwhile against the
// catalog as it was), and so does a stale-plan error from any server
// (0A000, or XX000 "cache lookup failed"). A statement the client already
// has keeps its name (and its stale plan, as without the pooler); the
// stale ones age out of the LRU.
//
// A rollback goes further: a statement parsed in a transaction that rolls
// back (in whole, to a savepoint, or by an error) may be planned against
// a type or table that the rollback took away, under the name every later
// client of the epoch would use. The server dooms the statements first
// parsed on it in such a transaction (Server.ready): they leave its cache
// and are closed ahead of its next extended-protocol message. A server
// whose client left inside a transaction is closed (OnVanish).
//
// The unnamed statement is handled the same way without renaming: the
// client's latest unnamed Parse is remembered and re-sent when the client
// Binds or Describes it on a server whose unnamed statement is not the
// client's current one (lib/pq and pgx's describe-exec mode Parse in one
// round trip and Bind in the next).
//
// Responses the client did not ask for must be swallowed and answers the
// pooler gives itself (a ParseComplete for a statement the server already
// has, a CloseComplete) must reach the client in order. So in this mode
// every message sent to the server that produces a response has an entry
// in the server's pending queue, and the driver matches each response
// against the head of that queue (see Server.q, Client.frontend and Client.backend).

// stmt is one of a client's named statements.
type stmt struct {
	// srv is the server-side name.
	srv string
	// rest is the Parse body after the statement name: the query, the
	// parameter count and the parameter type OIDs.
	rest []byte
	// seq is the client's query sequence number when it was parsed, for
	// DEALLOCATE ALL / DISCARD ALL.
	seq uint64
	// effs is what running it does to session state.
	effs []StateEffect
}

// serverStmtBase derives the hash part of a server-side statement name
// from the Parse body after the name and the statement's context. 96 bits
// of SHA-256: a collision would run another client's statement, so the
// hash must be cryptographic.
func serverStmtBase(rest []byte, ctx string) string {
	h := sha256.New()
	h.Write(rest)
	if ctx != "" {
		h.Write([]byte{0})
		h.Write([]byte(ctx))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return "pgpc_" + hex.EncodeToString(sum[:12])
}

// serverStmtName is the server-side name of a statement with hash part
// base in schema epoch epoch.
func serverStmtName(base string, epoch uint64) string {
	if epoch == 0 {
		return base
	}
	return base + "_" + strconv.FormatUint(epoch, 10)
}

// nonces numbers the clients whose statements are private to them.
var nonces atomic.Uint64

// stmtContext is what a statement the client parses now resolves against
// beyond its text: the search_path and role it runs under. It is "" in
// the common case (neither set by the client), so that all clients of a
// pool share statements. While the server holds a search_path or role the
// client set and the pooler has not read back, or while the client has
// temporary objects (which no other client sees), the context is private
// to the client and to that state (its generation).
func (c *Client) stmtContext() string {
	st := &c.Session
	if st.ctxDirty || st.hasTemps() {
		if c.nonce == 0 {
			c.nonce = nonces.Add(1)
		}
		return "private " + strconv.FormatUint(c.nonce, 10) + "." + strconv.FormatUint(st.ctxGen, 10)
	}
	var path, role, auth string
	pick := func(sets []Setting) {
		for _, s := range sets {
			switch strings.ToLower(s.Name) {
			case "search_path":
				path = s.Value
			case "role":
				role = s.Value
			case "session_authorization":
				auth = s.Value
			}
		}
	}
	pick(c.Startup)
	pick(st.Settings)
	if path == "" && role == "" && auth == "" {
		return ""
	}
	return "search_path=" + path + "\x00role=" + role + "\x00session_authorization=" + auth
}

// advanceEpoch starts a new schema epoch: statements the clients prepare
// from now on are not taken for ones prepared before.
func (l *Limits) advanceEpoch() { l.Epoch.Add(1) }

// schemaChangeTag reports whether a CommandComplete tag is that of a
// command that may change what a prepared statement's plan resolves to or
// returns.
func schemaChangeTag(tag []byte) bool {
	return bytes.HasPrefix(tag, []byte("ALTER ")) || bytes.HasPrefix(tag, []byte("DROP ")) ||
		bytes.Equal(tag, []byte("CREATE VIEW")) || bytes.Equal(tag, []byte("CREATE RULE"))
}

// isStalePlan reports whether an ErrorResponse body is PostgreSQL's
// "cached plan must not change result type" (SQLSTATE 0A000 from the plan
// cache), or its internal error for a statement whose plan names an
// object that no longer exists ("cache lookup failed for type N",
// XX000), as a statement prepared before a change made around the pooler
// gets.
func isStalePlan(body []byte) bool {
	code, msg := errorField(body, 'C'), errorField(body, 'M')
	switch string(code) {
	case "0A000":
		return bytes.HasPrefix(msg, []byte("cached plan must not change result type"))
	case "XX000":
		return bytes.HasPrefix(msg, []byte("cache lookup failed for "))
	}
	return false
}

// isRollbackTag reports whether a CommandComplete tag is that of a
// ROLLBACK or ROLLBACK TO SAVEPOINT (also a COMMIT of a failed
// transaction, which PostgreSQL answers with ROLLBACK).
func isRollbackTag(tag []byte) bool { return bytes.Equal(tag, []byte("ROLLBACK")) }

// errorField returns field f of an ErrorResponse or NoticeResponse body.
func errorField(body []byte, f byte) []byte {
	for len(body) > 0 && body[0] != 0 {
		t := body[0]
		v, rest, ok := CString(body[1:])
		if !ok {
			return nil
		}
		if t == f {
			return v
		}
		body = rest
	}
	return nil
}

// pendKind is what a pending response entry waits for.
type pendKind uint8

const (
	pkParse     pendKind = iota + 1 // client Parse: ParseComplete or error
	pkBind                          // BindComplete or error
	pkDescribeS                     // ParameterDescription, then RowDescription or NoData
	pkDescribeP                     // RowDescription or NoData
	pkExecute                       // CommandComplete, EmptyQueryResponse, PortalSuspended or error
	pkClose                         // CloseComplete or error
	pkSync                          // ReadyForQuery
	pkQuery                         // simple Query or FunctionCall: everything up to ReadyForQuery
	pkInjParse                      // the pooler's Parse: its ParseComplete is swallowed
	pkInjClose                      // the pooler's Close: its CloseComplete is swallowed
	pkSynth                         // an answer the pooler gives itself (msg)
	pkInjSync                       // the pooler's Sync: its ReadyForQuery is swallowed
)

// syncs reports whether the entry waits for the ReadyForQuery of a Sync:
// the server skips no message after it for an error before it.
func (k pendKind) syncs() bool { return k == pkSync || k == pkInjSync }

// pend is one pending response entry.
type pend struct {
	kind pendKind
	// name is the server-side statement name a Parse or Close entry
	// added to or removed from the server's LRU ("" for the unnamed
	// statement).
	name string
	// cname is the client's name of the statement a pkParse entry
	// prepares.
	cname string
	// seq and cseq are the server's and the client's query sequence
	// numbers of a pkQuery entry.
	seq, cseq uint64
	// msg is the message a pkSynth entry sends.
	msg []byte
	// undo is the client's statement a pkSynth CloseComplete closed
	// (restored if the server skips the Close), or the one the SQL
	// DEALLOCATE of a pkQuery or unnamed pkParse dropped (restored if the
	// command fails; held then says that the server held it).
	undo *stmt
	// doomed marks a pkInjClose of a doomed statement (Server.doom):
	// skipped, it is doomed again.
	doomed bool
	held   bool
}

// pendQueue is a FIFO of pending entries that reuses its storage.
type pendQueue struct {
	buf  []pend
	head int
}

func (q *pendQueue) len() int { return len(q.buf) - q.head }

func (q *pendQueue) push(e pend) {
	if len(q.buf) == cap(q.buf) && q.head >= len(q.buf)/2 {
		// The entries before head are answered: move the live ones
		// down rather than grow (a pipeline that never lets the queue
		// empty would otherwise keep every entry it ever had).
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, e)
}

func (q *pendQueue) front() *pend {
	if q.head == len(q.buf) {
		return nil
	}
	return &q.buf[q.head]
}

func (q *pendQueue) pop() pend {
	e := q.buf[q.head]
	q.buf[q.head] = pend{}
	q.head++
	if q.head == len(q.buf) {
		q.reset()
	}
	return e
}

func (q *pendQueue) reset() {
	clear(q.buf[q.head:])
	q.buf = q.buf[:0]
	q.head = 0
}

// stmtLRU is the set of server-side statement names a server holds, in
// least recently used order.
type stmtLRU struct {
	m          map[string]*lruNode
	head, tail *lruNode // head is the most recently used
}

type lruNode struct {
	name       string
	seq        uint64 // the server's query sequence number when added
	prev, next *lruNode
}

func (l *stmtLRU) len() int { return len(l.m) }

// touch reports whether name is held and marks it most recently used.
func (l *stmtLRU) touch(name string) bool {
	n, ok := l.m[name]
	if !ok {
		return false
	}
	l.unlink(n)
	l.pushFront(n)
	return true
}

func (l *stmtLRU) add(name string, seq uint64) {
	if l.m == nil {
		l.m = make(map[string]*lruNode)
	}
	if n, ok := l.m[name]; ok {
		l.unlink(n)
		l.pushFront(n)
		return
	}
	n := &lruNode{name: name, seq: seq}
	l.m[name] = n
	l.pushFront(n)
}

func (l *stmtLRU) remove(name string) {
	if n, ok := l.m[name]; ok {
		l.unlink(n)
		delete(l.m, name)
	}
}

// oldest returns the least recently used name.
func (l *stmtLRU) oldest() string { return l.tail.name }

// removeBefore forgets every name added before query sequence number seq
// (DEALLOCATE ALL or DISCARD ALL ran there).
func (l *stmtLRU) removeBefore(seq uint64) {
	for n := l.head; n != nil; {
		next := n.next
		if n.seq < seq {
			l.unlink(n)
			delete(l.m, n.name)
		}
		n = next
	}
}

func (l *stmtLRU) unlink(n *lruNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (l *stmtLRU) pushFront(n *lruNode) {
	n.next = l.head
	if l.head != nil {
		l.head.prev = n
	}
	l.head = n
	if l.tail == nil {
		l.tail = n
	}
}

// CString splits b at its first NUL: the string before it and the rest
// after it.
func CString(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// PutHeader appends a message header for a body of n bytes.
func PutHeader(dst []byte, typ byte, n int) []byte {
	dst = append(dst, typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(4+n))
	return dst
}

// Messages the pooler answers itself.
var (
	msgParseComplete = []byte{'1', 0, 0, 0, 4}
	msgCloseComplete = []byte{'3', 0, 0, 0, 4}
)

// deallocateTarget returns the statement a query that is exactly
// `DEALLOCATE [PREPARE] name` (a trailing semicolon allowed) deallocates,
// with PostgreSQL's identifier rules: an unquoted name is folded to lower
// case, a quoted one kept with "" unescaped. DEALLOCATE ALL and anything
// else report false. Drivers such as psycopg 3 (with libpq before 17)
// drop their protocol statements this way.
func deallocateTarget(q []byte) (string, bool) {
	i := skipSpace(q, 0)
	kw := func(word string) bool {
		if len(q)-i < len(word)+1 {
			return false
		}
		for j := 0; j < len(word); j++ {
			if q[i+j]|0x20 != word[j] {
				return false
			}
		}
		if !IsSpace(q[i+len(word)]) && q[i+len(word)] != '"' {
			return false
		}
		i = skipSpace(q, i+len(word))
		return true
	}
	if !kw("deallocate") {
		return "", false
	}
	kw("prepare")
	var name []byte
	switch {
	case i < len(q) && q[i] == '"':
		for i++; ; i++ {
			if i >= len(q) {
				return "", false
			}
			if q[i] == '"' {
				if i+1 < len(q) && q[i+1] == '"' {
					name = append(name, '"')
					i++
					continue
				}
				i++
				break
			}
			name = append(name, q[i])
		}
	default:
		start := i
		for ; i < len(q); i++ {
			b := q[i]
			if b >= 'A' && b <= 'Z' {
				b |= 0x20
			} else if !(b >= 'a' && b <= 'z' || b == '_' || b >= 0x80 || i > start && (b >= '0' && b <= '9' || b == '$')) {
				break
			}
			name = append(name, b)
		}
		if len(name) == 0 || string(name) == "all" {
			return "", false
		}
	}
	i = skipSpace(q, i)
	if i < len(q) && q[i] == ';' {
		i = skipSpace(q, i+1)
	}
	if i != len(q) || len(name) == 0 {
		return "", false
	}
	return string(name), true
}

// readsPortal reports whether the query of a Parse body (rest: the query
// and what follows it) is a FETCH, whose rows are those of a cursor of
// the session: what describing the statement returns depends on a portal
// that may be gone. PostgreSQL (15.18 here) crashes the backend, and with
// it every session of the server, when a statement parsed as `FETCH n
// FROM c` while c was open is described after c was closed; so such a
// statement is never taken from the server's cache (planFrontend).
// Comments before the keyword are skipped.
func readsPortal(rest []byte) bool {
	q, _, ok := CString(rest)
	if !ok {
		return false
	}
	i := 0
	for {
		i = skipSpace(q, i)
		switch {
		case i+1 < len(q) && q[i] == '-' && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			continue
		case i+1 < len(q) && q[i] == '/' && q[i+1] == '*':
			// PostgreSQL's block comments nest.
			depth := 0
			for {
				switch {
				case i+1 >= len(q):
					return false // not closed
				case q[i] == '/' && q[i+1] == '*':
					depth++
					i += 2
				case q[i] == '*' && q[i+1] == '/':
					depth--
					i += 2
				default:
					i++
				}
				if depth == 0 {
					break
				}
			}
			continue
		}
		break
	}
	const kw = "fetch"
	if len(q)-i < len(kw) {
		return false
	}
	for j := range len(kw) {
		if q[i+j]|0x20 != kw[j] {
			return false
		}
	}
	if i+len(kw) == len(q) {
		return true
	}
	b := q[i+len(kw)]
	return !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '$' || b >= 0x80)
}

func IsSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

func skipSpace(q []byte, i int) int {
	for i < len(q) && IsSpace(q[i]) {
		i++
	}
	return i
}

// isDeallocateAllTag reports whether a CommandComplete body is the tag of
// a command that dropped every prepared statement of the session.
func isDeallocateAllTag(body []byte) bool {
	tag, _, ok := CString(body)
	return ok && (string(tag) == "DEALLOCATE ALL" || string(tag) == "DISCARD ALL")
}

// completes reports whether a server message of type typ completes a
// pending entry of kind k, and whether it is an error (which makes the
// server skip every message up to the next Sync).
func completes(k pendKind, typ byte) (done, failed bool) {
	if typ == 'E' {
		switch k {
		case pkSync, pkInjSync, pkQuery:
			return false, false
		}
		return true, true
	}
	switch k {
	case pkParse, pkInjParse:
		return typ == '1', false
	case pkBind:
		return typ == '2', false
	case pkDescribeS, pkDescribeP:
		return typ == 'T' || typ == 'n', false
	case pkExecute:
		return typ == 'C' || typ == 'I' || typ == 's', false
	case pkClose, pkInjClose:
		return typ == '3', false
	case pkSync, pkInjSync, pkQuery:
		return typ == 'Z', false
	}
	return false, false
}

// MayComplete reports whether a server message of type typ can complete
// any pending entry; the driver skips the queue for the others (data rows,
// notices, parameter status, COPY data and the like).
func MayComplete(typ byte) bool {
	switch typ {
	case '1', '2', '3', 'T', 'n', 'C', 'I', 's', 'E', 'Z':
		return true
	}
	return false
}
