package rules

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// SessionSet flags statements that change a run-time parameter for the rest
// of the session.
var SessionSet = &Rule{
	ID:       "session-set",
	Title:    "session-level SET of a run-time parameter",
	Severity: Error,
	Fix:      "use SET LOCAL (or set_config(name, value, true)) inside the transaction that needs it, or a per-role/per-database default (ALTER ROLE … SET)",
	Funcs:    []string{"set_config"},
	Check:    checkSessionSet,
}

// securityParams change which rows or objects a client sees, or which
// checks run; leaking them to another client is a security problem.
var securityParams = map[string]bool{
	"search_path": true, "row_security": true, "session_replication_role": true,
	"role": true, "session_authorization": true,
}

// isSecurityParam reports whether a parameter's leak is a security issue:
// the fixed list above, and custom dotted settings (app.tenant_id), which
// applications set for row-level-security policies.
func isSecurityParam(name string) bool {
	return securityParams[name] || strings.Contains(name, ".")
}

// isRoleParam reports whether name is one session-role looks after.
func isRoleParam(name string) bool {
	return name == "role" || name == "session_authorization"
}

// What breaks when a parameter change stays on the server connection.
const (
	setBreaks   = "the client's later transactions may run without it and the next client of this server connection inherits it"
	resetBreaks = "the connection the earlier SET changed keeps the setting for its next client"
)

func checkSessionSet(p *Pass) {
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) {
			continue // ROLLBACK undoes SET, SET SESSION and set_config(…, false)
		}
		if vs := st.Node.GetVariableSetStmt(); vs != nil && !pairedSet(p.Group, i, vs) {
			sessionSetStmt(p, st, vs)
		}
		if up := st.Node.GetUpdateStmt(); up != nil && isPgSettings(up.Relation) {
			name := settingNameFromWhere(up.WhereClause)
			what := "UPDATE pg_settings"
			if name != "" {
				what += " of " + name
			}
			reportParam(p, st, up.Relation.Location, name, Error, what+" changes the setting for the rest of the session, like set_config(…, false)"+txNote(p), setBreaks)
		}
		for _, c := range st.CallsNamed("set_config") {
			if len(c.Args) != 3 {
				continue
			}
			name, known := ConstString(c.Args[0])
			name = strings.ToLower(name)
			if known && isRoleParam(name) {
				continue // session-role
			}
			label := "set_config(…"
			if known {
				label = fmt.Sprintf("set_config('%s'", name)
			}
			local, ok := ConstBool(c.Args[2])
			switch {
			case ok && local:
				continue
			case known && resetLater(p.Group, i, name):
				continue
			case !ok:
				reportParam(p, st, c.Location, name, Warning, label+", …, is_local) lasts for the rest of the session when is_local is false at run time"+txNote(p), setBreaks)
			default:
				reportParam(p, st, c.Location, name, Error, label+", …, false) lasts for the rest of the session"+txNote(p), setBreaks)
			}
		}
	}
}

func sessionSetStmt(p *Pass, st *Stmt, vs *pg.VariableSetStmt) {
	if vs.IsLocal {
		return
	}
	name := strings.ToLower(vs.Name)
	if isRoleParam(name) {
		return // session-role
	}
	switch vs.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		reportParam(p, st, -1, name, Error, "SET "+vs.Name+" lasts for the rest of the session"+txNote(p), setBreaks)
	case pg.VariableSetKind_VAR_SET_MULTI:
		if name != "session characteristics" {
			return // SET TRANSACTION …, SET TRANSACTION SNAPSHOT …
		}
		reportParam(p, st, -1, "default_transaction_isolation", Error,
			"SET SESSION CHARACTERISTICS AS TRANSACTION changes the defaults of every later transaction of the session"+txNote(p), setBreaks)
	case pg.VariableSetKind_VAR_SET_DEFAULT:
		reportParam(p, st, -1, name, Warning, "SET "+vs.Name+" TO DEFAULT acts on whichever server connection this transaction gets, not necessarily the one an earlier SET changed", resetBreaks)
	case pg.VariableSetKind_VAR_RESET:
		reportParam(p, st, -1, name, Warning, "RESET "+vs.Name+" acts on whichever server connection this transaction gets, not necessarily the one an earlier SET changed", resetBreaks)
	case pg.VariableSetKind_VAR_RESET_ALL:
		reportParam(p, st, -1, "", Warning, "RESET ALL acts on whichever server connection this transaction gets, not necessarily the one the earlier SETs changed", resetBreaks)
	}
}

