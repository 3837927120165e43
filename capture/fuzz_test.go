package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// asRead is s after a trip through the encoder and encoding/json: invalid
// UTF-8 bytes become U+FFFD.
func asRead(s string) string {
	var out string
	if err := json.Unmarshal(appendString(nil, s), &out); err != nil {
		panic(err)
	}
	return out
}

// FuzzReader feeds arbitrary files to the reader: it may return errors but
// must not panic, loop or accept a line after an error.
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{Mode: "record"}, Options{})
	s := w.StartSession(SessionInfo{User: "u", Params: map[string]string{"options": "-c x=1"}})
	s.Frontend('Q', []byte("SELECT 'é'\x00"), 12)
	s.Frontend('P', []byte("s1\x00SELECT $1\x00\x00\x01\x00\x00\x00\x17"), 20)
	s.Backend('Z', []byte{'I'})
	s.End("x")
	_ = w.Close()
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-20])
	f.Add([]byte(`{"format":"pgpoolcheck-capture","version":"1.0"}` + "\n" + `{"t":1,"s":1,"tx":1,"ev":"query","sql":"\ud800"}`))
	f.Add([]byte(`{"format":"pgpoolcheck-capture","version":"9.1"}`))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for n := 0; ; n++ {
			if n > len(data) {
				t.Fatal("more events than bytes")
			}
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					return
				}
				if _, err := r.Next(); err != io.EOF {
					t.Fatal("Next after EOF did not return EOF")
				}
				return
			}
			if ev.Kind == "" || ev.Line < 2 {
				t.Fatalf("event without kind or line: %+v", ev)
			}
		}
	})
}

// fuzzStrs is shared by FuzzFrontend's inputs (one at a time per worker),
// so that strings come from the session cache too.
var fuzzStrs interner

// FuzzFrontend decodes arbitrary client messages, whole and cut short; the
// encoded event must read back.
func FuzzFrontend(f *testing.F) {
	for _, seed := range []string{"QSELECT 1\x00", "Ps\x00q\x00\x00\x01\x00\x00\x00\x17", "Bp\x00s\x00\x00\x00\x00\x01\x00\x00\x00\x01x\x00\x00", "DSs\x00", "E\x00\x00\x00\x00\x00", "F\x00\x00\x04\xd2"} {
		f.Add(seed[0], []byte(seed[1:]), 0)
	}
	f.Fuzz(func(t *testing.T, typ byte, body []byte, extra int) {
		total := len(body)
		if extra > 0 {
			total += extra % 1000
		}
		var ev Event
		if !decodeFrontend(&ev, typ, body, len(body) < total, true) {
			return
		}
		ev.own(&fuzzStrs) // as a held event is
		ev.Session, ev.Tx = 1, 1
		line := appendEvent(nil, &ev)
		data := append([]byte(`{"format":"pgpoolcheck-capture","version":"1.0"}`+"\n"), line...)
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Next()
		if err != nil {
			t.Fatalf("%v\n%s", err, line)
		}
		if got.Kind != ev.Kind || got.Name != asRead(ev.Name) || got.Portal != asRead(ev.Portal) || got.SQL != asRead(ev.SQL) || len(got.ParamTypes) != len(ev.ParamTypes) {
			t.Fatalf("round trip: %+v != %+v", got, ev)
		}
	})
}

