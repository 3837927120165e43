package effects

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// renderHeld describes state for the table tests: kind name, with the
// key of a lock and the flags.
func renderHeld(hs []*Held) string {
	var parts []string
	for _, h := range hs {
		s := h.Kind.String()
		if h.Name != "" {
			s += " " + h.Name
		}
		if h.Kind == AdvisoryLock {
			s += "(" + h.Effect.Arg + ")"
			if h.Effect.Shared {
				s += " shared"
			}
		}
		if h.Local {
			s += " local"
		}
		if h.Protocol {
			s += " protocol"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// runScript runs the statements of sql through a session (transaction
// statements through Control) and returns the session and what the last
// statement did (the steps of its effects together).
func runScript(t *testing.T, sql string) (*Session, Step) {
	t.Helper()
	var s Session
	return &s, runOn(t, &s, sql)
}

// runOn runs the statements of sql through s, as runScript does.
func runOn(t *testing.T, s *Session, sql string) Step {
	t.Helper()
	res, err := sqlparse.Parse(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	var last Step
	for _, raw := range res.Stmts {
		start := int(raw.StmtLocation)
		end := len(sql)
		if raw.StmtLen > 0 {
			end = start + int(raw.StmtLen)
		}
		if st, ok := s.Control(raw.Stmt); ok {
			last = st
			continue
		}
		st := NewStmt(&sqlparse.Statement{Start: start, End: end, Text: sql, Node: raw.Stmt})
		last = Step{}
		for _, e := range st.Changes() {
			step := s.Apply(e)
			if step.Held != nil {
				last.Held, last.New = step.Held, step.New
			}
			last.Ended = append(last.Ended, step.Ended...)
			last.Guess = last.Guess || step.Guess
		}
	}
	return last
}

// renderStep describes a step: what it made (new or renewed), ended and
// restored, and whether it guessed.
func renderStep(st Step) string {
	var parts []string
	if st.Held != nil {
		verb := "renewed "
		if st.New {
			verb = "made "
		}
		parts = append(parts, verb+renderHeld([]*Held{st.Held}))
	}
	if len(st.Ended) > 0 {
		parts = append(parts, "ended "+renderHeld(st.Ended))
	}
	if len(st.Restored) > 0 {
		parts = append(parts, "restored "+renderHeld(st.Restored))
	}
	if st.Guess {
		parts = append(parts, "guess")
	}
	return strings.Join(parts, ", ")
}

// TestSessionPairing covers each pairing rule: the state a script leaves
// on the session, and what its last statement did.
func TestSessionPairing(t *testing.T) {
	runPairing(t, false, []pairingCase{
		// Parameters: SET replaces, RESET and RESET ALL end.
		{"set", "SET work_mem = '1MB'", "set-param work_mem", "made set-param work_mem"},
		{"set again replaces", "SET work_mem = '1MB'; SET work_mem = '2MB'", "set-param work_mem", "made set-param work_mem, ended set-param work_mem"},
		{"reset", "SET work_mem = '1MB'; SET search_path = app; RESET work_mem", "set-param search_path", "ended set-param work_mem"},
		{"set to default", "SET work_mem = '1MB'; SET work_mem TO DEFAULT", "", "ended set-param work_mem"},
		{"reset all", "SET work_mem = '1MB'; SET search_path = app; SET ROLE admin; RESET ALL", "set-role role", "ended set-param work_mem; set-param search_path"},
		{"set_config session", "SELECT set_config('app.tenant', '7', false)", "set-param app.tenant", "made set-param app.tenant"},
		{"unknown name is one slot", "SELECT set_config($1, 'a', false); SELECT set_config($2, 'b', false)", "set-param", "made set-param, ended set-param"},
		{"reset of another name", "SET work_mem = '1MB'; RESET search_path", "set-param work_mem", ""},
		// SET LOCAL lasts the transaction.
		{"set local outside a transaction", "SET LOCAL work_mem = '1MB'", "", ""},
		{"set local ends at commit", "BEGIN; SET LOCAL work_mem = '1MB'; COMMIT", "", "ended set-param work_mem local"},
		{"set local keeps the session value", "SET work_mem = '1MB'; BEGIN; SET LOCAL work_mem = '2MB'; COMMIT", "set-param work_mem", "ended set-param work_mem local"},
		{"local reset keeps the session value", "SET work_mem = '1MB'; BEGIN; SET LOCAL work_mem TO DEFAULT", "set-param work_mem", ""},
		{"session set overrides set local", "BEGIN; SET LOCAL work_mem = '2MB'; SET work_mem = '1MB'", "set-param work_mem", "made set-param work_mem, ended set-param work_mem local"},
		{"set_config local", "BEGIN; SELECT set_config('app.tenant', '7', true); COMMIT", "", "ended set-param app.tenant local"},
		// Roles.
		{"set role again", "SET ROLE a; SET ROLE b", "set-role role", "made set-role role, ended set-role role"},
		{"reset role", "SET ROLE a; RESET ROLE", "", "ended set-role role"},
		{"set role none", "SET ROLE a; SET ROLE NONE", "", "ended set-role role"},
		{"reset role keeps the authorization", "SET SESSION AUTHORIZATION a; SET ROLE b; RESET ROLE", "session-auth session_authorization", "ended set-role role"},
		{"authorization resets the role", "SET ROLE b; SET SESSION AUTHORIZATION a", "session-auth session_authorization", "made session-auth session_authorization, ended set-role role"},
		{"reset authorization", "SET SESSION AUTHORIZATION a; SET ROLE b; RESET SESSION AUTHORIZATION", "", "ended session-auth session_authorization; set-role role"},
		// Advisory locks stack; unlocks pair by key and mode.
		{"locks stack", "SELECT pg_advisory_lock(1); SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)", "advisory-lock(i1)", "ended advisory-lock(i1)"},
		{"unlock of another key", "SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(2)", "advisory-lock(i1)", ""},
		{"unlock of another mode", "SELECT pg_advisory_lock_shared(1); SELECT pg_advisory_unlock(1)", "advisory-lock(i1) shared", ""},
		{"shared unlock", "SELECT pg_advisory_lock_shared(1); SELECT pg_advisory_unlock_shared(1)", "", "ended advisory-lock(i1) shared"},
		{"two-int4 key apart", "SELECT pg_advisory_lock(0, 1); SELECT pg_advisory_unlock(1)", "advisory-lock(i0,i1)", ""},
		{"unlock all", "SELECT pg_advisory_lock(1), pg_advisory_lock($1); SELECT pg_advisory_unlock_all()", "", "ended advisory-lock(i1); advisory-lock($1)"},
		{"unknown key same argument", "SELECT pg_advisory_lock($1); SELECT pg_advisory_lock(5); SELECT pg_advisory_unlock($1)", "advisory-lock(i5)", "ended advisory-lock($1), guess"},
		{"unknown unlock takes an unknown lock", "SELECT pg_advisory_lock($1); SELECT pg_advisory_lock(5); SELECT pg_advisory_unlock($2)", "advisory-lock(i5)", "ended advisory-lock($1), guess"},
		{"unknown unlock of a known lock", "SELECT pg_advisory_lock(4); SELECT pg_advisory_lock(5); SELECT pg_advisory_unlock($2)", "advisory-lock(i4)", "ended advisory-lock(i5), guess"},
		{"known unlock of an unknown lock", "SELECT pg_advisory_lock($1); SELECT pg_advisory_unlock(5)", "", "ended advisory-lock($1), guess"},
		{"unlock of nothing", "SELECT pg_advisory_unlock($1)", "", ""},
		{"locks survive rollback", "BEGIN; SELECT pg_advisory_lock(1); ROLLBACK", "advisory-lock(i1)", ""},
		{"unlocks survive rollback", "SELECT pg_advisory_lock(1); BEGIN; SELECT pg_advisory_unlock(1); ROLLBACK", "", ""},
		// LISTEN.
		{"listen twice is one", "LISTEN a; LISTEN a", "listen a", "renewed listen a"},
		{"unlisten", "LISTEN a; LISTEN b; UNLISTEN a", "listen b", "ended listen a"},
		{"unlisten all", "LISTEN a; LISTEN b; UNLISTEN *", "", "ended listen a; listen b"},
		{"listen rolled back", "BEGIN; LISTEN a; ROLLBACK", "", "ended listen a"},
		{"unlisten rolled back", "LISTEN a; BEGIN; UNLISTEN *; ROLLBACK", "listen a", "restored listen a"},
		// Temporary objects.
		{"drop temp", "CREATE TEMP TABLE t (a int); CREATE TEMP TABLE u (a int); DROP TABLE t", "create-temp u", "ended create-temp t"},
		{"drop in pg_temp", "CREATE TEMP TABLE t (a int); DROP TABLE pg_temp.t", "", "ended create-temp t"},
		{"drop another schema", "CREATE TEMP TABLE t (a int); DROP TABLE public.t", "create-temp t", ""},
		{"relations share names", "CREATE TEMP VIEW v AS SELECT 1; DROP TABLE v", "", "ended create-temp v"},
		{"if not exists renews", "CREATE TEMP TABLE t (a int); CREATE TEMP TABLE IF NOT EXISTS t (a int)", "create-temp t", "renewed create-temp t"},
		{"drop routine drops a function", "CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'; DROP ROUTINE pg_temp.f()", "", "ended create-temp f"},
		{"a function is no relation", "CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'; DROP TABLE f", "create-temp f", ""},
		{"discard temp", "CREATE TEMP TABLE t (a int); CREATE TEMP SEQUENCE s; DISCARD TEMP", "", "ended create-temp t; create-temp s"},
		{"on commit drop", "BEGIN; CREATE TEMP TABLE t (a int) ON COMMIT DROP; COMMIT", "", "ended create-temp t local"},
		{"on commit drop alone", "CREATE TEMP TABLE t (a int) ON COMMIT DROP", "", ""},
		{"temp rolled back", "BEGIN; CREATE TEMP TABLE t (a int); ROLLBACK", "", "ended create-temp t"},
		{"drop rolled back", "CREATE TEMP TABLE t (a int); BEGIN; DROP TABLE t; ROLLBACK", "create-temp t", "restored create-temp t"},
		// Cursors.
		{"close", "BEGIN; DECLARE c CURSOR WITH HOLD FOR SELECT 1; COMMIT; CLOSE c", "", "ended declare-hold c"},
		{"close all", "BEGIN; DECLARE c CURSOR WITH HOLD FOR SELECT 1; DECLARE d CURSOR WITH HOLD FOR SELECT 1; COMMIT; CLOSE ALL", "", "ended declare-hold c; declare-hold d"},
		{"cursor without hold", "BEGIN; DECLARE c CURSOR FOR SELECT 1; COMMIT", "", ""},
		{"hold cursor rolled back", "BEGIN; DECLARE c CURSOR WITH HOLD FOR SELECT 1; ROLLBACK", "", "ended declare-hold c"},
		{"close stays after rollback", "BEGIN; DECLARE c CURSOR WITH HOLD FOR SELECT 1; COMMIT; BEGIN; CLOSE c; ROLLBACK", "", ""},
		// Prepared statements.
		{"deallocate", "PREPARE p AS SELECT 1; PREPARE q AS SELECT 2; DEALLOCATE p", "prepare q", "ended prepare p"},
		{"deallocate all", "PREPARE p AS SELECT 1; PREPARE q AS SELECT 2; DEALLOCATE ALL", "", "ended prepare p; prepare q"},
		{"prepare survives rollback", "BEGIN; PREPARE p AS SELECT 1; ROLLBACK", "prepare p", ""},
		// LOAD and DISCARD.
		{"load", "LOAD 'auto_explain'", "load auto_explain", "made load auto_explain"},
		{"discard all", "SET work_mem = '1MB'; SET SESSION AUTHORIZATION a; SET ROLE b; SELECT pg_advisory_lock(1); LISTEN a; CREATE TEMP TABLE t (a int); PREPARE p AS SELECT 1; LOAD 'x'; DISCARD ALL",
			"load x", "ended set-param work_mem; session-auth session_authorization; set-role role; advisory-lock(i1); listen a; create-temp t; prepare p"},
		{"discard plans keeps state", "SET work_mem = '1MB'; DISCARD PLANS; DISCARD SEQUENCES", "set-param work_mem", ""},
		// Rollback brings back what the transaction ended.
		{"reset rolled back", "SET work_mem = '1MB'; BEGIN; RESET work_mem; ROLLBACK", "set-param work_mem", "restored set-param work_mem"},
		{"set again rolled back", "SET work_mem = '1MB'; BEGIN; SET work_mem = '2MB'; ROLLBACK", "set-param work_mem", "ended set-param work_mem, restored set-param work_mem"},
		{"commit keeps", "BEGIN; SET work_mem = '1MB'; LISTEN a; COMMIT", "set-param work_mem; listen a", ""},
		{"rollback and chain", "BEGIN; SET work_mem = '1MB'; ROLLBACK AND CHAIN; SET LOCAL search_path = app", "set-param search_path local", "made set-param search_path local"},
		{"prepare transaction commits", "BEGIN; SET work_mem = '1MB'; SET LOCAL search_path = app; PREPARE TRANSACTION 'x'", "set-param work_mem", "ended set-param search_path local"},
		// Savepoints.
		{"rollback to savepoint", "BEGIN; SET work_mem = '1MB'; SAVEPOINT s; SET search_path = app; LISTEN a; ROLLBACK TO s", "set-param work_mem", "ended set-param search_path; listen a"},
		{"rollback to restores", "BEGIN; SET work_mem = '1MB'; SAVEPOINT s; RESET work_mem; ROLLBACK TO s; COMMIT", "set-param work_mem", ""},
		{"rollback to keeps the savepoint", "BEGIN; SAVEPOINT s; SET work_mem = '1MB'; ROLLBACK TO s; SET search_path = app; ROLLBACK TO s", "", "ended set-param search_path"},
		{"released savepoint", "BEGIN; SAVEPOINT s; SET work_mem = '1MB'; RELEASE s; COMMIT", "set-param work_mem", ""},
		{"released savepoint rolls back with the transaction", "BEGIN; SAVEPOINT s; SET work_mem = '1MB'; RELEASE s; ROLLBACK", "", "ended set-param work_mem"},
		{"nested savepoints", "BEGIN; SAVEPOINT a; SET work_mem = '1MB'; SAVEPOINT b; SET search_path = app; ROLLBACK TO a; COMMIT", "", ""},
		{"inner rollback to", "BEGIN; SAVEPOINT a; SET work_mem = '1MB'; SAVEPOINT b; SET search_path = app; ROLLBACK TO b; COMMIT", "set-param work_mem", ""},
		{"unknown savepoint", "BEGIN; SET work_mem = '1MB'; ROLLBACK TO nope; COMMIT", "set-param work_mem", ""},
		{"lock after savepoint stays", "BEGIN; SAVEPOINT s; SELECT pg_advisory_lock(1); PREPARE p AS SELECT 1; ROLLBACK TO s", "advisory-lock(i1); prepare p", ""},
		{"made and ended in the span", "SET work_mem = '1MB'; BEGIN; SAVEPOINT s; SET work_mem = '2MB'; RESET work_mem; ROLLBACK TO s", "set-param work_mem", "restored set-param work_mem"},
	})
}

// pairingCase is a script, the state it leaves and what its last
// statement did.
type pairingCase struct{ name, sql, holds, last string }

// runPairing runs each case through a session (Strict or not).
func runPairing(t *testing.T, strict bool, tests []pairingCase) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Session{Strict: strict}
			last := runOn(t, &s, tt.sql)
			if got := renderHeld(s.Holds()); got != tt.holds {
				t.Errorf("holds: got %q, want %q", got, tt.holds)
			}
			if got := renderStep(last); got != tt.last {
				t.Errorf("last step: got %q, want %q", got, tt.last)
			}
		})
	}
}

