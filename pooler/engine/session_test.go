package engine

import (
	"strings"
	"testing"
)

// TestSessionApply follows a client's session state through statements:
// what pins it (Held), what needs cleaning (Dirty) and the clean-up SQL.
func TestSessionApply(t *testing.T) {
	lock := func(k StateKind, key int64) StateEffect { return StateEffect{Kind: k, Key: key, KeyKnown: true} }
	tests := []struct {
		name    string
		effs    [][]StateEffect
		held    bool
		dirty   bool
		cleanup string
	}{
		{name: "nothing", held: false, dirty: false, cleanup: ""},
		{name: "a setting", effs: [][]StateEffect{{{Kind: StateSet, Name: "Work_Mem"}}}, dirty: true, cleanup: "RESET work_mem"},
		{name: "a tracked setting follows the client anyway", effs: [][]StateEffect{{{Kind: StateSet, Name: "application_name"}}}},
		{name: "dynamic set_config", effs: [][]StateEffect{{{Kind: StateSet}}}, held: true, dirty: true, cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ALL"},
		{name: "role", effs: [][]StateEffect{{{Kind: StateRole}}}, dirty: true, cleanup: "RESET ROLE"},
		{name: "session authorization", effs: [][]StateEffect{{{Kind: StateRole, SessionAuthority: true}}}, dirty: true, cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE"},
		{name: "lock taken twice, released once", effs: [][]StateEffect{{lock(StateLock, 7)}, {lock(StateLock, 7)}, {lock(StateUnlock, 7)}}, held: true, dirty: true, cleanup: "SELECT pg_advisory_unlock_all()"},
		{name: "lock taken and released", effs: [][]StateEffect{{lock(StateLock, 7)}, {lock(StateUnlock, 7)}}},
		{name: "unknown lock", effs: [][]StateEffect{{{Kind: StateLock}}}, held: true, dirty: true, cleanup: "SELECT pg_advisory_unlock_all()"},
		{name: "unlock all", effs: [][]StateEffect{{lock(StateLock, 1), {Kind: StateLock}}, {{Kind: StateUnlockAll}}}},
		{name: "listen", effs: [][]StateEffect{{{Kind: StateListen, Name: "ch"}}}, held: true, dirty: true, cleanup: "UNLISTEN *"},
		{name: "listen then unlisten *", effs: [][]StateEffect{{{Kind: StateListen, Name: "ch"}}, {{Kind: StateUnlistenAll}}}},
		{name: "temp table dropped", effs: [][]StateEffect{{{Kind: StateCreateTemp, Name: "t"}}, {{Kind: StateDropTemp, Name: "t"}}}},
		{name: "temp table kept", effs: [][]StateEffect{{{Kind: StateCreateTemp, Name: "t"}}}, held: true, dirty: true, cleanup: "DISCARD TEMP"},
		{name: "cursor with hold", effs: [][]StateEffect{{{Kind: StateDeclareHold, Name: "c"}}}, held: true, dirty: true, cleanup: "CLOSE ALL"},
		{name: "SQL prepare", effs: [][]StateEffect{{{Kind: StatePrepare, Name: "Q1"}}}, held: true, dirty: true, cleanup: `DEALLOCATE "Q1"`},
		{name: "load", effs: [][]StateEffect{{{Kind: StateLoad}}}, held: true, dirty: true},
		{name: "discard all", effs: [][]StateEffect{{{Kind: StateListen, Name: "ch"}, {Kind: StateCreateTemp, Name: "t"}}, {{Kind: StateDiscardAll}}}, dirty: true,
			cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE; RESET ALL"},
		{name: "dotted custom setting", effs: [][]StateEffect{{{Kind: StateSet, Name: "app.Tenant"}}}, dirty: true, cleanup: "RESET app.tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st Session
			for _, e := range tt.effs {
				st.Apply(e, func(n string) bool { return strings.EqualFold(n, "application_name") })
			}
			if st.Held() != tt.held || st.Dirty() != tt.dirty {
				t.Fatalf("held %v dirty %v, want %v %v", st.Held(), st.Dirty(), tt.held, tt.dirty)
			}
			if tt.cleanup != "" || tt.name != "load" {
				if got := CleanupSQL(&st); got != tt.cleanup {
					t.Fatalf("CleanupSQL = %q, want %q", got, tt.cleanup)
				}
			}
			after := st.Cleaned(st.Settings)
			if after.Dirty() || after.Held() {
				t.Fatalf("dirty after cleaning: %+v", after)
			}
		})
	}
}

func TestSQLBuilders(t *testing.T) {
	if got := RestoreSQL([]Setting{{"search_path", "a, b"}, {"role", "app"}, {"session_authorization", "u"}}); got !=
		`SELECT set_config('session_authorization', 'u', false), set_config('role', 'app', false), set_config('search_path', 'a, b', false)` {
		t.Fatalf("RestoreSQL = %s", got)
	}
	if got := ReadbackSQL([]string{"work_mem", "it's"}); got != `SELECT current_setting('work_mem'), current_setting('it''s')` {
		t.Fatalf("ReadbackSQL = %s", got)
	}
	for in, want := range map[string]string{`a\b`: `E'a\\b'`, "o'k": `'o''k'`, "": "''"} {
		if got := QuoteLiteral(in); got != want {
			t.Errorf("QuoteLiteral(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"work_mem": "work_mem", "Mixed": `"Mixed"`, "app.x": "app.x", `a"b`: `"a""b"`, "1a": `"1a"`} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}
