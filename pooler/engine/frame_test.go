package engine

import (
	"encoding/binary"
	"errors"
	"testing"
)

func header(typ byte, bodyLen int) []byte {
	h := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[1:], uint32(bodyLen+4))
	return h
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		in      []byte
		typ     byte
		n       int
		wantErr bool
	}{
		{[]byte{'Q', 0, 0, 0, 4}, 'Q', 0, false},
		{[]byte{'Q', 0, 0, 0, 10}, 'Q', 6, false},
		{[]byte{'Q', 0, 0, 0, 3}, 0, 0, true},
		{[]byte{'Q', 0xff, 0xff, 0xff, 0xff}, 0, 0, true},
		{[]byte{'d', 0, 0, 4, 5}, 'd', 1025, true}, // over a 1024-byte maximum
		{[]byte{'Q', 0, 0}, 0, 0, true},
	}
	for _, tt := range tests {
		typ, n, err := ParseHeader(tt.in, 1024)
		if (err != nil) != tt.wantErr || (err == nil && (typ != tt.typ || n != tt.n)) {
			t.Errorf("ParseHeader(%v) = %q, %d, %v", tt.in, typ, n, err)
		}
	}
	var tl *TooLargeError
	if _, _, err := ParseHeader([]byte{'Q', 0x7f, 0, 0, 0}, 1024); !errors.As(err, &tl) {
		t.Errorf("oversized: %v", err)
	}
}

// TestFrame drives the framing decisions through a client's life:
// messages relayed, a refusal that skips till Sync, Terminate, and the
// violations that close the client.
func TestFrame(t *testing.T) {
	type step struct {
		name   string
		h      []byte
		before func(*Client)
		act    Act
		typ    byte
		total  int
	}
	steps := []step{
		{name: "simple query", h: header('Q', 9), act: Relay, typ: 'Q', total: 14},
		{name: "empty Sync", h: header('S', 0), act: Relay, typ: 'S', total: 5},
		{name: "Parse refused: skipping starts", h: header('B', 20), before: (*Client).SkipTillSync, act: Skip, typ: 'B', total: 25},
		{name: "Execute skipped", h: header('E', 9), act: Skip, typ: 'E', total: 14},
		{name: "Query skipped too", h: header('Q', 9), act: Skip, typ: 'Q', total: 14},
		{name: "Sync ends it", h: header('S', 0), act: Relay, typ: 'S', total: 5},
		{name: "after the Sync", h: header('E', 9), before: (*Client).Synced, act: Relay, typ: 'E', total: 14},
		{name: "copy data", h: header('d', 100), act: Relay, typ: 'd', total: 105},
		{name: "largest body", h: header('d', 1024), act: Relay, typ: 'd', total: 1029},
		{name: "too large", h: header('d', 1025), act: Violation},
		{name: "length below 4", h: []byte{'Q', 0, 0, 0, 3}, act: Violation},
		{name: "negative length", h: []byte{'Q', 0x80, 0, 0, 0}, act: Violation},
		{name: "backend type", h: header('Z', 1), act: Violation},
		{name: "password message after login", h: header('p', 8), act: Violation},
		{name: "NUL type", h: header(0, 0), act: Violation},
		{name: "short header", h: []byte{'Q', 0, 0}, act: Violation},
		{name: "Terminate while skipping", h: header('X', 0), before: (*Client).SkipTillSync, act: Terminate, typ: 'X', total: 5},
	}
	c := &Client{Limits: &Limits{MaxMessage: 1024}}
	for _, st := range steps {
		if st.before != nil {
			st.before(c)
		}
		f := c.Frame(st.h)
		if f.Act != st.act {
			t.Fatalf("%s: act %d, want %d (err %v)", st.name, f.Act, st.act, f.Err)
		}
		if st.act == Violation {
			if f.Err == nil {
				t.Fatalf("%s: a violation without an error", st.name)
			}
			continue
		}
		if f.Type != st.typ || f.Total != st.total || f.Len != st.total-HeaderLen {
			t.Fatalf("%s: %q, %d bytes (body %d), want %q, %d", st.name, f.Type, f.Total, f.Len, st.typ, st.total)
		}
	}
	var tl *TooLargeError
	if f := c.Frame(header('Q', 2000)); !errors.As(f.Err, &tl) || tl.Size != 2000 || tl.Type != 'Q' {
		t.Fatalf("too large: %v", f.Err)
	}
	if f := c.Frame(header('Z', 1)); !errors.Is(f.Err, ErrInvalidType) {
		t.Fatalf("backend type: %v", f.Err)
	}
}

func TestIgnoredDetached(t *testing.T) {
	for _, typ := range []byte("QPBDECSHXdcfF") {
		want := typ == 'd' || typ == 'c' || typ == 'f'
		if IgnoredDetached(typ) != want {
			t.Errorf("IgnoredDetached(%q) = %v", typ, !want)
		}
	}
}

// FuzzFrame feeds untrusted headers to the framing decision: it never
// panics, a relayed or skipped message has a sane length, and only a
// violation carries an error.
func FuzzFrame(f *testing.F) {
	f.Add([]byte{'Q', 0, 0, 0, 4}, false)
	f.Add([]byte{'P', 0x80, 0, 0, 0}, true)
	f.Add([]byte{'X', 0, 0, 0, 4}, true)
	f.Add([]byte{'d', 0, 1, 0, 4}, false)
	f.Fuzz(func(t *testing.T, h []byte, skipping bool) {
		c := &Client{Limits: &Limits{MaxMessage: 1 << 20}}
		if skipping {
			c.SkipTillSync()
		}
		fr := c.Frame(h)
		switch fr.Act {
		case Violation:
			if fr.Err == nil {
				t.Fatal("violation without an error")
			}
		case Relay, Skip, Terminate:
			if fr.Err != nil || fr.Len < 0 || fr.Len > 1<<20 || fr.Total != fr.Len+HeaderLen || fr.Type != h[0] || !IsFrontendType(fr.Type) {
				t.Fatalf("Frame(%v) = %+v", h, fr)
			}
			if fr.Act == Skip && (!skipping || fr.Type == 'S' || fr.Type == 'X') {
				t.Fatalf("Frame(%v) skipped %+v", h, fr)
			}
		default:
			t.Fatalf("unknown act %d", fr.Act)
		}
	})
}
