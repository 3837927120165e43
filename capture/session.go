package capture

import (
	"strings"
	"sync"
	"sync/atomic"
)

// SessionInfo describes a client session as it logged in.
type SessionInfo struct {
	// ClientAddr is the client's address (host:port).
	ClientAddr string
	// User, Database and ApplicationName are the startup parameters of
	// those names.
	User, Database, ApplicationName string
	// Params are the startup parameters (options, search_path, DateStyle,
	// …). The caller may pass them all: user, database and
	// application_name are written in their own fields, and a "password"
	// key is never written.
	Params map[string]string
}

// Session records one client session. Frontend and Backend may be called
// from two goroutines at once (the client reader and the server pump), but
// Frontend calls must not overlap each other, and neither waits for disk
// I/O; End may be called from any goroutine, and more
// than once (only the first call counts). A nil *Session records nothing,
// so a proxy without a capture can call its methods unconditionally.
//
// Transaction numbers come from ReadyForQuery, so the session keeps count
// of the client's sync points (Query, Sync, FunctionCall) that the server
// has not answered yet. A client message sent while one is outstanding (a
// pipelining client, or a client whose next message reached Frontend just
// before the previous ReadyForQuery reached Backend) is held back and
// written after that ReadyForQuery, with the transaction number it really
// belongs to. At most maxHeld messages are held; beyond that they are
// written at once, numbered as the session stands. For exact numbers, call
// Backend before forwarding a server message to the client.
type Session struct {
	// The fields a round trip touches come first, so that they share a
	// few cache lines: with many sessions, each one's state is cold by
	// the time its next round trip comes.

	mu      sync.Mutex // orders the session's events and guards what follows
	ended   bool
	busy    bool  // a client message since the session was last idle
	copyIn  bool  // the server asked for COPY data (CopyInResponse)
	pending int   // sync points sent and not yet answered by ReadyForQuery
	tx      int64 // current transaction number
	// lastT is the time of the session's latest event read from the
	// clock, for FrontendBatched.
	lastT int64
	id    uint64
	w     *Writer
	// out holds the events not yet handed to the writer, already
	// encoded. The session hands them over together once per round trip
	// (after a ReadyForQuery, at flushAt events or flushBytes bytes, and
	// at End), so that the writer's lock is taken once per round trip
	// rather than once per message. A session keeps an empty batch
	// between round trips, until the writer's sweep finds it quiet.
	out *batch
	// done counts the statements the server completed since its last
	// ReadyForQuery: those of segs[0].
	done atomic.Int32
	// segs are the client's round trips the server has not answered with
	// ReadyForQuery yet, oldest first, for Event.Completed; they start in
	// segBuf.
	segs   []segment
	segBuf [8]segment
	// pre is the start of the session's latest line, for the direct path.
	pre prefix

	held []Event // client messages waiting for a ReadyForQuery
	// scratch is where Frontend decodes a message the direct path does
	// not take, and back where Backend decodes one; strs is the cache the
	// events kept past their call copy their strings from (mu held).
	scratch Event
	back    Event
	strs    interner
}

// segment is one round trip: extended-protocol messages up to a Sync, or
// one simple Query or FunctionCall.
type segment struct{ extended, closed bool }

// noteFrontend follows the client's round trips (c.mu held).
func (s *Session) noteFrontend(typ byte) {
	switch typ {
	case 'Q', 'F':
		s.segs = append(s.segs, segment{closed: true})
		return
	}
	if n := len(s.segs); n == 0 || s.segs[n-1].closed {
		if len(s.segs) >= maxHeld {
			return // a client that never syncs: stop following
		}
		s.segs = append(s.segs, segment{extended: true})
	}
	if typ == 'S' {
		s.segs[len(s.segs)-1].closed = true
	}
}

// maxHeld bounds the client messages a session holds back.
const maxHeld = 256

// syncPoint reports whether a client message gets its own ReadyForQuery.
func syncPoint(k Kind) bool { return k == Query || k == Sync || k == FunctionCall }

// StartSession records a session start and returns the session's recorder.
func (w *Writer) StartSession(info SessionInfo) *Session {
	s := &Session{w: w, id: w.nextSession.Add(1), tx: 1}
	s.segs = s.segBuf[:0]
	ev := Event{T: w.now(), Session: s.id, Kind: SessionStart}
	ev.Client, ev.User, ev.Database = info.ClientAddr, info.User, info.Database
	ev.ApplicationName = info.ApplicationName
	for k, v := range info.Params {
		switch strings.ToLower(k) {
		case "password", "user", "database", "application_name":
			continue
		}
		if ev.Params == nil {
			ev.Params = make(map[string]string, len(info.Params))
		}
		ev.Params[k] = v
	}
	b := w.freeBatch()
	w.encode(b, &ev)
	w.enqueue(b)
	w.smu.Lock()
	w.live[s] = struct{}{}
	w.smu.Unlock()
	return s
}