// FuzzSession drives a session with an arbitrary sequence of client and
// server messages (pipelined, unanswered, interleaved with the writer's
// sweeps) and checks what reaches the file: one event per recorded
// message, in the session's order, with times and transaction numbers
// that never go back and each Parse's own parameter types.
func FuzzSession(f *testing.F) {
	f.Add([]byte{1, 3, 5, 0, 5, 2, 4, 3, 5})
	f.Add([]byte{0, 0, 0, 5, 6, 5, 9, 1, 1, 3, 3, 5, 5})
	f.Add([]byte{0, 11, 12, 5, 8, 8, 7, 5, 10, 1, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > maxHeld/2 {
			ops = ops[:maxHeld/2] // beyond maxHeld held messages, order is not kept
		}
		var buf lockedBuffer
		w := NewWriter(&buf, Header{}, Options{})
		s := w.StartSession(SessionInfo{User: "u"})
		want := 2 // session start and end
		var types [][]uint32
		for i, op := range ops {
			switch op % 14 {
			case 0:
				s.Frontend('Q', []byte("SELECT 1\x00"), 9)
			case 1:
				n := int(op/14) % 4
				pt := make([]uint32, n)
				body := []byte("s\x00SELECT 1\x00")
				body = append(body, 0, byte(n))
				for j := range pt {
					pt[j] = uint32(i*4 + j)
					body = append(body, byte(pt[j]>>24), byte(pt[j]>>16), byte(pt[j]>>8), byte(pt[j]))
				}
				s.Frontend('P', body, len(body))
				types = append(types, pt)
			case 2:
				s.Frontend('B', []byte("\x00s\x00\x00\x00\x00\x00\x00\x00"), 9)
			case 3:
				s.Frontend('S', nil, 0)
			case 4:
				s.Frontend('E', []byte("\x00\x00\x00\x00\x00"), 5)
			case 5:
				s.Backend('Z', []byte{'I'})
			case 6:
				s.Backend('Z', []byte{'T'})
			case 7:
				s.Backend('E', []byte("SERROR\x00C42601\x00Mbad\x00\x00"))
			case 8:
				s.Backend('A', []byte("\x00\x00\x00\x01ch\x00x\x00"))
			case 9:
				s.Hazard("session-set", "replayed", "f")
			case 10:
				w.sweep(nil)
				want-- // not an event
			case 11:
				s.Backend('G', []byte{0, 0, 0})
			case 12:
				s.Frontend('c', nil, 0)
			case 13:
				s.Backend('C', []byte("SELECT 1\x00"))
				want-- // counted, not recorded
			}
			want++
		}
		s.End("done")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, evs, _ := readAll(t, []byte(buf.String()))
		if len(evs) != want {
			t.Fatalf("%d events, want %d", len(evs), want)
		}
		var got [][]uint32
		for i, ev := range evs {
			if i > 0 && (ev.T < evs[i-1].T || ev.Tx < evs[i-1].Tx) {
				t.Fatalf("event %d (%s) goes back: t %d tx %d after t %d tx %d", i, ev.Kind, ev.T, ev.Tx, evs[i-1].T, evs[i-1].Tx)
			}
			if ev.Kind == Parse {
				got = append(got, ev.ParamTypes)
			}
		}
		if len(got) != len(types) {
			t.Fatalf("%d parses, want %d", len(got), len(types))
		}
		for i := range types {
			if !slices.Equal(got[i], types[i]) && (len(got[i]) != 0 || len(types[i]) != 0) {
				t.Fatalf("parse %d: types %v, want %v", i, got[i], types[i])
			}
		}
	})
}

// FuzzDirect checks the direct path against the general one: for any
// client message it takes, and any ReadyForQuery, it writes exactly the
// line decodeFrontend (or decodeBackend) and appendEvent write. Messages
// it refuses go the general way, which FuzzFrontend covers.
func FuzzDirect(f *testing.F) {
	for _, seed := range []string{
		"QSELECT 1\x00", "Q\x00", "QSELECT 'é\"\\\n'\x00",
		"Ps\x00q\x00\x00\x01\x00\x00\x00\x17", "P\x00q\x00\x00\x00", "Ps\x00q\x00\xff\xff",
		"Bp\x00s\x00\x00\x00\x00\x01\x00\x00\x00\x01x\x00\x00", "B\x00\x00\x00\x00\x00\x00\x00\x00",
		"B\x00s\x00\x00\x01\x00\x01\x00\x02\xff\xff\xff\xff\x00\x00\x00\x00\x00\x01\x00\x01",
		"DSs\x00", "DP\x00", "CSs1\x00", "DXs\x00", "E\x00\x00\x00\x00\x00", "Ep\x00\x00\x00\x00\x0a",
		"E\x00\xff\xff\xff\xff", "S", "Sx", "H", "ZI", "ZT", "ZE", "ZX", "Z", "F\x00\x00\x04\xd2",
	} {
		f.Add(seed[0], []byte(seed[1:]), int64(12345678901), int64(3))
	}
	f.Fuzz(func(t *testing.T, typ byte, body []byte, at, tx int64) {
		if at < 0 {
			at = -at
		}
		var p prefix
		// The prefix of an earlier line of the same time and transaction
		// is reused: write one first, half the time.
		if at%2 == 0 {
			p.appendPrefix(nil, at, 7, tx)
		}
		got, ok := p.appendPrefix([]byte("x"), at, 7, tx), false
		ev := Event{T: at, Session: 7, Tx: tx}
		var decoded bool
		if typ == 'Z' {
			got, ok = appendReady(got, body)
			decoded = decodeBackend(&ev, typ, body)
		} else {
			got, ok = appendDirect(got, typ, body)
			decoded = decodeFrontend(&ev, typ, body, false, false)
		}
		if !ok {
			return
		}
		if !decoded || ev.Invalid != "" || ev.Truncated {
			t.Fatalf("direct path took %q %q, which decodes as %+v", typ, body, ev)
		}
		want := appendEvent([]byte("x"), &ev)
		if !bytes.Equal(got, want) {
			t.Fatalf("direct path for %q %q:\n got %s\nwant %s", typ, body, got, want)
		}
		if !json.Valid(got[1:]) {
			t.Fatalf("direct path wrote invalid JSON: %s", got[1:])
		}
	})
}

