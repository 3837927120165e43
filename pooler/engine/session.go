package engine

import (
	"sort"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Makes reports whether an effect of kind k makes session state that
// could leak (a setting, a role, a lock, a LISTEN, a temporary table, a
// held cursor, a prepared statement, a loaded library), as opposed to
// undoing it (RESET, unlocks, UNLISTEN, DROP, CLOSE, DEALLOCATE, DISCARD).
// Any change of role or session authorization makes state, its resets
// included: the role the client has follows it (preserve) or is cleaned
// (reset) whichever it is. Only such effects are hazards: the reject
// policy refuses them and the hazard counts count them. An undoing
// statement is harmless whatever it names: DROP TABLE IF EXISTS of a
// plain table is not a temporary table.
func Makes(k effects.Kind) bool {
	switch k {
	case effects.SetParam, effects.SetRole, effects.ResetRole, effects.SessionAuth, effects.ResetSessionAuth,
		effects.AdvisoryLock, effects.Listen, effects.CreateTemp, effects.DeclareHold, effects.Prepare, effects.Load:
		return true
	}
	return false
}

// Pins reports whether state of kind k (Makes) pins the client to its
// server under the preserve policy: advisory locks, LISTEN, temporary
// objects, held cursors, SQL prepared statements and loaded libraries
// live in the server's backend and cannot follow the client. Settings
// and roles are values: they are read back and set again on the client's
// next server (replayed).
func Pins(k effects.Kind) bool {
	switch k {
	case effects.AdvisoryLock, effects.Listen, effects.CreateTemp, effects.DeclareHold, effects.Prepare, effects.Load:
		return true
	}
	return false
}

// Follows reports whether the pooler follows effects of kind k: what
// they do to the session (Session.Apply), what they may have done
// (CallRoutine: code whose effects only the server knows, read before it
// serves anyone else, verify.go) or what they change of routines
// (RoutineChange: what the pooler knows of them may be out of date). A
// classifier leaves the other kinds out: DISCARD PLANS and DISCARD
// SEQUENCES leave nothing another client could see, and the kinds that
// only read state are not the pooler's concern.
func Follows(k effects.Kind) bool {
	switch k {
	case effects.SetParam, effects.ResetParam, effects.ResetAll,
		effects.SetRole, effects.ResetRole, effects.SessionAuth, effects.ResetSessionAuth,
		effects.AdvisoryLock, effects.AdvisoryUnlock, effects.AdvisoryUnlockAll,
		effects.Listen, effects.Unlisten, effects.UnlistenAll,
		effects.CreateTemp, effects.DropTemp, effects.DiscardTemp,
		effects.DeclareHold, effects.CloseCursor, effects.CloseAll,
		effects.Prepare, effects.Deallocate, effects.DeallocateAll,
		effects.Load, effects.DiscardAll, effects.CallRoutine, effects.RoutineChange:
		return true
	}
	return false
}

// StateEffect is one effect of a statement on session state.
type StateEffect struct {
	// Kind is what the effect does (see rules/effects for the exact
	// scope of each kind; Follows says which the pooler follows).
	Kind effects.Kind
	// Name is the parameter, channel, cursor, statement or object.
	Name string
	// Key identifies an advisory lock (KeyKnown); Shared and Pair are part
	// of its identity.
	Key          int64
	KeyKnown     bool
	Shared, Pair bool
	// Object is the kind of a temporary object of CreateTemp and
	// DropTemp that is not a relation ("function", "type", …);
	// empty for relations, which the server's state read lists.
	Object string
	// Rule is the catalogue rule and Fix its advice, for messages.
	Rule, Fix string
}

// Effect is e as an effect of rules/effects, for the pairing rules of
// effects.Session.
func (e StateEffect) Effect() effects.Effect {
	return effects.Effect{Kind: e.Kind, Name: e.Name, Object: e.Object,
		Key: e.Key, KeyKnown: e.KeyKnown, Shared: e.Shared, Pair: e.Pair, Location: -1}
}

// Session is what the pooler knows of the session state a client created
// on its server, used by the client's owner alone.
type Session struct {
	// touched are the parameters (and "role", "session_authorization")
	// the client set or reset since it last left a server; settings are
	// the values it had there (preserve), restored on the next server.
	Touched  map[string]bool
	ResetAll bool
	// dynamicSet is a SET whose parameter name the pooler cannot know.
	DynamicSet bool
	Settings   []Setting
	// held is what pins the client (preserve) or must be cleaned (reset),
	// nil until a statement makes or undoes some (own): most clients
	// never do, and an idle client costs what it holds.
	*held
	Loaded bool
	// logged are the rules already logged for this client.
	Logged map[string]bool
	// What the client's statements resolve against beyond their text
	// (prepared.go): ctxGen counts the changes of search_path, role and
	// temporary objects (kept across cleaning), ctxDirty is set while the
	// server holds such a change whose value the pooler has not read back.
	ctxGen   uint64
	ctxDirty bool
	// unverified is set by statements whose effects only the server
	// knows (CallRoutine): its state must be read (Reconcile).
	unverified bool
}

// held is the state of a Session that pins its client or must be cleaned,
// with what goes with it.
type held struct {
	// state holds the advisory locks (one per lock taken: they stack),
	// LISTENs, temporary objects, held cursors and SQL prepared
	// statements, paired with what undoes them by effects.Session, which
	// is Strict: it never takes a lock for released that the server may
	// still hold. Temporary objects that are not relations (routines,
	// types, operators) are not in the server's state read, so Reconcile
	// leaves them. The pooler opens no transaction in it (it is given
	// session-scoped effects only): what a rolled-back transaction made
	// is still believed made, which at worst cleans what is not there.
	state effects.Session
	// calls are the routines called since the last verification.
	calls map[string]bool
	// tempDrops counts the DROPs of the client's own temporary objects
	// whose CommandComplete has not come yet: they change no statement of
	// another client.
	tempDrops int
}

// own makes st's held state, for a change of it.
func (st *Session) own() {
	if st.held == nil {
		st.held = &held{state: effects.Session{Strict: true}}
	}
}

// holds reports whether any held state was made (a change of it may
// have emptied it again).
func (st *Session) holds() bool { return st.held != nil }

// Setting is a run-time parameter and its value.
type Setting struct{ Name, Value string }

// Held reports whether the client holds state that pins it (preserve).
func (st *Session) Held() bool {
	if !st.holds() {
		return st.Loaded || st.DynamicSet
	}
	return len(st.state.Holds()) > 0 || st.Loaded || st.DynamicSet
}

// hasTemps reports whether the client holds temporary objects.
func (st *Session) hasTemps() bool {
	return st.holds() && st.state.Has(effects.CreateTemp)
}

// Dirty reports whether the server needs cleaning before reuse.
func (st *Session) Dirty() bool {
	return st.Held() || len(st.Touched) > 0 || st.ResetAll || st.unverified
}

// SetAdd adds k to the set *m, making it when needed.
func SetAdd(m *map[string]bool, k string) {
	if *m == nil {
		*m = make(map[string]bool)
	}
	(*m)[k] = true
}

// Apply records effs, sent to the server by the client. tracked names the
// parameters that follow the client anyway (the pooler's varcache).
func (st *Session) Apply(effs []StateEffect, tracked func(name string) bool) {
	for _, e := range effs {
		var step effects.Step
		if heldKind(e.Kind) {
			st.own()
			step = st.state.Apply(e.Effect())
		}
		switch e.Kind {
		case effects.SetParam, effects.ResetParam:
			if e.Name == "" {
				// set_config($1, …): which parameter is known only to
				// the server, so it cannot be read back and moved: the
				// client keeps its server (and RESET ALL cleans it).
				st.DynamicSet, st.ResetAll = true, true
				continue
			}
			if tracked(e.Name) {
				// The tracked parameters follow the client anyway
				// (varcache).
				continue
			}
			if strings.EqualFold(e.Name, "search_path") {
				st.resolveChanged()
			}
			SetAdd(&st.Touched, strings.ToLower(e.Name))
		case effects.ResetAll:
			st.resolveChanged()
			st.ResetAll = true
		case effects.SetRole, effects.ResetRole, effects.SessionAuth, effects.ResetSessionAuth:
			st.resolveChanged()
			if e.Kind == effects.SessionAuth || e.Kind == effects.ResetSessionAuth {
				// SET SESSION AUTHORIZATION also resets the role.
				SetAdd(&st.Touched, "session_authorization")
			}
			SetAdd(&st.Touched, "role")
		case effects.AdvisoryUnlock:
			if step.Guess {
				// A key the pooler could not see, on one side or the
				// other: which lock it released (if any) only the server
				// knows, and it says (Reconcile).
				st.unverified = true
			}
		case effects.CreateTemp, effects.DiscardTemp:
			st.ctxGen++
		case effects.DropTemp:
			if len(step.Ended) > 0 {
				st.ctxGen++
				if e.Object == "" {
					st.tempDrops++
				}
				st.undone()
			}
		case effects.Unlisten, effects.UnlistenAll:
			if len(step.Ended) > 0 {
				st.undone()
			}
		case effects.Load:
			st.Loaded = true
		case effects.CallRoutine:
			st.unverified = true
			if e.Name != "" {
				SetAdd(&st.calls, e.Name)
			}
		case effects.DiscardAll:
			st.resolveChanged()
			st.ResetAll = true
			SetAdd(&st.Touched, "role")
			SetAdd(&st.Touched, "session_authorization")
		}
	}
}

// CleanupSQL is the statement that leaves a server as clean as a fresh
// one of what st created on it, or "" when there is nothing to clean.
// With discard set it cleans everything (DISCARD ALL).
func CleanupSQL(st *Session) string {
	if !st.Dirty() {
		return ""
	}
	var q []string
	if st.ResetAll || st.Touched["session_authorization"] {
		q = append(q, "SET SESSION AUTHORIZATION DEFAULT")
	}
	if st.Touched["role"] {
		q = append(q, "RESET ROLE")
	}
	if st.ResetAll {
		q = append(q, "RESET ALL")
	} else {
		names := make([]string, 0, len(st.Touched))
		for n := range st.Touched {
			if n != "role" && n != "session_authorization" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			q = append(q, "RESET "+QuoteIdent(n))
		}
	}
	if !st.holds() {
		return strings.Join(q, "; ")
	}
	if st.state.Has(effects.AdvisoryLock) {
		q = append(q, "SELECT pg_advisory_unlock_all()")
	}
	if st.state.Has(effects.Listen) {
		q = append(q, "UNLISTEN *")
	}
	if st.hasTemps() {
		q = append(q, "DISCARD TEMP")
	}
	if st.state.Has(effects.DeclareHold) {
		q = append(q, "CLOSE ALL")
	}
	for _, h := range st.state.Holds() {
		if h.Kind == effects.Prepare {
			q = append(q, "DEALLOCATE "+QuoteIdent(h.Name))
		}
	}
	return strings.Join(q, "; ")
}

// QuoteIdent quotes a name as an SQL identifier when it needs quoting;
// dotted custom parameter names (app.tenant) are quoted part by part.
func QuoteIdent(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		plain := p != ""
		for j := 0; j < len(p); j++ {
			ch := p[j]
			if !(ch == '_' || ch >= 'a' && ch <= 'z' || j > 0 && ch >= '0' && ch <= '9') {
				plain = false
				break
			}
		}
		if !plain {
			parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
		}
	}
	return strings.Join(parts, ".")
}

