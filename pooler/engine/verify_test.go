package engine

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

func TestParseFound(t *testing.T) {
	row := []string{"app_low", "alice", "2", "ch", "t1\x1ft2", "", "p", "7", ""}
	f, ok := ParseFound(row, []string{"search_path", "work_mem"}, []string{"app.tenant", "app.user"})
	want := Found{Settings: []string{"search_path", "work_mem", "app.tenant"}, Role: "app_low", SessionUser: "alice", Locks: 2,
		Listens: []string{"ch"}, Temps: []string{"t1", "t2"}, Prepared: []string{"p"}}
	if !ok || !reflect.DeepEqual(f, want) {
		t.Fatalf("ParseFound = %+v, %v; want %+v", f, ok, want)
	}
	if q := VerifyQuery([]string{"app.it's"}); !strings.HasSuffix(q, ", current_setting('app.it''s', true)") {
		t.Errorf("VerifyQuery = %s", q)
	}
	for _, bad := range [][]string{nil, row[:6], {"none", "u", "x", "", "", "", ""}} {
		if _, ok := ParseFound(bad, nil, nil); ok {
			t.Errorf("ParseFound(%q) accepted", bad)
		}
	}
}

func TestReconcile(t *testing.T) {
	tracked := func(n string) bool { return n == "application_name" }
	clean := Found{Role: "none", SessionUser: "app"}
	cases := []struct {
		name   string
		before []StateEffect // what the client's statements did
		found  Found         // what the server holds (SessionUser "app" unless set)
		want   string        // effects found, kind:name (effects.Kind.String)
		held   bool
		dirty  bool
	}{
		{name: "nothing", before: []StateEffect{{Kind: effects.CallRoutine}}, found: clean},
		{name: "setting", found: Found{Settings: []string{"search_path", "application_name"}},
			want: "set-param:search_path", dirty: true},
		{name: "setting already known", before: []StateEffect{{Kind: effects.SetParam, Name: "work_mem"}},
			found: Found{Settings: []string{"work_mem"}}, dirty: true},
		{name: "role", found: Found{Role: "app_low"}, want: "set-role:role", dirty: true},
		{name: "session authorization", found: Found{SessionUser: "other"}, want: "session-auth:session_authorization", dirty: true},
		{name: "lock", found: Found{Locks: 1}, want: "advisory-lock:", held: true, dirty: true},
		{name: "known lock only", before: []StateEffect{{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true}}, found: Found{Locks: 1}, held: true, dirty: true},
		{name: "known lock and another", before: []StateEffect{{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true}}, found: Found{Locks: 2},
			want: "advisory-lock:", held: true, dirty: true},
		// pg_locks lists a lock taken again once: a second row is another
		// lock.
		{name: "known lock taken twice and another", before: []StateEffect{{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true},
			{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true}}, found: Found{Locks: 2}, want: "advisory-lock:", held: true, dirty: true},
		{name: "known lock in two modes", before: []StateEffect{{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true},
			{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true, Shared: true}}, found: Found{Locks: 2}, held: true, dirty: true},
		{name: "listens changed inside", before: []StateEffect{{Kind: effects.Listen, Name: "a"}, {Kind: effects.Listen, Name: "b"}},
			found: Found{Listens: []string{"b", "c"}}, want: "listen:c", held: true, dirty: true},
		{name: "lock released inside", before: []StateEffect{{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true}}, found: clean},
		{name: "listen", found: Found{Listens: []string{"ch"}}, want: "listen:ch", held: true, dirty: true},
		{name: "temp table", found: Found{Temps: []string{"secrets"}}, want: "create-temp:secrets", held: true, dirty: true},
		{name: "temp table dropped inside", before: []StateEffect{{Kind: effects.CreateTemp, Name: "t"}}, found: clean},
		// The read lists temporary relations only: a temporary function
		// stays held, and its name is not a relation's.
		{name: "temp function kept", before: []StateEffect{{Kind: effects.CreateTemp, Name: "t", Object: "routine"}}, found: clean, held: true, dirty: true},
		{name: "temp function and table of one name", before: []StateEffect{{Kind: effects.CreateTemp, Name: "t", Object: "routine"},
			{Kind: effects.CreateTemp, Name: "t"}, {Kind: effects.DropTemp, Name: "t"}}, found: clean, held: true, dirty: true},
		{name: "temp function dropped", before: []StateEffect{{Kind: effects.CreateTemp, Name: "t", Object: "routine"},
			{Kind: effects.DropTemp, Name: "t", Object: "routine"}}, found: clean},
		{name: "cursor and prepared", found: Found{Cursors: []string{"c"}, Prepared: []string{"p"}},
			want: "declare-hold:c prepare:p", held: true, dirty: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var st Session
			st.Apply(append(tc.before, StateEffect{Kind: effects.CallRoutine, Name: "f"}), tracked)
			if !st.Unverified() || !st.Dirty() {
				t.Fatal("a routine call leaves the session verified")
			}
			f := tc.found
			if f.SessionUser == "" {
				f.SessionUser = "app"
			}
			if f.Role == "" {
				f.Role = "none"
			}
			found := st.Reconcile(f, "app", tracked)
			var got []string
			for _, e := range found {
				got = append(got, e.Kind.String()+":"+e.Name)
			}
			sort.Strings(got)
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("found %q, want %q", g, tc.want)
			}
			if st.Unverified() {
				t.Error("still unverified")
			}
			if st.Held() != tc.held || st.Dirty() != tc.dirty {
				t.Errorf("held %v dirty %v, want %v %v", st.Held(), st.Dirty(), tc.held, tc.dirty)
			}
			if tc.held && CleanupSQL(&st) == "" {
				t.Error("held state but no cleanup")
			}
		})
	}
}