// FuzzReadParts reads a capture of two parts whose first part ends as a
// part does when the disk filled: cut anywhere after its header (no
// trailer, often in the middle of a line), with arbitrary bytes after the
// cut (no newline: what a write left of a line). ReadFiles must read both
// parts without error: every whole event line of the first part, at most
// the cut one more, then the second part whole, and warn about the first
// part only.
func FuzzReadParts(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{Mode: "record"}, Options{})
	for i := range 3 {
		s := w.StartSession(SessionInfo{User: "u", Database: "d"})
		s.Frontend('Q', fmt.Appendf(nil, "SELECT %d, 'é'\x00", i), 16)
		s.Backend('Z', []byte{'I'})
		s.Frontend('P', []byte("s1\x00SELECT $1\x00\x00\x01\x00\x00\x00\x17"), 20)
		s.Frontend('S', nil, 0)
		s.Backend('E', []byte("SERROR\x00C42601\x00Mbad\x00\x00"))
		s.Backend('Z', []byte{'I'})
		s.End("done")
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	header := bytes.IndexByte(good, '\n') + 1
	trailer := bytes.LastIndexByte(good[:len(good)-1], '\n') + 1 // where the trailer starts
	_, all, _ := readAllB(f, good)
	f.Add(uint32(0), []byte(nil))
	f.Add(uint32(trailer-header), []byte(nil))
	f.Add(uint32(40), []byte(`"}`))
	f.Add(uint32(trailer-header-1), []byte{})
	f.Add(uint32(5), []byte(`{"trailer":true}`))
	f.Fuzz(func(t *testing.T, cut uint32, junk []byte) {
		junk = bytes.ReplaceAll(junk, []byte{'\n'}, nil)
		end := header + int(cut)%(trailer-header+1) // the part never got to its trailer
		first := append(bytes.Clone(good[:end]), junk...)
		dir := t.TempDir()
		p1, p2 := filepath.Join(dir, "cap.jsonl"), filepath.Join(dir, "cap.2.jsonl")
		if err := os.WriteFile(p1, first, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p2, good, 0o600); err != nil {
			t.Fatal(err)
		}
		whole := bytes.Count(good[header:end], []byte{'\n'}) // event lines before the cut
		n1, n2 := 0, 0
		warns, err := ReadFiles([]string{p1, p2}, func(h Header, file string, ev *Event) error {
			if ev.Kind == "" || ev.Line < 2 {
				t.Fatalf("%s: event without kind or line: %+v", file, ev)
			}
			if file == p1 {
				n1++
			} else {
				if n2 < len(all) && ev.Kind != all[n2].Kind {
					t.Fatalf("%s: event %d is %s, want %s", file, n2, ev.Kind, all[n2].Kind)
				}
				n2++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v (first part %q)", err, first)
		}
		if n1 != whole && n1 != whole+1 {
			t.Fatalf("%d events from the cut part, want %d (or one more when the cut line reads whole)", n1, whole)
		}
		if n2 != len(all) {
			t.Fatalf("%d events from the second part, want %d", n2, len(all))
		}
		if len(warns) == 0 && len(junk) == 0 {
			// (Junk may complete a trailer: {"trailer":true}.)
			t.Fatal("no warning for a part without trailer")
		}
		for _, w := range warns {
			if !strings.HasPrefix(w, p1) {
				t.Fatalf("warning about the whole part: %s", w)
			}
		}
	})
}

// readAllB is readAll for a testing.TB.
func readAllB(t testing.TB, data []byte) (Header, []*Event, *Reader) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), "test.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var evs []*Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return r.Header(), evs, r
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}
