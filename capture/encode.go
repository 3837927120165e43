package capture

import (
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Events are encoded by appending bytes, on the recording session's
// goroutine (or the writer's, for a late event): no reflection, no
// allocation once the buffer has grown. Keys are written in a fixed order
// (t, s, tx, ev, then the kind's fields) and zero fields are left out, as
// encoding/json's omitempty would.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// control characters are escaped; everything else is copied as is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes at a time: no control character, quote,
		// backslash or non-ASCII byte among them.
		for i+8 <= len(s) && plain8(load8(s[i:i+8])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 reads the first eight bytes of s as a little-endian word (the
// compiler makes it one load).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plain8 reports whether none of the eight bytes in x needs escaping in
// a JSON string or UTF-8 checking: each is at least 0x20, below 0x80, and
// neither '"' nor '\\'.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte b has its high bit set in has(x, n) when b < n (for b < 0x80).
	has := func(x uint64, n uint64) uint64 { return (x - ones*n) & ^x & highs }
	eq := func(x uint64, c uint64) uint64 { return has(x^(ones*c), 1) }
	return (x&highs)|has(x, 0x20)|eq(x, '"')|eq(x, '\\') == 0
}

func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendStrField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(appendKey(b, key), v)
}

// appendEvent appends ev as one JSON line (with the newline). Only the
// fields of the event's kind are looked at.
func appendEvent(b []byte, ev *Event) []byte {
	b = append(b, `{"t":`...)
	b = appendInt(b, ev.T)
	b = append(b, `,"s":`...)
	b = appendUint(b, ev.Session)
	b = append(b, `,"tx":`...)
	b = appendInt(b, ev.Tx)
	b = append(b, `,"ev":`...)
	b = appendString(b, string(ev.Kind))
	switch ev.Kind {
	case Query:
		b = appendStrField(b, "sql", ev.SQL)
	case Parse:
		b = appendString(appendKey(b, "name"), ev.Name)
		b = appendStrField(b, "sql", ev.SQL)
		b = appendOIDs(b, ev.ParamTypes)
	case Bind:
		b = appendStrField(b, "portal", ev.Portal)
		b = appendString(appendKey(b, "name"), ev.Name)
	case Describe, Close:
		b = appendStrField(b, "target", ev.Target)
		b = appendString(appendKey(b, "name"), ev.Name)
	case Execute:
		b = appendStrField(b, "portal", ev.Portal)
		b = appendMaxRows(b, ev.MaxRows)
	case Sync, Flush:
	case Ready:
		b = appendStrField(b, "status", ev.Status)
	default:
		b = appendOtherFields(b, ev)
	}
	if ev.Truncated {
		b = append(appendKey(b, "truncated"), "true"...)
	}
	b = appendStrField(b, "invalid", ev.Invalid)
	b = appendStrField(b, "redact", ev.Redact)
	return append(b, '}', '\n')
}

// digitPairs holds "00" to "99", for appendUint.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendUint appends v in decimal, as strconv.AppendUint does, but writes
// the digits in place: strconv formats into a buffer of its own and copies
// it, and since every event the proxy records starts with a time of eleven
// or more digits, that copy showed in the proxy's profile.
func appendUint(b []byte, v uint64) []byte {
	n := digits(v)
	b = slices.Grow(b, n)
	i := len(b) + n
	b = b[:i]
	for v >= 100 {
		d := v % 100 * 2
		v /= 100
		i -= 2
		b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
	}
	if v >= 10 {
		b[i-2], b[i-1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		b[i-1] = byte('0' + v)
	}
	return b
}

// pow10 holds 10⁰ to 10¹⁹, for digits.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// digits returns the number of decimal digits of v, from its bit length
// (log10(2) ≈ 1233/4096) rather than a division per digit.
func digits(v uint64) int {
	n := bits.Len64(v) * 1233 >> 12 // ⌊log10(v)⌋ or one less
	if v >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// appendInt is appendUint for an int64. The numbers of a capture are
// never negative but for a malformed message's (a negative max_rows); a
// negative one goes through strconv.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(b, v, 10)
	}
	return appendUint(b, uint64(v))
}

func appendOIDs(b []byte, oids []uint32) []byte {
	if len(oids) == 0 {
		return b
	}
	b = appendKey(b, "param_types")
	b = append(b, '[')
	for i, o := range oids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendUint(b, uint64(o))
	}
	return append(b, ']')
}

func appendMaxRows(b []byte, n int32) []byte {
	if n == 0 {
		return b
	}
	return appendInt(appendKey(b, "max_rows"), int64(n))
}

// appendOtherFields appends the fields of the less frequent kinds (and of
// any kind, in a fixed order, for events built by hand).
func appendOtherFields(b []byte, ev *Event) []byte {
	b = appendStrField(b, "client", ev.Client)
	b = appendStrField(b, "user", ev.User)
	b = appendStrField(b, "database", ev.Database)
	b = appendStrField(b, "application_name", ev.ApplicationName)
	if len(ev.Params) > 0 {
		b = appendKey(b, "params")
		b = append(b, '{')
		for i, k := range sortedKeys(ev.Params) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, ev.Params[k])
		}
		b = append(b, '}')
	}
	b = appendStrField(b, "target", ev.Target)
	b = appendStrField(b, "portal", ev.Portal)
	b = appendStrField(b, "name", ev.Name)
	b = appendStrField(b, "sql", ev.SQL)
	b = appendOIDs(b, ev.ParamTypes)
	b = appendMaxRows(b, ev.MaxRows)
	if ev.OID != 0 {
		b = appendUint(appendKey(b, "oid"), uint64(ev.OID))
	}
	b = appendStrField(b, "direction", ev.Direction)
	b = appendStrField(b, "from", ev.From)
	if ev.Fail {
		b = append(appendKey(b, "fail"), "true"...)
	}
	b = appendStrField(b, "status", ev.Status)
	b = appendStrField(b, "sqlstate", ev.SQLState)
	b = appendStrField(b, "severity", ev.Severity)
	b = appendStrField(b, "message", ev.Message)
	if ev.Completed != nil {
		b = appendInt(appendKey(b, "completed"), int64(*ev.Completed))
	}
	b = appendStrField(b, "channel", ev.Channel)
	b = appendStrField(b, "reason", ev.Reason)
	b = appendStrField(b, "rule", ev.Rule)
	b = appendStrField(b, "action", ev.Action)
	b = appendStrField(b, "fingerprint", ev.Fingerprint)
	return b
}

// appendTrailer appends the trailer line.
func appendTrailer(b []byte, t Trailer) []byte {
	b = append(b, `{"trailer":true,"t":`...)
	b = appendInt(b, t.T)
	b = append(b, `,"events":`...)
	b = appendInt(b, t.Events)
	b = append(b, `,"dropped":`...)
	b = appendInt(b, t.Dropped)
	return append(b, '}', '\n')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Insertion sort: startup parameters are few.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
