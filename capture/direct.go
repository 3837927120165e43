package capture

import (
	"bytes"
	"encoding/binary"
)

// The direct path: the messages a busy session sends most (Query, Parse,
// Bind, Describe, Close, Execute, Sync, Flush and ReadyForQuery) are
// encoded straight from their wire bytes into the batch, without filling
// and then clearing an Event. It takes only well-formed, whole messages;
// anything else returns false and goes the general way (decodeFrontend,
// appendEvent), so the lines it writes are byte for byte those that way
// would write (FuzzDirect checks this).

// prefix caches the start of a session's last line, `{"t":…,"s":…,"tx":…,
// "ev":`: the messages of one client read share their time, session and
// transaction, so each after the first copies it.
type prefix struct {
	t, tx int64
	n     int // length of b in use; 0: nothing cached
	b     [96]byte
}

// appendPrefix appends the start of an event line of session id at time t
// in transaction tx.
func (p *prefix) appendPrefix(b []byte, t int64, id uint64, tx int64) []byte {
	if p.n > 0 && p.t == t && p.tx == tx {
		return append(b, p.b[:p.n]...)
	}
	start := len(b)
	b = append(b, `{"t":`...)
	b = appendInt(b, t)
	b = append(b, `,"s":`...)
	b = appendUint(b, id)
	b = append(b, `,"tx":`...)
	b = appendInt(b, tx)
	b = append(b, `,"ev":`...)
	if n := len(b) - start; n <= len(p.b) {
		p.t, p.tx, p.n = t, tx, copy(p.b[:], b[start:])
	}
	return b
}

// directWire reads a message body for the direct path: every read checks
// its bounds and sets bad instead of failing.
type directWire struct {
	b   []byte
	bad bool
}

func (w *directWire) cstring() []byte {
	i := bytes.IndexByte(w.b, 0)
	if i < 0 {
		w.bad = true
		return nil
	}
	s := w.b[:i]
	w.b = w.b[i+1:]
	return s
}

func (w *directWire) int16() int {
	if len(w.b) < 2 {
		w.bad = true
		return 0
	}
	v := int(int16(binary.BigEndian.Uint16(w.b)))
	w.b = w.b[2:]
	return v
}

func (w *directWire) int32() int32 {
	if len(w.b) < 4 {
		w.bad = true
		return 0
	}
	v := int32(binary.BigEndian.Uint32(w.b))
	w.b = w.b[4:]
	return v
}

func (w *directWire) skip(n int) {
	if n < 0 || len(w.b) < n {
		w.bad = true
		return
	}
	w.b = w.b[n:]
}

// whole reports whether the message was read without fault and to its end.
func (w *directWire) whole() bool { return !w.bad && len(w.b) == 0 }

// appendDirect appends the rest of the event line of a whole client
// message (after appendPrefix) and reports whether it could: false for a
// type it does not take or a malformed message, and b is then to be cut
// back by the caller.
func appendDirect(b []byte, typ byte, body []byte) ([]byte, bool) {
	w := directWire{b: body}
	switch typ {
	case 'Q':
		sql := w.cstring()
		if !w.whole() {
			return b, false
		}
		b = append(b, `"query"`...)
		b = appendBytesField(b, "sql", sql)
	case 'P':
		name := w.cstring()
		sql := w.cstring()
		n := w.int16()
		if w.bad || n < 0 || len(w.b) != 4*n {
			return b, false
		}
		b = append(b, `"parse","name":`...)
		b = appendString(b, view(name))
		b = appendBytesField(b, "sql", sql)
		if n > 0 {
			b = append(b, `,"param_types":[`...)
			for i := 0; i < n; i++ {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendUint(b, uint64(binary.BigEndian.Uint32(w.b[4*i:])))
			}
			b = append(b, ']')
		}
	case 'B':
		portal := w.cstring()
		name := w.cstring()
		if w.bad {
			return b, false
		}
		// What skipBindValues checks, without keeping anything.
		w.skip(2 * w.int16())
		n := w.int16()
		for i := 0; i < n && !w.bad; i++ {
			if l := int(w.int32()); l > 0 {
				w.skip(l)
			} else if l < -1 {
				w.bad = true
			}
		}
		if n < 0 {
			w.bad = true
		}
		w.skip(2 * w.int16())
		if !w.whole() {
			return b, false
		}
		b = append(b, `"bind"`...)
		b = appendBytesField(b, "portal", portal)
		b = append(b, `,"name":`...)
		b = appendString(b, view(name))
	case 'D', 'C':
		if len(body) < 2 || body[0] != 'S' && body[0] != 'P' {
			return b, false
		}
		target := body[0]
		w.b = body[1:]
		name := w.cstring()
		if !w.whole() {
			return b, false
		}
		if typ == 'D' {
			b = append(b, `"describe","target":"`...)
		} else {
			b = append(b, `"close","target":"`...)
		}
		b = append(b, target, '"')
		b = append(b, `,"name":`...)
		b = appendString(b, view(name))
	case 'E':
		portal := w.cstring()
		rows := w.int32()
		if !w.whole() {
			return b, false
		}
		b = append(b, `"execute"`...)
		b = appendBytesField(b, "portal", portal)
		b = appendMaxRows(b, rows)
	case 'S':
		if len(body) != 0 {
			return b, false
		}
		b = append(b, `"sync"`...)
	case 'H':
		if len(body) != 0 {
			return b, false
		}
		b = append(b, `"flush"`...)
	default:
		return b, false
	}
	return append(b, '}', '\n'), true
}

// appendReady appends the rest of a ReadyForQuery's event line, or
// reports false for a malformed one.
func appendReady(b []byte, body []byte) ([]byte, bool) {
	if len(body) != 1 {
		return b, false
	}
	switch body[0] {
	case 'I', 'T', 'E':
	default:
		return b, false
	}
	b = append(b, `"ready","status":"`...)
	return append(b, body[0], '"', '}', '\n'), true
}

// appendBytesField is appendStrField for bytes of a message body.
func appendBytesField(b []byte, key string, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return appendString(appendKey(b, key), view(v))
}
