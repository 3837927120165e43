package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Protocol-level prepared statements in transaction mode.
//
// A client's named statement lives on whichever server connection the
// client had when it sent the Parse; in transaction mode its next Bind may
// land on another. The pooler therefore keeps, per client, each named
// statement's Parse body (query text and parameter types) and gives it a
// server-side name derived from a hash of that body, so that every client
// preparing the same text shares one statement per server. Each server
// keeps a bounded LRU of the names it holds. Before a Bind or Describe
// that needs a statement the server lacks, the pooler sends the Parse
// first and swallows its ParseComplete; Parse, Bind, Describe and Close
// are rewritten to the server-side name.
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
// in the server's pending queue, and the pump matches each response
// against the head of that queue (see Server.q, Client.Frontend and Client.Backend).

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

// serverStmtName derives the server-side statement name from the Parse
// body after the name. 96 bits of SHA-256: a collision would run another
// client's statement, so the hash must be cryptographic.
func serverStmtName(rest []byte) string {
	sum := sha256.Sum256(rest)
	return "pgpc_" + hex.EncodeToString(sum[:12])
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
)

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
	// (restored if the server skips the Close).
	undo *stmt
}

// pendQueue is a FIFO of pending entries that reuses its storage.
type pendQueue struct {
	buf  []pend
	head int
}

func (q *pendQueue) len() int { return len(q.buf) - q.head }

func (q *pendQueue) push(e pend) { q.buf = append(q.buf, e) }

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
		case pkSync, pkQuery:
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
	case pkSync, pkQuery:
		return typ == 'Z', false
	}
	return false, false
}

// MayComplete reports whether a server message of type typ can complete
// any pending entry; the pump skips the queue for the others (data rows,
// notices, parameter status, COPY data and the like).
func MayComplete(typ byte) bool {
	switch typ {
	case '1', '2', '3', 'T', 'n', 'C', 'I', 's', 'E', 'Z':
		return true
	}
	return false
}