// extend lengthens *b by one element, reusing the storage past its
// length (an emptied event, which may keep a type list), and returns that
// element.
func extend[T any](b *[]T) *T {
	n := len(*b)
	if n < cap(*b) {
		*b = (*b)[:n+1]
	} else {
		var zero T
		*b = append(*b, zero)
	}
	return &(*b)[n]
}

// move moves *src into the empty event *dst and leaves src empty, with
// dst's old type list: every held (or late) event keeps a type list of
// its own.
func move(dst, src *Event) {
	pt := dst.ParamTypes[:0]
	*dst = *src
	*src = Event{ParamTypes: pt}
}

// batch returns the session's batch, taking an empty one when it has
// none (mu held).
func (s *Session) batch() *batch {
	if s.out == nil {
		s.out = s.w.freeBatch()
	}
	return s.out
}

// emit encodes ev at the end of the batch and empties it (mu held).
func (s *Session) emit(ev *Event) {
	s.w.encode(s.batch(), ev)
	resetEvent(ev)
	if s.out.n >= flushAt || len(s.out.b) >= flushBytes {
		s.handOver()
	}
}

// hold moves ev to the held client messages (mu held).
func (s *Session) hold(ev *Event) {
	move(extend(&s.held), ev)
}

// handOver gives the batch to the writer (mu held).
func (s *Session) handOver() {
	if s.out != nil {
		s.w.enqueue(s.out)
		s.out = nil
	}
}

// ID returns the session's id in the capture.
func (s *Session) ID() uint64 {
	if s == nil {
		return 0
	}
	return s.id
}

// Frontend records a client message: typ is its type byte and body the
// bytes after the length word. total is the body's full length; when
// len(body) < total the caller saw only a prefix of a huge message, and the
// event is marked truncated. body is read only during the call. Messages
// the capture does not record (CopyData, Terminate, password and SASL
// messages) cost a switch.
func (s *Session) Frontend(typ byte, body []byte, total int) {
	s.frontend(typ, body, total, false)
}

// FrontendBatched is Frontend for a message that reached the proxy in the
// same read as the client message before it: it takes that message's
// time instead of reading the clock again (or the session's latest event
// time, when that is later).
func (s *Session) FrontendBatched(typ byte, body []byte, total int) {
	s.frontend(typ, body, total, true)
}

