package rules

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// SessionRole flags statements that change the session's role.
var SessionRole = &Rule{
	ID:       "session-role",
	Title:    "session-level SET ROLE or SET SESSION AUTHORIZATION",
	Severity: Critical,
	Security: true,
	Fix:      "use SET LOCAL ROLE inside the transaction that needs it (or set_config('role', …, true)), or connect as that role",
	Funcs:    []string{"set_config"},
	Check:    checkSessionRole,
}

// roleBreaks is what breaks when a role change stays on the connection.
const roleBreaks = "the next client of this server connection runs with its privileges, and the client's later transactions may run without them"

func checkSessionRole(p *Pass) {
	if p.Group.RolledBack() {
		return // ROLLBACK undoes SET ROLE
	}
	h, note := p.Target.Handle(StateRole)
	for i, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		if vs := st.Node.GetVariableSetStmt(); vs != nil && !vs.IsLocal && isRoleParam(strings.ToLower(vs.Name)) && !pairedSet(p.Group, i, vs) {
			what := "SET ROLE"
			if strings.EqualFold(vs.Name, "session_authorization") {
				what = "SET SESSION AUTHORIZATION"
			}
			switch {
			case vs.Kind == pg.VariableSetKind_VAR_RESET || vs.Kind == pg.VariableSetKind_VAR_SET_DEFAULT || isRoleNone(vs):
				// Going back to the session user: like an unlock alone.
				switch {
				case vs.Kind == pg.VariableSetKind_VAR_RESET:
					what = "RE" + what
				case vs.Kind == pg.VariableSetKind_VAR_SET_DEFAULT:
					what += " DEFAULT"
				default:
					what += " NONE"
				}
				p.Report(st, -1, Adjust(Warning, h), StateMessage(what+" acts on whichever server connection this transaction gets, not necessarily the one the earlier change was made on",
					"that connection keeps the changed privileges for its next client", h, note), "")
			case vs.Kind == pg.VariableSetKind_VAR_SET_VALUE:
				p.Report(st, -1, Adjust(Critical, h), StateMessage(what+" changes the privileges of the server connection for the rest of the session"+txNote(p), roleBreaks, h, note), "")
			}
		}
		for _, c := range st.CallsNamed("set_config") {
			if len(c.Args) != 3 {
				continue
			}
			name, ok := ConstString(c.Args[0])
			name = strings.ToLower(name)
			if !ok || !isRoleParam(name) {
				continue
			}
			local, known := ConstBool(c.Args[2])
			switch {
			case known && local, resetLater(p.Group, i, name):
			case !known:
				p.Report(st, c.Location, Adjust(Warning, h), StateMessage(fmt.Sprintf("set_config('%s', …, is_local) changes the privileges of the server connection for the rest of the session when is_local is false at run time", name)+txNote(p), roleBreaks, h, note), "")
			default:
				p.Report(st, c.Location, Adjust(Critical, h), StateMessage(fmt.Sprintf("set_config('%s', …, false) changes the privileges of the server connection for the rest of the session", name)+txNote(p), roleBreaks, h, note), "")
			}
		}
	}
}

// isRoleNone reports SET ROLE NONE, which goes back to the session user.
func isRoleNone(vs *pg.VariableSetStmt) bool {
	if vs.Kind != pg.VariableSetKind_VAR_SET_VALUE || !strings.EqualFold(vs.Name, "role") || len(vs.Args) != 1 {
		return false
	}
	v, ok := ConstString(vs.Args[0])
	return ok && strings.EqualFold(v, "none")
}