// TestSessionProtocol covers the named statements of the extended
// protocol, which share their names with SQL PREPARE.
func TestSessionProtocol(t *testing.T) {
	tests := []struct {
		name  string
		run   func(s *Session) Step
		holds string
		last  string
	}{
		{"parse", func(s *Session) Step { return s.Parse("s1") }, "prepare s1 protocol", "made prepare s1 protocol"},
		{"unnamed", func(s *Session) Step { return s.Parse("") }, "", ""},
		{"parse again replaces", func(s *Session) Step { s.Parse("s1"); return s.Parse("s1") }, "prepare s1 protocol", "made prepare s1 protocol, ended prepare s1 protocol"},
		{"close", func(s *Session) Step { s.Parse("s1"); s.Parse("s2"); return s.CloseStatement("s1") }, "prepare s2 protocol", "ended prepare s1 protocol"},
		{"deallocate ends a protocol statement", func(s *Session) Step {
			s.Parse("s1")
			return s.Apply(Effect{Kind: Deallocate, Name: "s1"})
		}, "", "ended prepare s1 protocol"},
		{"discard all ends them", func(s *Session) Step {
			s.Parse("s1")
			s.Apply(Effect{Kind: Prepare, Name: "p"})
			return s.Apply(Effect{Kind: DiscardAll})
		}, "", "ended prepare s1 protocol; prepare p"},
		{"rollback keeps them", func(s *Session) Step {
			s.Begin()
			s.Parse("s1")
			return s.Rollback()
		}, "prepare s1 protocol", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Session
			last := tt.run(&s)
			if got := renderHeld(s.Holds()); got != tt.holds {
				t.Errorf("holds: got %q, want %q", got, tt.holds)
			}
			if got := renderStep(last); got != tt.last {
				t.Errorf("last step: got %q, want %q", got, tt.last)
			}
		})
	}
}

