package engine

import (
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

func TestSchemaChangeTag(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		want bool
	}{
		{"ALTER TABLE", true}, {"DROP TABLE", true}, {"DROP VIEW", true}, {"CREATE VIEW", true},
		{"ALTER TYPE", true}, {"CREATE TABLE", false}, {"SELECT 1", false}, {"INSERT 0 1", false},
		{"DISCARD TEMP", false}, {"ALTER", false}, {"", false},
	} {
		if got := schemaChangeTag([]byte(tc.tag)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.tag, got, tc.want)
		}
	}
}

func TestIsStalePlan(t *testing.T) {
	err := func(fields ...string) []byte {
		var b []byte
		for _, f := range fields {
			b = append(append(b, f...), 0)
		}
		return append(b, 0)
	}
	for _, tc := range []struct {
		body []byte
		want bool
	}{
		{err("SERROR", "C0A000", "Mcached plan must not change result type"), true},
		{err("SERROR", "Mcached plan must not change result type", "C0A000"), true},
		{err("SERROR", "C0A000", "Mcannot do that"), false},
		{err("SERROR", "C42P01", "Mcached plan must not change result type"), false},
		{[]byte("C0A000"), false}, // no terminator
		{nil, false},
	} {
		if got := isStalePlan(tc.body); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestStmtContext checks which clients' statements may share a server
// statement: only those that resolve names the same way.
func TestStmtContext(t *testing.T) {
	tracked := func(string) bool { return false }
	plain := &Client{Limits: &Limits{}}
	if got := plain.stmtContext(); got != "" {
		t.Fatalf("plain client: %q, want the shared context", got)
	}
	pathA := &Client{Limits: &Limits{}, Startup: []Setting{{"search_path", "a"}}}
	pathA2 := &Client{Limits: &Limits{}, Session: Session{Settings: []Setting{{"search_path", "a"}}}}
	pathB := &Client{Limits: &Limits{}, Startup: []Setting{{"search_path", "a"}}, Session: Session{Settings: []Setting{{"search_path", "b"}}}}
	if pathA.stmtContext() != pathA2.stmtContext() || pathA.stmtContext() == "" {
		t.Fatalf("the same search_path from startup and from a SET read back: %q vs %q", pathA.stmtContext(), pathA2.stmtContext())
	}
	if pathA.stmtContext() == pathB.stmtContext() {
		t.Fatal("a SET read back must override the startup search_path")
	}
	role := &Client{Limits: &Limits{}, Session: Session{Settings: []Setting{{"role", "r"}}}}
	if role.stmtContext() == "" || role.stmtContext() == pathA.stmtContext() {
		t.Fatalf("role context %q", role.stmtContext())
	}

	// A SET not read back yet, or temporary objects: private, and new
	// after each change.
	c1 := &Client{Limits: &Limits{}}
	c2 := &Client{Limits: &Limits{}}
	for _, effs := range [][]StateEffect{
		{{Kind: effects.SetParam, Name: "search_path"}},
		{{Kind: effects.SetRole}},
		{{Kind: effects.ResetRole}},
		{{Kind: effects.SessionAuth}},
		{{Kind: effects.ResetSessionAuth}},
		{{Kind: effects.CreateTemp, Name: "t"}},
	} {
		c1.Session, c2.Session = Session{}, Session{}
		c1.Session.Apply(effs, tracked)
		c2.Session.Apply(effs, tracked)
		p1, p2 := c1.stmtContext(), c2.stmtContext()
		if p1 == "" || p1 == p2 {
			t.Fatalf("%v: contexts %q and %q must be private", effs[0].Kind, p1, p2)
		}
		c1.Session.Apply(effs, tracked)
		if c1.stmtContext() == p1 {
			t.Fatalf("%v twice: the context must change", effs[0].Kind)
		}
	}
	// Setting another parameter changes nothing.
	c3 := &Client{Limits: &Limits{}}
	c3.Session.Apply([]StateEffect{{Kind: effects.SetParam, Name: "work_mem"}}, tracked)
	if got := c3.stmtContext(); got != "" {
		t.Fatalf("SET work_mem: %q", got)
	}
	// Dropping the temporary table makes the context new again, and the
	// DROP's tag is no schema change for the other clients.
	c4 := &Client{Limits: &Limits{}}
	c4.Session.Apply([]StateEffect{{Kind: effects.CreateTemp, Name: "t"}}, tracked)
	before := c4.stmtContext()
	c4.Session.Apply([]StateEffect{{Kind: effects.DropTemp, Name: "t"}}, tracked)
	if c4.Session.tempDrops != 1 || c4.stmtContext() != "" {
		t.Fatalf("after DROP of the temporary table: drops %d, context %q (was %q)", c4.Session.tempDrops, c4.stmtContext(), before)
	}
	c4.Session.Apply([]StateEffect{{Kind: effects.DropTemp, Name: "plain"}}, tracked)
	if c4.Session.tempDrops != 1 {
		t.Fatal("DROP of a table the client did not create as temporary counted as a temporary drop")
	}
}
