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

func checkSessionRole(p *Pass) {
	h, note := p.Target.Handle(StateRole)
	sev := Adjust(Critical, h)
	for _, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		if vs := st.Node.GetVariableSetStmt(); vs != nil && !vs.IsLocal {
			name := strings.ToLower(vs.Name)
			if (name == "role" || name == "session_authorization") &&
				(vs.Kind == pg.VariableSetKind_VAR_SET_VALUE || vs.Kind == pg.VariableSetKind_VAR_SET_DEFAULT) {
				what := "SET ROLE"
				if name == "session_authorization" {
					what = "SET SESSION AUTHORIZATION"
				}
				p.Report(st, -1, sev, fmt.Sprintf("%s changes the privileges of the server connection for the whole session%s: later clients of that connection run with them; %s", what, txNote(p), note), "")
			}
		}
		for _, c := range st.CallsNamed("set_config") {
			if len(c.Args) != 3 {
				continue
			}
			name, ok := ConstString(c.Args[0])
			name = strings.ToLower(name)
			if !ok || (name != "role" && name != "session_authorization") {
				continue
			}
			if local, known := ConstBool(c.Args[2]); known && local {
				continue
			}
			p.Report(st, c.Location, sev, fmt.Sprintf("set_config('%s', …, false) changes the privileges of the server connection for the whole session%s: later clients of that connection run with them; %s", name, txNote(p), note), "")
		}
	}
}
