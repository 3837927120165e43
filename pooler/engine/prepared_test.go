package engine

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestDeallocateTarget(t *testing.T) {
	for _, tc := range []struct {
		q, name string
		ok      bool
	}{
		{"DEALLOCATE _pg3_1", "_pg3_1", true},
		{"  deallocate\tPREPARE S_12 ;  ", "s_12", true},
		{`DEALLOCATE "Mixed ""q"" Name"`, `Mixed "q" Name`, true},
		{`DEALLOCATE"x"`, "x", true},
		{"DEALLOCATE stmt$1", "stmt$1", true},
		{"DEALLOCATE ALL", "", false},
		{"DEALLOCATE PREPARE ALL", "", false},
		{`DEALLOCATE "all"`, "all", true},
		{"DEALLOCATE a; DEALLOCATE b", "", false},
		{"DEALLOCATE", "", false},
		{"DEALLOCATEx y", "", false},
		{"DEALLOCATE 1x", "", false},
		{`DEALLOCATE "unterminated`, "", false},
		{"SELECT 1", "", false},
		{"", "", false},
	} {
		name, ok := deallocateTarget([]byte(tc.q))
		if name != tc.name || ok != tc.ok {
			t.Errorf("deallocateTarget(%q) = %q, %v; want %q, %v", tc.q, name, ok, tc.name, tc.ok)
		}
	}
}

// FuzzFrontend feeds client messages of the kinds the prepared-statement
// tracking decodes (Parse, Bind, Describe, Close, Execute, Sync, Query)
// with arbitrary bodies to Client.frontend, as one client on one server,
// and answers each with a server message picked by the fuzzer through
// Client.backend: whatever the bytes, it must not panic, the server's
// cache must stay within its bound, every planned rename must fit its
// message, and the pooler's own answers must be whole messages.
func FuzzFrontend(f *testing.F) {
	f.Add([]byte("P"), []byte("s1\x00SELECT $1\x00\x00\x01\x00\x00\x00\x17"), []byte("1"))
	f.Add([]byte("B"), []byte("\x00s1\x00\x00\x00\x00\x01\x00\x00\x00\x015\x00\x00"), []byte("2"))
	f.Add([]byte("D"), []byte("Ss1\x00"), []byte("tT"))
	f.Add([]byte("C"), []byte("Ss1\x00"), []byte("3"))
	f.Add([]byte("PBDCESQ"), []byte("\x00"), []byte("12TnCZ"))
	f.Add([]byte("PP"), []byte("s1\x00SELECT 1\x00\x00\x00"), []byte("EZ"))
	f.Fuzz(func(t *testing.T, types, body, answers []byte) {
		c := &Client{Limits: &Limits{MaxMessage: 1 << 20, MaxPrepared: 2}}
		s := &Server{}
		if len(types) > 16 {
			types = types[:16]
		}
		for i, typ := range types {
			// Vary the body a little per message so names differ.
			b := body
			if i%2 == 1 && len(b) > 0 {
				b = b[1:]
			}
			var ctr Counters
			pl := c.frontend(s, typ, b, len(b), &ctr)
			if s.Statements() > 2+1 {
				t.Fatalf("cache holds %d statements, bound 2", s.Statements())
			}
			if pl.Action == PlanRename && pl.Skip > len(b) {
				t.Fatalf("rename skips %d bytes of a %d-byte body", pl.Skip, len(b))
			}
			for m := s.PopSynth(); m != nil; m = s.PopSynth() {
				if _, n, err := ParseHeader(m, 1<<20); err != nil || len(m) != HeaderLen+n {
					t.Fatalf("the pooler's answer %q is not one whole message", m)
				}
			}
			if i < len(answers) && MayComplete(answers[i]) {
				var tag []byte
				if answers[i] == 'C' {
					tag = []byte("DEALLOCATE ALL\x00")
				}
				c.backend(s, answers[i], tag)
			}
			if s.Pending() < 0 || c.st.PendingSyncs < 0 {
				t.Fatal("negative count")
			}
		}
	})
}

