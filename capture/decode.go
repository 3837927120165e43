package capture

import (
	"bytes"
	"encoding/binary"
	"unsafe"
)

// wire reads the fields of one protocol message body. Once a read fails,
// every later read returns zero values and err stays set.
type wire struct {
	b   []byte
	err string
	// view: strings are views of b, valid only while b is (see
	// decodeFrontend); otherwise fresh copies.
	view bool
}

func (w *wire) cstring() string {
	if w.err != "" {
		return ""
	}
	i := bytes.IndexByte(w.b, 0)
	if i < 0 {
		w.err = "string without terminating zero byte"
		return ""
	}
	s := view(w.b[:i])
	if !w.view {
		s = string(w.b[:i])
	}
	w.b = w.b[i+1:]
	return s
}

func (w *wire) byte1() byte {
	if w.err != "" {
		return 0
	}
	if len(w.b) < 1 {
		w.err = "message too short"
		return 0
	}
	c := w.b[0]
	w.b = w.b[1:]
	return c
}

func (w *wire) int16() int16 {
	if w.err != "" {
		return 0
	}
	if len(w.b) < 2 {
		w.err = "message too short"
		return 0
	}
	v := int16(binary.BigEndian.Uint16(w.b))
	w.b = w.b[2:]
	return v
}

func (w *wire) int32() int32 {
	if w.err != "" {
		return 0
	}
	if len(w.b) < 4 {
		w.err = "message too short"
		return 0
	}
	v := int32(binary.BigEndian.Uint32(w.b))
	w.b = w.b[4:]
	return v
}

// skip drops n bytes.
func (w *wire) skip(n int) {
	if w.err != "" {
		return
	}
	if n < 0 || len(w.b) < n {
		w.err = "message too short"
		return
	}
	w.b = w.b[n:]
}

// finish records what a message with bytes left over is.
func (w *wire) finish() string {
	if w.err == "" && len(w.b) > 0 {
		return "trailing bytes after the message"
	}
	return w.err
}

// decodeFrontend fills ev from a client message and reports whether the
// message is one the capture records. truncated says body is only a prefix
// of the message: a field cut short is then not an error. The strings it
// sets are copies, or with viewBody views of body: those (SQL, Name and
// Portal) are only valid while body is, and an event kept longer must own
// them first (Event.own).
func decodeFrontend(ev *Event, typ byte, body []byte, truncated, viewBody bool) bool {
	w := wire{b: body, view: viewBody}
	switch typ {
	case 'Q':
		ev.Kind = Query
		ev.SQL = sqlText(&w, truncated)
	case 'P':
		ev.Kind = Parse
		ev.Name = w.cstring()
		ev.SQL = sqlText(&w, truncated)
		if w.err == "" && (!truncated || len(w.b) > 0) {
			n := int(w.int16())
			if n < 0 {
				w.err = "negative parameter count"
			}
			for i := 0; i < n && w.err == ""; i++ {
				if truncated && len(w.b) < 4 {
					break
				}
				ev.ParamTypes = append(ev.ParamTypes, uint32(w.int32()))
			}
		}
	case 'B':
		ev.Kind = Bind
		ev.Portal = w.cstring()
		ev.Name = w.cstring()
		if !truncated {
			skipBindValues(&w)
		} else if w.err != "" {
			w.err = "" // names cut short: keep what there is
		}
	case 'D', 'C':
		ev.Kind = Describe
		if typ == 'C' {
			ev.Kind = Close
		}
		switch t := w.byte1(); t {
		case 'S', 'P':
			ev.Target = oneLetter(t)
		default:
			if w.err == "" {
				w.err = "unknown describe or close target"
			}
		}
		ev.Name = w.cstring()
	case 'E':
		ev.Kind = Execute
		ev.Portal = w.cstring()
		ev.MaxRows = w.int32()
	case 'S':
		ev.Kind = Sync
	case 'H':
		ev.Kind = Flush
	case 'F':
		ev.Kind = FunctionCall
		ev.OID = uint32(w.int32())
		w.b = nil // the arguments are parameter values: never kept
	case 'c':
		ev.Kind = CopyEnd
		ev.From = "client"
	case 'f':
		ev.Kind = CopyEnd
		ev.From = "client"
		ev.Fail = true
		w.b = nil // the message may quote data
	default:
		// CopyData, Terminate, password and SASL messages and anything
		// else are not recorded.
		return false
	}
	if truncated {
		ev.Truncated = true
		if w.err == "message too short" || w.err == "string without terminating zero byte" {
			w.err = ""
		}
		w.b = nil
	}
	ev.Invalid = w.finish()
	return true
}

