package capture

import (
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
	b = strconv.AppendInt(b, ev.T, 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendUint(b, ev.Session, 10)
	b = append(b, `,"tx":`...)
	b = strconv.AppendInt(b, ev.Tx, 10)
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
		b = strconv.AppendUint(b, uint64(o), 10)
	}
	return append(b, ']')
}

func appendMaxRows(b []byte, n int32) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(appendKey(b, "max_rows"), int64(n), 10)
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
		b = strconv.AppendUint(appendKey(b, "oid"), uint64(ev.OID), 10)
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
		b = strconv.AppendInt(appendKey(b, "completed"), int64(*ev.Completed), 10)
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
	b = strconv.AppendInt(b, t.T, 10)
	b = append(b, `,"events":`...)
	b = strconv.AppendInt(b, t.Events, 10)
	b = append(b, `,"dropped":`...)
	b = strconv.AppendInt(b, t.Dropped, 10)
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