// paramChange says what a top-level VariableSetStmt does to parameter
// name (lower-case): sets it (set) or puts it back to its default (reset,
// with name "" for RESET ALL). Transaction-scoped forms do neither.
func paramChange(vs *pg.VariableSetStmt) (name string, set, reset bool) {
	if vs.IsLocal {
		return "", false, false
	}
	name = strings.ToLower(vs.Name)
	switch vs.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		if isRoleNone(vs) {
			return name, false, true
		}
		return name, true, false
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		return name, false, true
	case pg.VariableSetKind_VAR_RESET_ALL:
		return "", false, true
	}
	return "", false, false
}

// pairedSet reports whether the i-th statement, vs, is one half of a
// change made and undone in one transaction: a SET reset later, or a
// RESET of a parameter set earlier.
func pairedSet(g *Group, i int, vs *pg.VariableSetStmt) bool {
	name, set, reset := paramChange(vs)
	return set && resetLater(g, i, name) || reset && setEarlier(g, i, name)
}

// reportParam reports a change of parameter name (lower-case, empty when
// unknown) with severity base before the target adjusts it.
func reportParam(p *Pass, st *Stmt, loc int32, name string, base Severity, what, breaks string) {
	sev, msg := paramFinding(p.Target, name, base, what, breaks)
	p.Report(st, loc, sev, msg, "")
}

// paramFinding rates a change of parameter name behind target t and
// builds the message.
func paramFinding(t Target, name string, base Severity, what, breaks string) (Severity, string) {
	kind := StateParam
	if TrackedParams[name] {
		kind = StateTrackedParam
	}
	h, note := t.Handle(kind)
	if base == Error && h == Breaks && isSecurityParam(name) {
		base = Critical
		breaks += " (a security leak: this setting decides what a client sees or which checks run)"
	}
	return Adjust(base, h), StateMessage(what, breaks, h, note)
}

// SessionParamChange rates, as session-set rates a SET, a session-level
// change of parameter name (lower-case) that a driver call or a
// connection setting makes on the server connection: it returns the
// severity behind target t and the message, which starts with what.
func SessionParamChange(t Target, name, what string) (Severity, string) {
	return paramFinding(t, name, Error, what, setBreaks)
}

// txNote says that a change inside an explicit transaction still outlives
// it.
func txNote(p *Pass) string {
	if p.Group.Explicit && p.Group.Body == "" {
		return " (COMMIT does not undo it)"
	}
	return ""
}

// PgSettingsUpdate reports whether n is an UPDATE of pg_settings, which
// changes a setting like set_config(…, false), and the setting's name
// (lower-case) when its WHERE clause says name = 'constant'.
func PgSettingsUpdate(n *pg.Node) (name string, ok bool) {
	up := n.GetUpdateStmt()
	if up == nil || !isPgSettings(up.Relation) {
		return "", false
	}
	return settingNameFromWhere(up.WhereClause), true
}

func isPgSettings(rv *pg.RangeVar) bool {
	if rv == nil || strings.ToLower(rv.Relname) != "pg_settings" {
		return false
	}
	s := strings.ToLower(rv.Schemaname)
	return s == "" || s == "pg_catalog"
}

// settingNameFromWhere finds name = 'x' in an UPDATE pg_settings WHERE
// clause.
func settingNameFromWhere(w *pg.Node) string {
	e := w.GetAExpr()
	if e == nil || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "=" {
		return ""
	}
	for _, pair := range [][2]*pg.Node{{e.Lexpr, e.Rexpr}, {e.Rexpr, e.Lexpr}} {
		if cr := pair[0].GetColumnRef(); cr != nil && len(cr.Fields) > 0 &&
			strings.ToLower(cr.Fields[len(cr.Fields)-1].GetString_().GetSval()) == "name" {
			if v, ok := ConstString(pair[1]); ok {
				return strings.ToLower(v)
			}
		}
	}
	return ""
}