// view returns b as a string without copying it: valid only while b's
// bytes stay as they are. A recorded client message is encoded before the
// Frontend call that shows it returns, so most events never need a copy of
// their statement text (for the simple protocol, whose text changes with
// every literal, that copy was an allocation per statement).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// own replaces the strings of ev that decodeFrontend may have left as views
// of a message body by copies (from in's cache when they are in it).
func (ev *Event) own(in *interner) {
	ev.SQL = in.get(bytesOf(ev.SQL))
	ev.Name = in.get(bytesOf(ev.Name))
	ev.Portal = in.get(bytesOf(ev.Portal))
}

// bytesOf returns the bytes of s without copying them; they must not be
// modified.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// oneLetter returns c as a string; the runtime keeps every one-byte
// string, so this allocates nothing.
func oneLetter(c byte) string { return string([]byte{c}) }

// interner hands out the strings a session sends again and again (its
// statement text, its statement and portal names) without copying them
// each time: a round-robin cache of the last few short strings, for the
// events a session keeps past the call that recorded them (Event.own). It
// is used by one goroutine at a time.
type interner struct {
	s    [internSlots]string
	next int
}

const (
	internSlots = 8
	// maxInterned bounds what one session's cache holds: at most
	// internSlots × maxInterned bytes.
	maxInterned = 1024
)

// get returns b as a string, from the cache when b is in it.
func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if in == nil || len(b) > maxInterned {
		return string(b)
	}
	for _, s := range in.s {
		if s == string(b) { // compared without a copy
			return s
		}
	}
	s := string(b)
	in.s[in.next] = s
	in.next = (in.next + 1) % internSlots
	return s
}

// sqlText reads the statement text of Query or Parse; in a prefix of a
// message it may end without its zero byte.
func sqlText(w *wire, truncated bool) string {
	if truncated && w.err == "" && bytes.IndexByte(w.b, 0) < 0 {
		s := validPrefix(w.b)
		w.b = nil
		return s
	}
	return w.cstring()
}

// validPrefix copies b, leaving out a UTF-8 sequence cut at its end.
func validPrefix(b []byte) string {
	end := len(b)
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			break
		}
		if c >= 0xC0 { // a lead byte: complete?
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			if i < need {
				end = len(b) - i
			}
			break
		}
	}
	return string(b[:end])
}

// skipBindValues walks over Bind's formats, values and result formats
// without keeping any of them, checking only that they fit.
func skipBindValues(w *wire) {
	n := int(w.int16())
	w.skip(2 * n)
	n = int(w.int16())
	if n < 0 {
		w.err = "negative parameter count"
		return
	}
	for i := 0; i < n && w.err == ""; i++ {
		l := int(w.int32())
		if l > 0 {
			w.skip(l)
		} else if l < -1 {
			w.err = "invalid parameter length"
		}
	}
	n = int(w.int16())
	w.skip(2 * n)
}

// decodeBackend fills ev from a server message and reports whether the
// capture records it.
func decodeBackend(ev *Event, typ byte, body []byte) bool {
	w := wire{b: body}
	switch typ {
	case 'Z':
		ev.Kind = Ready
		switch s := w.byte1(); s {
		case 'I', 'T', 'E':
			ev.Status = oneLetter(s)
		default:
			if w.err == "" {
				w.err = "unknown transaction status"
			}
		}
	case 'E':
		ev.Kind = Error
		var sev, sevLocal string
		for w.err == "" {
			code := w.byte1()
			if code == 0 {
				break
			}
			v := w.cstring()
			switch code {
			case 'C':
				ev.SQLState = v
			case 'V':
				sev = v
			case 'S':
				sevLocal = v
			case 'M':
				ev.Message = v
			}
		}
		ev.Severity = sev
		if sev == "" {
			ev.Severity = sevLocal
		}
	case 'G', 'H', 'W':
		ev.Kind = CopyStart
		ev.Direction = map[byte]string{'G': "in", 'H': "out", 'W': "both"}[typ]
		w.b = nil
	case 'c':
		ev.Kind = CopyEnd
		ev.From = "server"
	case 'A':
		ev.Kind = Notification
		w.int32() // the notifying backend's pid
		ev.Channel = w.cstring()
		w.b = nil // the payload is data: never kept
	default:
		return false
	}
	ev.Invalid = w.finish()
	return true
}