// TestErrorResponse checks the engine's ErrorResponse encoding with
// pgproto3's decoder.
func TestErrorResponse(t *testing.T) {
	b := ErrorResponse("ERROR", "42P05", `prepared statement "s1" already exists`, "")
	var e pgproto3.ErrorResponse
	if b[0] != 'E' {
		t.Fatalf("type %q", b[0])
	}
	if _, n, err := ParseHeader(b, 1<<10); err != nil || n != len(b)-HeaderLen {
		t.Fatalf("header: %d, %v", n, err)
	}
	if err := e.Decode(b[HeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if e.Severity != "ERROR" || e.SeverityUnlocalized != "ERROR" || e.Code != "42P05" || e.Message != `prepared statement "s1" already exists` {
		t.Fatalf("%+v", e)
	}
}

func TestReadsPortal(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"FETCH 3 FROM c", true},
		{"  fetch next in \"C\"", true},
		{"Fetch", true},
		{"FETCH;", true},
		{"-- the next rows\n/* of /* nested */ c */ FETCH ALL c", true},
		{"fetcher", false},
		{"fetch_x", false},
		{"SELECT 1 -- FETCH", false},
		{"MOVE 3 IN c", false},
		{"/* unclosed FETCH", false},
		{"", false},
	} {
		rest := append(append([]byte(tc.q), 0), 0, 0)
		if got := readsPortal(rest); got != tc.want {
			t.Errorf("readsPortal(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// A FETCH statement is parsed on the server every time a client parses
// it, under a name of its own: a statement parsed while the cursor was
// open and described after it was closed crashes PostgreSQL's backend.
// Other statements are shared.
func TestFetchNeverShared(t *testing.T) {
	lim := Limits{MaxPrepared: 100}
	a, b := Client{Limits: &lim}, Client{Limits: &lim}
	var srv Server
	var ctr Counters
	parse := func(c *Client, name, q string) Plan {
		body := append(append(append([]byte(name), 0), q...), 0, 0, 0)
		return c.frontend(&srv, 'P', body, len(body), &ctr)
	}
	names := map[string]bool{}
	for i, p := range []Plan{parse(&a, "s1", "FETCH 3 FROM c"), parse(&a, "s2", "FETCH 3 FROM c"), parse(&b, "s1", "FETCH 3 FROM c")} {
		if p.Action != PlanRename || p.NewName == "" {
			t.Fatalf("FETCH parse %d: action %d, name %q; want sent under a name of its own", i, p.Action, p.NewName)
		}
		if names[p.NewName] {
			t.Errorf("FETCH parse %d reuses server statement %s", i, p.NewName)
		}
		names[p.NewName] = true
	}
	if p := parse(&a, "s3", "SELECT 1"); p.Action != PlanRename {
		t.Fatalf("first SELECT parse: action %d", p.Action)
	}
	if p := parse(&b, "s3", "SELECT 1"); p.Action != PlanDrop {
		t.Errorf("second client's SELECT parse: action %d, want PlanDrop (the server's statement is shared)", p.Action)
	}
}

// TestPendQueueReusesStorage: a queue that never empties (a pipeline
// answered as it goes) keeps storage for its live entries, not for every
// entry it had.
func TestPendQueueReusesStorage(t *testing.T) {
	var q pendQueue
	for i := range 1_000_000 {
		q.push(pend{kind: pkSync, seq: uint64(i)})
		if q.len() > 100 {
			if e := q.pop(); e.seq != uint64(i-100) {
				t.Fatalf("popped %d, want %d", e.seq, i-100)
			}
		}
	}
	if q.len() != 100 || cap(q.buf) > 512 {
		t.Fatalf("%d live entries in storage for %d", q.len(), cap(q.buf))
	}
}
