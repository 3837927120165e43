package engine

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Verification of a server after statements whose effects the classifier
// cannot know: a DO block, a call of a routine that is not built in. Such
// a statement may have set parameters, changed the role, taken advisory
// locks, listened, created temporary objects, held cursors or prepared
// statements inside the routine. Before the server can serve anyone else
// the pooler reads what is there (VerifySQL, one round trip) and
// Reconcile makes the client's Session the server's truth, as if the
// client had sent the statements itself.

// listSep separates the names of one column of VerifySQL's row.
const listSep = "\x1f"

// VerifyQuery is the query that reads a server's session state in one
// row: the role, the session user, the number of advisory locks held, the
// names of the channels listened to, the temporary relations, the held
// cursors and the SQL-level prepared statements, then the values of the
// custom parameters custom (names with a dot, which may not exist). It
// reads no catalog of parameters: pg_settings costs half a millisecond,
// and does not list custom parameters anyway. The parameters a routine
// may set come from its definition instead (see pooler/routines.go).
func VerifyQuery(custom []string) string {
	var b strings.Builder
	b.WriteString("SELECT current_setting('role'), session_user, " +
		"(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted), " +
		"array_to_string(ARRAY(SELECT pg_listening_channels()), chr(31)), " +
		"CASE WHEN pg_my_temp_schema() <> 0 THEN (SELECT string_agg(relname, chr(31)) FROM pg_class " +
		"WHERE relnamespace = pg_my_temp_schema() AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f')) END, " +
		"(SELECT string_agg(name, chr(31)) FROM pg_cursors WHERE is_holdable), " +
		"(SELECT string_agg(name, chr(31)) FROM pg_prepared_statements WHERE from_sql)")
	for _, n := range custom {
		b.WriteString(", current_setting(" + QuoteLiteral(n) + ", true)")
	}
	return b.String()
}

// Found is a server's session state as VerifyQuery read it.
type Found struct {
	Settings    []string // parameters set (see ParseFound)
	Role        string   // SET ROLE's value, "none" when unset
	SessionUser string
	Locks       int // advisory locks held (session level: read between transactions)
	Listens     []string
	Temps       []string
	Cursors     []string
	Prepared    []string
}

// ParseFound decodes the row of VerifyQuery(custom). Settings are params,
// the parameters the routines the client called may set, whatever their
// value (they are read back or reset by name), and the custom ones among
// them whose value is not empty (NULL is read as empty too).
func ParseFound(row []string, params, custom []string) (Found, bool) {
	if len(row) != 7+len(custom) {
		return Found{}, false
	}
	locks, err := strconv.Atoi(row[2])
	if err != nil {
		return Found{}, false
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, listSep)
	}
	f := Found{Settings: slices.Clone(params), Role: row[0], SessionUser: row[1], Locks: locks,
		Listens: split(row[3]), Temps: split(row[4]), Cursors: split(row[5]), Prepared: split(row[6])}
	for i, n := range custom {
		if row[7+i] != "" {
			f.Settings = append(f.Settings, n)
		}
	}
	return f, true
}

// Unverified reports whether the client ran statements whose effects must
// be read from the server before it serves anyone else.
func (st *Session) Unverified() bool { return st.unverified }

// TakeCalls returns the routines the client called since the last
// verification (CallRoutine names; effects.DOBlock and
// effects.OpaqueDOBlock for DO blocks) and forgets them.
func (st *Session) TakeCalls() []string {
	if !st.holds() {
		return []string{}
	}
	names := make([]string, 0, len(st.calls))
	for n := range st.calls {
		names = append(names, n)
	}
	st.calls = nil
	sort.Strings(names)
	return names
}

// ReachPending prefixes the name of a CallRoutine that stands for the text
// of a statement (after the prefix) whose reach in the catalog (what code
// it runs without naming it) is to be found when the statement runs:
// Reacher.Reach then says which routines it reaches, or the name is kept
// as a call for the verification to match (the reach was not known).
const ReachPending = "\x00reach\x00"

// Reacher says which routines a statement's text reaches without naming
// them, from what the driver read of the catalog: known is false when
// that is not known now. Routines known to change nothing are left out.
type Reacher interface {
	Reach(text string) (routines []string, known bool)
}