func (s *Session) frontend(typ byte, body []byte, total int, batched bool) {
	if s == nil {
		return
	}
	switch typ {
	case 'Q', 'P', 'B', 'D', 'C', 'E', 'S', 'H', 'F', 'c', 'f':
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	switch typ {
	case 'Q', 'F', 'P', 'B', 'D', 'C', 'E', 'S', 'H':
		s.noteFrontend(typ)
	}
	var t int64
	if batched && s.lastT != 0 {
		t = s.lastT
	} else {
		t = s.w.now()
		s.lastT = t
	}
	if (s.pending == 0 || len(s.held) >= maxHeld) && len(body) == total && !s.w.opt.Redact &&
		s.direct(typ, body, t) {
		return
	}
	ev := &s.scratch
	// The strings are views of body until the event is encoded, below,
	// or owned, when it is kept longer (hold, and late events under
	// --redact).
	if !decodeFrontend(ev, typ, body, len(body) < total, true) {
		resetEvent(ev)
		return
	}
	ev.T, ev.Session = t, s.id
	switch {
	case ev.Kind == CopyEnd && s.copyIn:
		// CopyDone or CopyFail ends the COPY the server is waiting on.
		s.copyIn = false
		ev.Tx = s.tx
		s.emit(ev)
	case s.pending > 0 && len(s.held) < maxHeld:
		ev.own(&s.strs)
		s.hold(ev)
	default:
		if s.w.opt.Redact && ev.SQL != "" {
			ev.own(&s.strs) // encode keeps it for the writer (a late event)
		}
		s.emitFrontend(ev, t)
	}
}

// direct is emitFrontend for a whole, well-formed client message of a
// frequent kind, encoded straight from its bytes (appendDirect); it
// reports false, having written nothing, for any other message (mu held).
func (s *Session) direct(typ byte, body []byte, t int64) bool {
	b := s.batch()
	n0 := len(b.b)
	out, ok := appendDirect(s.pre.appendPrefix(b.b, t, s.id, s.tx), typ, body)
	if !ok {
		b.b = b.b[:n0]
		return false
	}
	b.b = out
	b.n++
	s.busy = true
	if typ == 'Q' || typ == 'S' {
		s.pending++ // a sync point (FunctionCall does not come this way)
	}
	if b.n >= flushAt || len(b.b) >= flushBytes {
		s.handOver()
	}
	return true
}

// emitFrontend moves a client message to the batch, numbered as the
// session stands, at time t (a held message is timed when it is
// released).
func (s *Session) emitFrontend(ev *Event, t int64) {
	s.busy = true
	ev.T, ev.Tx = t, s.tx
	if syncPoint(ev.Kind) {
		s.pending++
	}
	s.emit(ev)
}

// release moves the held client messages up to the next sync point to
// the batch, at time t.
func (s *Session) release(t int64) {
	n := 0
	for n < len(s.held) && s.pending == 0 {
		s.emitFrontend(&s.held[n], t)
		n++
	}
	if n == 0 {
		return
	}
	k := copy(s.held, s.held[n:])
	clear(s.held[k:]) // copies that share type lists with the ones kept
	s.held = s.held[:k]
}

// Backend records a server message the proxy passed on: ReadyForQuery,
// ErrorResponse, the COPY responses, CopyDone and NotificationResponse;
// every other type is ignored. body is read only during the call. A
// ReadyForQuery with status 'I' after a client message ends the session's
// current transaction: the next event belongs to the next one.
func (s *Session) Backend(typ byte, body []byte) {
	if s == nil {
		return
	}
	switch typ {
	case 'Z', 'E', 'G', 'H', 'W', 'c', 'A':
	case 'C', 'I', 's':
		// An Execute (or a statement of a Query) completed: counted, not
		// recorded, and without the lock (only Backend touches the count).
		s.done.Add(1)
		return
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	t := s.w.now()
	s.lastT = t
	if typ == 'Z' {
		b := s.batch()
		n0 := len(b.b)
		if out, ok := appendReady(s.pre.appendPrefix(b.b, t, s.id, s.tx), body); ok {
			b.b = out
			b.n++
			s.ready(body[0] == 'I', t)
			return
		}
		b.b = b.b[:n0]
	}
	ev := &s.back
	if !decodeBackend(ev, typ, body) {
		resetEvent(ev)
		return
	}
	if typ == 'E' && ev.Kind == Error && len(s.segs) > 0 && s.segs[0].extended {
		done := int(s.done.Load())
		ev.Completed = &done
	}
	ev.T, ev.Session, ev.Tx = t, s.id, s.tx
	kind, idle := ev.Kind, ev.Kind == Ready && ev.Status == "I"
	if kind == CopyStart && ev.Direction != "out" {
		s.copyIn = true
	}
	s.emit(ev)
	if kind == Ready {
		s.ready(idle, t)
	}
}

// ready follows a ReadyForQuery recorded at time t (mu held): the round
// trip it answers is over, and with idle (status 'I') so is the
// session's transaction when the client sent anything in it.
func (s *Session) ready(idle bool, t int64) {
	if len(s.segs) > 0 {
		s.segs = s.segs[:copy(s.segs, s.segs[1:])]
	}
	s.done.Store(0)
	s.copyIn = false
	if idle && s.busy {
		s.tx++
		s.busy = false
	}
	if s.pending > 0 {
		s.pending--
	}
	s.release(t)
	// The round trip is over: the batch goes to the writer, and an empty
	// one comes back under the same lock, for the session's next round
	// trip (the writer's sweep takes it back from a session gone quiet).
	if s.out != nil {
		s.out = s.w.exchange(s.out)
	}
}

// End records the end of the session with a reason ("client closed",
// "server closed", "shutdown", …), after the client messages still held
// back. Events after End are ignored; the writer flushes its buffer when it
// writes this event. End every session before closing the Writer: events
// of a session not ended are lost with its held messages.
func (s *Session) End(reason string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.pending = 0
	t := s.w.now()
	for i := range s.held {
		s.emitFrontend(&s.held[i], t)
	}
	s.held = nil
	s.ended = true
	ev := &s.back
	ev.T, ev.Session, ev.Tx, ev.Kind, ev.Reason = t, s.id, s.tx, SessionEnd, reason
	s.emit(ev)
	s.handOver()
	s.w.smu.Lock()
	delete(s.w.live, s)
	s.w.smu.Unlock()
}

// Hazard records that the pooler met session state in the statement the
// client sent last (call it after that statement's Frontend): rule is the
// catalogue rule, action what the session-state policy did with it, and
// fingerprint the statement's pg_query fingerprint.
func (s *Session) Hazard(rule, action, fingerprint string) {
	if s == nil {
		return
	}
	ev := Event{Kind: Hazard, Rule: rule, Action: action, Fingerprint: fingerprint}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	ev.Session = s.id
	if len(s.held) > 0 && len(s.held) < maxHeld {
		// The statement it belongs to is held: stay right after it.
		s.hold(&ev)
		return
	}
	s.emitFrontend(&ev, s.w.now())
}
