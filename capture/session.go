package capture

import (
	"strings"
	"sync"
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
// from two goroutines at once (the client reader and the server pump) and
// never wait for disk I/O; End may be called from any goroutine, and more
// than once (only the first call counts). A nil *Session records nothing,
// so a proxy without a capture can call its methods unconditionally.
//
// Order matters for transaction numbers: call Frontend before the message
// is forwarded to the server, and Backend before the message is forwarded
// to the client, so that a ReadyForQuery is never recorded before the
// client message it answers. Transaction numbers follow the order of the
// calls: a client that pipelines messages past a Sync before the server's
// ReadyForQuery for it has them counted in the transaction that was
// current when they were recorded.
type Session struct {
	w  *Writer
	id uint64

	mu    sync.Mutex // orders the session's events and guards what follows
	tx    int64      // current transaction number
	busy  bool       // a client message since the session was last idle
	ended bool
}

// StartSession records a session start and returns the session's recorder.
func (w *Writer) StartSession(info SessionInfo) *Session {
	s := &Session{w: w, id: w.nextSession.Add(1), tx: 1}
	ev := newEvent()
	ev.T, ev.Session, ev.Kind = w.now(), s.id, SessionStart
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
	w.enqueue(ev)
	return s
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
	if s == nil {
		return
	}
	switch typ {
	case 'Q', 'P', 'B', 'D', 'C', 'E', 'S', 'H', 'F', 'c', 'f':
	default:
		return
	}
	ev := newEvent()
	if !decodeFrontend(ev, typ, body, len(body) < total) {
		freeEvent(ev)
		return
	}
	s.mu.Lock()
	if !s.ended {
		s.busy = true
		ev.T, ev.Session, ev.Tx = s.w.now(), s.id, s.tx
		s.w.enqueue(ev)
	} else {
		freeEvent(ev)
	}
	s.mu.Unlock()
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
	default:
		return
	}
	ev := newEvent()
	if !decodeBackend(ev, typ, body) {
		freeEvent(ev)
		return
	}
	s.mu.Lock()
	if !s.ended {
		ev.T, ev.Session, ev.Tx = s.w.now(), s.id, s.tx
		idle := ev.Kind == Ready && ev.Status == "I"
		s.w.enqueue(ev)
		if idle && s.busy {
			s.tx++
			s.busy = false
		}
	} else {
		freeEvent(ev)
	}
	s.mu.Unlock()
}

// End records the end of the session with a reason ("client closed",
// "server closed", "shutdown", …). Events after End are ignored; the
// writer flushes its buffer when it writes this event.
func (s *Session) End(reason string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	ev := newEvent()
	ev.T, ev.Session, ev.Tx, ev.Kind, ev.Reason = s.w.now(), s.id, s.tx, SessionEnd, reason
	s.w.enqueue(ev)
}