// SetReacher sets what resolves the client's ReachPending calls.
func (c *Client) SetReacher(r Reacher) { c.reacher = r }

// resolveReach replaces in effs the ReachPending calls the client's
// Reacher can resolve now by calls of the routines they reach (none when
// they reach nothing that may change state). It returns effs itself when
// there is nothing to resolve, and never changes it (it may be a
// prepared statement's or the classifier's).
func (c *Client) resolveReach(effs []StateEffect) []StateEffect {
	at := -1
	for i := range effs {
		if effs[i].Kind == effects.CallRoutine && strings.HasPrefix(effs[i].Name, ReachPending) {
			at = i
			break
		}
	}
	if at < 0 || c.reacher == nil {
		return effs
	}
	out := effs[:at:at]
	for _, e := range effs[at:] {
		if e.Kind == effects.CallRoutine && strings.HasPrefix(e.Name, ReachPending) {
			if routines, ok := c.reacher.Reach(e.Name[len(ReachPending):]); ok {
				for _, r := range routines {
					out = append(out, StateEffect{Kind: effects.CallRoutine, Name: r})
				}
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// Calls reports how many routines (and other CallRoutine names) the client
// called since the last verification.
func (st *Session) Calls() int {
	if !st.holds() {
		return 0
	}
	return len(st.calls)
}

// Unreached notes that the calls taken (TakeCalls) reach no code that
// may make session state: the session is verified as it is.
func (st *Session) Unreached() { st.unverified = false }

// Opaque notes that the client ran code that may have set parameters
// whose names the pooler cannot know: the server is cleaned with RESET
// ALL, and only the parameters it can name follow the client.
func (st *Session) Opaque() { st.ResetAll = true }

// Reconcile makes st what the server holds (f), for a server whose login
// user is user; tracked names the parameters that follow the client
// anyway. It returns the state the pooler did not know of, as effects
// of the kinds that make it (for the hazard counts and logs; Rule is left
// empty): SetParam, SetRole for a role, SessionAuth for a session
// authorization, AdvisoryLock, Listen, CreateTemp, DeclareHold and
// Prepare. It leaves st verified.
func (st *Session) Reconcile(f Found, user string, tracked func(string) bool) []StateEffect {
	st.own()
	st.unverified = false
	var found []StateEffect
	for _, n := range f.Settings {
		n = strings.ToLower(n)
		if tracked(n) || st.Touched[n] {
			continue
		}
		if n == "search_path" {
			st.resolveChanged()
		}
		SetAdd(&st.Touched, n)
		found = append(found, StateEffect{Kind: effects.SetParam, Name: n})
	}
	if f.Role != "none" && f.Role != "" && !st.Touched["role"] {
		st.resolveChanged()
		SetAdd(&st.Touched, "role")
		found = append(found, StateEffect{Kind: effects.SetRole, Name: "role"})
	}
	if f.SessionUser != user && !st.Touched["session_authorization"] {
		st.resolveChanged()
		SetAdd(&st.Touched, "session_authorization")
		SetAdd(&st.Touched, "role")
		found = append(found, StateEffect{Kind: effects.SessionAuth, Name: "session_authorization"})
	}
	// Each lock of a known key and mode is one row of pg_locks; more rows
	// are locks taken where the pooler could not see their keys.
	if made, _ := st.state.FoundLocks(f.Locks); len(made) > 0 {
		found = append(found, StateEffect{Kind: effects.AdvisoryLock})
	}
	found, _ = st.found(effects.Listen, f.Listens, found)
	var changed bool
	if found, changed = st.found(effects.CreateTemp, f.Temps, found); changed {
		st.ctxGen++ // names may resolve to other objects now
	}
	found, _ = st.found(effects.DeclareHold, f.Cursors, found)
	found, _ = st.found(effects.Prepare, f.Prepared, found)
	return found
}

// found makes the held state of kind k the names the server listed
// (effects.Session.Found), appending an effect of kind k for each it did
// not hold; changed reports whether the state changed.
func (st *Session) found(k effects.Kind, names []string, found []StateEffect) (_ []StateEffect, changed bool) {
	made, forgot := st.state.Found(k, names)
	for _, h := range made {
		found = append(found, StateEffect{Kind: k, Name: h.Name})
	}
	return found, len(made)+len(forgot) > 0
}
