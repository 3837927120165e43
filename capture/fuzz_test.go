package capture

import (
	"bytes"
	"encoding/json"
	"io"
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
		if !decodeFrontend(&ev, typ, body, len(body) < total, &fuzzStrs) {
			return
		}
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