// An unlock of a key the pooler did not see locked, while locks taken
// inside routines are held, makes the server's state worth reading again.
func TestUnlockAfterUnknownLock(t *testing.T) {
	var st Session
	tracked := func(string) bool { return false }
	st.Apply([]StateEffect{{Kind: effects.CallRoutine}}, tracked)
	st.Reconcile(Found{Role: "none", SessionUser: "u", Locks: 1}, "u", tracked)
	if !st.Held() || st.Unverified() {
		t.Fatal("lock found inside a routine does not pin")
	}
	st.Apply([]StateEffect{{Kind: effects.AdvisoryUnlock, Key: 5, KeyKnown: true}}, tracked)
	if !st.Unverified() || !st.Held() {
		t.Fatalf("unlock of an unseen key: unverified %v held %v, want both", st.Unverified(), st.Held())
	}
	st.Reconcile(Found{Role: "none", SessionUser: "u"}, "u", tracked)
	if st.Held() {
		t.Fatal("still held after the server said no lock is held")
	}
}

// fakeReacher resolves ReachPending texts from a table; known false for
// texts it does not list.
type fakeReacher map[string][]string

func (f fakeReacher) Reach(text string) ([]string, bool) {
	r, ok := f[text]
	return r, ok
}

// TestResolveReach: ReachPending calls become calls of the routines their
// text reaches, nothing when it reaches none, and stay when the reach is
// not known; the statement's own effects are never changed.
func TestResolveReach(t *testing.T) {
	c := &Client{}
	c.SetPolicy(PolicyPreserve, true, true)
	c.SetReacher(fakeReacher{"SELECT * FROM v": {"s.f"}, "SELECT 1": nil})
	stored := []StateEffect{{Kind: effects.CallRoutine, Name: ReachPending + "SELECT * FROM v"}}
	if got := c.resolveReach(stored); len(got) != 1 || got[0].Name != "s.f" {
		t.Errorf("resolved %v, want a call of s.f", got)
	}
	if stored[0].Name != ReachPending+"SELECT * FROM v" {
		t.Error("the stored effects were changed")
	}
	if got := c.resolveReach([]StateEffect{{Kind: effects.CallRoutine, Name: ReachPending + "SELECT 1"}}); len(got) != 0 {
		t.Errorf("a text that reaches nothing resolved to %v", got)
	}
	unknown := []StateEffect{{Kind: effects.SetParam, Name: "work_mem"}, {Kind: effects.CallRoutine, Name: ReachPending + "SELECT * FROM w"}}
	if got := c.resolveReach(unknown); len(got) != 2 || got[1].Name != unknown[1].Name {
		t.Errorf("an unknown reach resolved to %v, want it kept", got)
	}
	c.applyEffects([]StateEffect{{Kind: effects.CallRoutine, Name: ReachPending + "SELECT 1"}})
	if c.Session.Unverified() {
		t.Error("a statement that reaches nothing left the session unverified")
	}
	c.applyEffects(stored)
	if calls := c.Session.TakeCalls(); !c.Session.Unverified() || len(calls) != 1 || calls[0] != "s.f" {
		t.Errorf("after a statement that reaches s.f: unverified %v, calls %v", c.Session.Unverified(), calls)
	}
}
