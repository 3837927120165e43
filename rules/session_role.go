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

// roleBreaks says what breaks when a change to role stays on the server
// connection.
func roleBreaks(role string) string {
	return "the next client of this connection runs as " + roleName(role) + ", and the client's own later transactions may run without it"
}

// roleName names a role for a message.
func roleName(role string) string {
	if role == "" {
		return "that role"
	}
	return "role " + role
}

func checkSessionRole(p *Pass) {
	h, note := p.Target.Handle(StateRole)
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) {
			continue // ROLLBACK undoes SET ROLE
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
				role := ""
				if len(vs.Args) == 1 {
					role, _ = ConstString(vs.Args[0])
				}
				p.Report(st, -1, Adjust(Critical, h), StateMessage(what+" "+role+" switches the server connection to "+roleName(role)+" for the rest of the session"+txNote(p), roleBreaks(role), h, note), "")
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
			role, _ := ConstString(c.Args[1])
			local, known := ConstBool(c.Args[2])
			switch {
			case known && local, resetLater(p.Group, i, name):
			case !known:
				p.Report(st, c.Location, Adjust(Warning, h), StateMessage(fmt.Sprintf("set_config('%s', …, is_local) switches the server connection to %s for the rest of the session when is_local is false at run time", name, roleName(role))+txNote(p), roleBreaks(role), h, note), "")
			default:
				p.Report(st, c.Location, Adjust(Critical, h), StateMessage(fmt.Sprintf("set_config('%s', …, false) switches the server connection to %s for the rest of the session", name, roleName(role))+txNote(p), roleBreaks(role), h, note), "")
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