// ReadbackSQL is the query that reads the values of the parameters the
// client touched, in the order of names.
func ReadbackSQL(names []string) string {
	cols := make([]string, len(names))
	for i, n := range names {
		cols[i] = "current_setting(" + QuoteLiteral(n) + ")"
	}
	return "SELECT " + strings.Join(cols, ", ")
}

// RestoreSQL sets the client's settings on a server: the session
// authorization first, then the role, then the rest.
func RestoreSQL(settings []Setting) string {
	order := func(n string) int {
		switch n {
		case "session_authorization":
			return 0
		case "role":
			return 1
		}
		return 2
	}
	s := append([]Setting(nil), settings...)
	sort.SliceStable(s, func(i, j int) bool { return order(s[i].Name) < order(s[j].Name) })
	cols := make([]string, len(s))
	for i, st := range s {
		cols[i] = "set_config(" + QuoteLiteral(st.Name) + ", " + QuoteLiteral(st.Value) + ", false)"
	}
	return "SELECT " + strings.Join(cols, ", ")
}

// Cleaned is the session after its server was cleaned: what was logged
// stays, and so do the settings that follow the client.
func (st *Session) Cleaned(settings []Setting) Session {
	return Session{Logged: st.Logged, Settings: settings, ctxGen: st.ctxGen}
}

// resolveChanged notes a change of what names resolve to (search_path,
// role) whose value only the server knows until it is read back.
func (st *Session) resolveChanged() {
	st.ctxGen++
	st.ctxDirty = true
}

// QuoteLiteral quotes v as an SQL string literal valid whatever
// standard_conforming_strings says.
func QuoteLiteral(v string) string {
	if strings.ContainsRune(v, '\\') {
		return "E'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// undone marks state the client's statement ended as unverified: a DROP
// or an UNLISTEN is undone by the rollback of its transaction (and
// does nothing when it fails), which the pooler does not follow, so the
// server says what is left (Reconcile) before it serves anyone else.
func (st *Session) undone() { st.unverified = true }

// heldKind reports whether effects of kind k change a Session's held
// state, through its effects.Session or its calls (settings, roles and
// LOAD do not).
func heldKind(k effects.Kind) bool {
	switch k {
	case effects.SetParam, effects.ResetParam, effects.ResetAll, effects.SetRole, effects.ResetRole,
		effects.SessionAuth, effects.ResetSessionAuth, effects.Load:
		return false
	}
	return true
}
