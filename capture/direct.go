package capture

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

// appendDirect appends the rest of the event line of a whole client
// message (after appendPrefix) and reports whether it could: false for a
// type it does not take or a malformed message, and b is then to be cut
// back by the caller.
func appendDirect(b []byte, typ byte, body []byte) ([]byte, bool) {
	// The strings read are views of body, written out before this returns.
	w := wire{b: body, view: true}
	whole := func() bool { return w.finish() == "" }
	switch typ {
	case 'Q':
		sql := w.cstring()
		if !whole() {
			return b, false
		}
		b = append(b, `"query"`...)
		b = appendStrField(b, "sql", sql)
	case 'P':
		name := w.cstring()
		sql := w.cstring()
		n := int(w.int16())
		if w.err != "" || n < 0 || len(w.b) != 4*n {
			return b, false
		}
		b = append(b, `"parse","name":`...)
		b = appendString(b, name)
		b = appendStrField(b, "sql", sql)
		if n > 0 {
			b = append(b, `,"param_types":[`...)
			for i := range n {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendUint(b, uint64(uint32(w.int32())))
			}
			b = append(b, ']')
		}
	case 'B':
		portal := w.cstring()
		name := w.cstring()
		skipBindValues(&w)
		if !whole() {
			return b, false
		}
		b = append(b, `"bind"`...)
		b = appendStrField(b, "portal", portal)
		b = append(b, `,"name":`...)
		b = appendString(b, name)
	case 'D', 'C':
		target := w.byte1()
		name := w.cstring()
		if !whole() || target != 'S' && target != 'P' {
			return b, false
		}
		if typ == 'D' {
			b = append(b, `"describe","target":"`...)
		} else {
			b = append(b, `"close","target":"`...)
		}
		b = append(b, target, '"')
		b = append(b, `,"name":`...)
		b = appendString(b, name)
	case 'E':
		portal := w.cstring()
		rows := w.int32()
		if !whole() {
			return b, false
		}
		b = append(b, `"execute"`...)
		b = appendStrField(b, "portal", portal)
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