// TestSessionForget covers a failed statement: what it made is dropped,
// and a rollback does not bring it back.
func TestSessionForget(t *testing.T) {
	var s Session
	s.Begin()
	made := s.Apply(Effect{Kind: Listen, Name: "a"}).Held
	s.Forget(made)
	if s.Alive(made) || len(s.Holds()) != 0 {
		t.Fatalf("forgotten state still held: %s", renderHeld(s.Holds()))
	}
	if st := s.Rollback(); len(st.Restored) != 0 || len(st.Ended) != 0 {
		t.Errorf("rollback after forget: %s", renderStep(st))
	}
}

// TestReleases covers which locks an unlock may release.
func TestReleases(t *testing.T) {
	key := func(k int64) Effect { return Effect{Kind: AdvisoryLock, Key: k, KeyKnown: true} }
	tests := []struct {
		name    string
		u, l    Effect
		release bool
	}{
		{"same key", Effect{Kind: AdvisoryUnlock, Key: 1, KeyKnown: true}, key(1), true},
		{"another key", Effect{Kind: AdvisoryUnlock, Key: 2, KeyKnown: true}, key(1), false},
		{"another mode", Effect{Kind: AdvisoryUnlock, Key: 1, KeyKnown: true, Shared: true}, key(1), false},
		{"two-int4 key apart", Effect{Kind: AdvisoryUnlock, Key: 1, KeyKnown: true, Pair: true}, key(1), false},
		{"unknown unlock", Effect{Kind: AdvisoryUnlock, Arg: "$1"}, key(1), true},
		{"unknown lock", Effect{Kind: AdvisoryUnlock, Key: 1, KeyKnown: true}, Effect{Kind: AdvisoryLock, Arg: "?"}, true},
		{"unlock all", Effect{Kind: AdvisoryUnlockAll}, Effect{Kind: AdvisoryLock, Key: 3, KeyKnown: true, Shared: true}, true},
	}
	for _, tt := range tests {
		if got := Releases(tt.u, tt.l); got != tt.release {
			t.Errorf("%s: Releases = %v, want %v", tt.name, got, tt.release)
		}
	}
}

