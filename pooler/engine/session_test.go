package engine

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// TestSessionApply follows a client's session state through statements:
// what pins it (Held), what needs cleaning (Dirty) and the clean-up SQL.
func TestSessionApply(t *testing.T) {
	lock := func(k effects.Kind, key int64) StateEffect { return StateEffect{Kind: k, Key: key, KeyKnown: true} }
	tests := []struct {
		name    string
		effs    [][]StateEffect
		held    bool
		dirty   bool
		cleanup string
	}{
		{name: "nothing", held: false, dirty: false, cleanup: ""},
		{name: "a setting", effs: [][]StateEffect{{{Kind: effects.SetParam, Name: "Work_Mem"}}}, dirty: true, cleanup: "RESET work_mem"},
		{name: "a tracked setting follows the client anyway", effs: [][]StateEffect{{{Kind: effects.SetParam, Name: "application_name"}}}},
		{name: "dynamic set_config", effs: [][]StateEffect{{{Kind: effects.SetParam}}}, held: true, dirty: true, cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ALL"},
		{name: "role", effs: [][]StateEffect{{{Kind: effects.SetRole}}}, dirty: true, cleanup: "RESET ROLE"},
		{name: "role reset", effs: [][]StateEffect{{{Kind: effects.ResetRole}}}, dirty: true, cleanup: "RESET ROLE"},
		{name: "session authorization", effs: [][]StateEffect{{{Kind: effects.SessionAuth}}}, dirty: true, cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE"},
		{name: "session authorization reset", effs: [][]StateEffect{{{Kind: effects.ResetSessionAuth}}}, dirty: true, cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE"},
		{name: "lock taken twice, released once", effs: [][]StateEffect{{lock(effects.AdvisoryLock, 7)}, {lock(effects.AdvisoryLock, 7)}, {lock(effects.AdvisoryUnlock, 7)}}, held: true, dirty: true, cleanup: "SELECT pg_advisory_unlock_all()"},
		{name: "lock taken and released", effs: [][]StateEffect{{lock(effects.AdvisoryLock, 7)}, {lock(effects.AdvisoryUnlock, 7)}}},
		{name: "unknown lock", effs: [][]StateEffect{{{Kind: effects.AdvisoryLock}}}, held: true, dirty: true, cleanup: "SELECT pg_advisory_unlock_all()"},
		{name: "unlock all", effs: [][]StateEffect{{lock(effects.AdvisoryLock, 1), {Kind: effects.AdvisoryLock}}, {{Kind: effects.AdvisoryUnlockAll}}}},
		{name: "listen", effs: [][]StateEffect{{{Kind: effects.Listen, Name: "ch"}}}, held: true, dirty: true, cleanup: "UNLISTEN *"},
		// An UNLISTEN or a DROP may be rolled back with its transaction:
		// the server is read (unverified, so dirty) before anyone else
		// gets it.
		{name: "listen then unlisten *", effs: [][]StateEffect{{{Kind: effects.Listen, Name: "ch"}}, {{Kind: effects.UnlistenAll}}}, dirty: true},
		{name: "temp table dropped", effs: [][]StateEffect{{{Kind: effects.CreateTemp, Name: "t"}}, {{Kind: effects.DropTemp, Name: "t"}}}, dirty: true},
		{name: "temp table kept", effs: [][]StateEffect{{{Kind: effects.CreateTemp, Name: "t"}}}, held: true, dirty: true, cleanup: "DISCARD TEMP"},
		{name: "cursor with hold", effs: [][]StateEffect{{{Kind: effects.DeclareHold, Name: "c"}}}, held: true, dirty: true, cleanup: "CLOSE ALL"},
		{name: "SQL prepare", effs: [][]StateEffect{{{Kind: effects.Prepare, Name: "Q1"}}}, held: true, dirty: true, cleanup: `DEALLOCATE "Q1"`},
		{name: "load", effs: [][]StateEffect{{{Kind: effects.Load}}}, held: true, dirty: true},
		{name: "discard all", effs: [][]StateEffect{{{Kind: effects.Listen, Name: "ch"}, {Kind: effects.CreateTemp, Name: "t"}}, {{Kind: effects.DiscardAll}}}, dirty: true,
			cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE; RESET ALL"},
		{name: "unknown unlock keeps a known lock", effs: [][]StateEffect{{lock(effects.AdvisoryLock, 7)}, {{Kind: effects.AdvisoryUnlock}}}, held: true, dirty: true, cleanup: "SELECT pg_advisory_unlock_all()"},
		// Which lock it released (if any), only the server knows: it is
		// read (unverified, so dirty) before anyone else gets it.
		{name: "unknown unlock of an unknown lock", effs: [][]StateEffect{{{Kind: effects.AdvisoryLock}}, {{Kind: effects.AdvisoryUnlock}}}, dirty: true},
		{name: "two-int4 key apart", effs: [][]StateEffect{{{Kind: effects.AdvisoryLock, Key: 1, KeyKnown: true, Pair: true}}, {lock(effects.AdvisoryUnlock, 1)}}, held: true, dirty: true, cleanup: "SELECT pg_advisory_unlock_all()"},
		{name: "listen then unlisten", effs: [][]StateEffect{{{Kind: effects.Listen, Name: "a"}, {Kind: effects.Listen, Name: "b"}}, {{Kind: effects.Unlisten, Name: "a"}}}, held: true, dirty: true, cleanup: "UNLISTEN *"},
		{name: "temp function and table", effs: [][]StateEffect{{{Kind: effects.CreateTemp, Name: "t", Object: "routine"}, {Kind: effects.CreateTemp, Name: "t"}}, {{Kind: effects.DropTemp, Name: "t"}}}, held: true, dirty: true, cleanup: "DISCARD TEMP"},
		{name: "discard temp", effs: [][]StateEffect{{{Kind: effects.CreateTemp, Name: "t", Object: "routine"}, {Kind: effects.CreateTemp, Name: "u"}}, {{Kind: effects.DiscardTemp}}}},
		{name: "cursor closed", effs: [][]StateEffect{{{Kind: effects.DeclareHold, Name: "c"}, {Kind: effects.DeclareHold, Name: "d"}}, {{Kind: effects.CloseCursor, Name: "c"}}, {{Kind: effects.CloseAll}}}},
		{name: "prepared in the order made", effs: [][]StateEffect{{{Kind: effects.Prepare, Name: "q"}, {Kind: effects.Prepare, Name: "p"}, {Kind: effects.Prepare, Name: "r"}}, {{Kind: effects.Deallocate, Name: "r"}}},
			held: true, dirty: true, cleanup: "DEALLOCATE q; DEALLOCATE p"},
		{name: "deallocate all", effs: [][]StateEffect{{{Kind: effects.Prepare, Name: "q"}}, {{Kind: effects.DeallocateAll}}}},
		{name: "discard all keeps a load", effs: [][]StateEffect{{{Kind: effects.Load}, lock(effects.AdvisoryLock, 1), {Kind: effects.DeclareHold, Name: "c"}, {Kind: effects.Prepare, Name: "p"}}, {{Kind: effects.DiscardAll}}},
			held: true, dirty: true, cleanup: "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE; RESET ALL"},
		{name: "dotted custom setting", effs: [][]StateEffect{{{Kind: effects.SetParam, Name: "app.Tenant"}}}, dirty: true, cleanup: "RESET app.tenant"},
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

// TestKinds says, for every kind of rules/effects, whether an effect of
// it makes state (Makes), pins the client under preserve rather than
// being replayed (Pins), and is followed by the pooler at all (Follows).
// Pins must be what Session does: state of a kind that pins holds the
// client (Held), state of one that is replayed only needs cleaning.
func TestKinds(t *testing.T) {
	type want struct{ makes, pins, follows bool }
	undoes := want{follows: true}
	replayed := want{makes: true, follows: true}
	pinned := want{makes: true, pins: true, follows: true}
	kinds := map[effects.Kind]want{
		effects.SetParam: replayed, effects.ResetParam: undoes, effects.ResetAll: undoes,
		effects.SetRole: replayed, effects.ResetRole: replayed, effects.SessionAuth: replayed, effects.ResetSessionAuth: replayed,
		effects.AdvisoryLock: pinned, effects.AdvisoryUnlock: undoes, effects.AdvisoryUnlockAll: undoes,
		effects.Listen: pinned, effects.Unlisten: undoes, effects.UnlistenAll: undoes,
		effects.CreateTemp: pinned, effects.DropTemp: undoes, effects.DiscardTemp: undoes,
		effects.DeclareHold: pinned, effects.CloseCursor: undoes, effects.CloseAll: undoes,
		effects.Prepare: pinned, effects.Deallocate: undoes, effects.DeallocateAll: undoes,
		effects.Load: pinned, effects.DiscardAll: undoes,
		effects.DiscardPlans: {}, effects.DiscardSequences: {},
		effects.CallRoutine: undoes, effects.RoutineChange: undoes,
		effects.ReadParam: {}, effects.UseCursor: {}, effects.ExecutePrepared: {},
		effects.NextVal: {}, effects.CurrVal: {}, effects.LastVal: {}, effects.Relation: {}, effects.Insert: {},
		effects.TxEnd: {}, effects.TxRollback: {}, effects.TxRollbackTo: {}, effects.SetVal: {}, effects.BackendIdentity: {},
	}
	for k := effects.Kind(1); !strings.HasPrefix(k.String(), "kind("); k++ {
		w, ok := kinds[k]
		if !ok {
			t.Errorf("%v: not in the table", k)
			continue
		}
		if got := (want{Makes(k), Pins(k), Follows(k)}); got != w {
			t.Errorf("%v: makes, pins, follows %v, want %v", k, got, w)
		}
		if !w.makes {
			continue
		}
		var st Session
		st.Apply([]StateEffect{{Kind: k, Name: "x", Key: 1, KeyKnown: true}}, func(string) bool { return false })
		if st.Held() != w.pins || !st.Dirty() {
			t.Errorf("%v: held %v dirty %v, want held %v and dirty", k, st.Held(), st.Dirty(), w.pins)
		}
	}
}

// TestSessionIdleAllocs: a client whose statements make no held state
// costs no held state.
func TestSessionIdleAllocs(t *testing.T) {
	var st Session
	effs := []StateEffect{{Kind: effects.SetParam, Name: "application_name"}, {Kind: effects.Load}}
	tracked := func(n string) bool { return n == "application_name" }
	if n := testing.AllocsPerRun(10, func() { st.Apply(effs, tracked) }); n != 0 || st.holds() {
		t.Errorf("%v allocations, held state made %v", n, st.holds())
	}
}