// TestNamespace covers which temporary objects share their names.
func TestNamespace(t *testing.T) {
	tests := []struct{ object, want string }{
		{"table", ""}, {"view", ""}, {"sequence", ""}, {"materialized view", ""}, {"foreign table", ""},
		{"function", "routine"}, {"procedure", "routine"}, {"routine", "routine"}, {"aggregate", "routine"},
		{"type", "type"}, {"operator", "operator"}, {"domain", "domain"},
	}
	for _, tt := range tests {
		if got := Namespace(tt.object); got != tt.want {
			t.Errorf("Namespace(%q) = %q, want %q", tt.object, got, tt.want)
		}
	}
}

// TestSessionFound covers state read back from a server: the session
// learns what it did not see and forgets what is gone.
func TestSessionFound(t *testing.T) {
	tests := []struct {
		name, sql string
		found     func(s *Session) (made, forgot []*Held)
		holds     string
		made      string
		forgot    string
	}{
		{"listens", "LISTEN a; LISTEN b", func(s *Session) ([]*Held, []*Held) { return s.Found(Listen, []string{"b", "c"}) },
			"listen b; listen c", "listen c", "listen a"},
		{"temp relations only", "CREATE TEMP TABLE t (a int); CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
			func(s *Session) ([]*Held, []*Held) { return s.Found(CreateTemp, nil) }, "create-temp f", "", "create-temp t"},
		{"cursors", "", func(s *Session) ([]*Held, []*Held) { return s.Found(DeclareHold, []string{"c"}) }, "declare-hold c", "declare-hold c", ""},
		{"no lock left", "SELECT pg_advisory_lock(1), pg_advisory_lock($1)", func(s *Session) ([]*Held, []*Held) { return s.FoundLocks(0) },
			"", "", "advisory-lock(i1); advisory-lock($1)"},
		{"more locks than seen", "SELECT pg_advisory_lock(1)", func(s *Session) ([]*Held, []*Held) { return s.FoundLocks(3) },
			"advisory-lock(i1); advisory-lock(?); advisory-lock(?)", "advisory-lock(?); advisory-lock(?)", ""},
		{"fewer locks than seen", "SELECT pg_advisory_lock(1), pg_advisory_lock(2)", func(s *Session) ([]*Held, []*Held) { return s.FoundLocks(1) },
			"advisory-lock(i1); advisory-lock(i2)", "", ""},
		{"a lock taken again is one row", "SELECT pg_advisory_lock(1); SELECT pg_advisory_lock(1)", func(s *Session) ([]*Held, []*Held) { return s.FoundLocks(2) },
			"advisory-lock(i1); advisory-lock(i1); advisory-lock(?)", "advisory-lock(?)", ""},
		{"modes and key forms are rows apart", "SELECT pg_advisory_lock(1), pg_advisory_lock_shared(1), pg_advisory_lock(0, 1), pg_advisory_lock($1)",
			func(s *Session) ([]*Held, []*Held) { return s.FoundLocks(4) },
			"advisory-lock(i1); advisory-lock(i1) shared; advisory-lock(i0,i1); advisory-lock($1)", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{}
			if tt.sql != "" {
				s, _ = runScript(t, tt.sql)
			}
			made, forgot := tt.found(s)
			if got := renderHeld(s.Holds()); got != tt.holds {
				t.Errorf("holds: got %q, want %q", got, tt.holds)
			}
			if got := renderHeld(made); got != tt.made {
				t.Errorf("made: got %q, want %q", got, tt.made)
			}
			if got := renderHeld(forgot); got != tt.forgot {
				t.Errorf("forgot: got %q, want %q", got, tt.forgot)
			}
		})
	}
}

// TestSessionStrictUnlock covers the unlocks of a Strict session, which
// never ends a lock the unlock may not have released but for locks of
// run-time keys, which an unlock of a run-time key is taken to pair with.
func TestSessionStrictUnlock(t *testing.T) {
	tests := []pairingCase{
		{"same key", "SELECT pg_advisory_lock(1); SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)", "advisory-lock(i1)", "ended advisory-lock(i1)"},
		{"known unlock of an unknown lock", "SELECT pg_advisory_lock($1); SELECT pg_advisory_unlock(5)", "advisory-lock($1)", "guess"},
		{"known unlock of another key", "SELECT pg_advisory_lock(4); SELECT pg_advisory_unlock(5)", "advisory-lock(i4)", ""},
		{"unknown unlock of an unknown lock", "SELECT pg_advisory_lock(5); SELECT pg_advisory_lock($1); SELECT pg_advisory_unlock($2)", "advisory-lock(i5)", "ended advisory-lock($1), guess"},
		{"unknown unlock of a known lock", "SELECT pg_advisory_lock(4); SELECT pg_advisory_lock(5); SELECT pg_advisory_unlock($2)", "advisory-lock(i4); advisory-lock(i5)", ""},
		{"unlock all", "SELECT pg_advisory_lock(4), pg_advisory_lock($1); SELECT pg_advisory_unlock_all()", "", "ended advisory-lock(i4); advisory-lock($1)"},
	}
	runPairing(t, true, tests)
}

// TestSessionHas covers Has, by kind.
func TestSessionHas(t *testing.T) {
	s, _ := runScript(t, "LISTEN a; PREPARE p AS SELECT 1; DEALLOCATE p")
	if !s.Has(Listen) || s.Has(Prepare) || s.Has(AdvisoryLock) {
		t.Errorf("Has: listen %v, prepare %v, lock %v; want true, false, false", s.Has(Listen), s.Has(Prepare), s.Has(AdvisoryLock))
	}
}
