package rules

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
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
	Crossed:  crossedParam,
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
	h, note := p.Target.Handle(effects.SetRole)
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) {
			continue // ROLLBACK undoes SET ROLE
		}
		for j, e := range st.Changes() {
			set := e.Kind == effects.SetRole || e.Kind == effects.SessionAuth
			reset := e.Kind == effects.ResetRole || e.Kind == effects.ResetSessionAuth
			if e.Local || !set && !reset || set && pairs.resetAfter(i, j) || reset && len(pairs.stepOf(i, j).Ended) > 0 {
				continue // transaction-scoped, or made and undone in one transaction
			}
			what := "SET ROLE"
			if e.Name == "session_authorization" {
				what = "SET SESSION AUTHORIZATION"
			}
			if e.Via == effects.ViaSetConfig {
				what = fmt.Sprintf("set_config('%s', …, false)", e.Name)
				if e.MaybeLocal {
					what = fmt.Sprintf("set_config('%s', …, is_local)", e.Name)
				}
			}
			if reset {
				// Going back to the session user: like an unlock alone.
				switch e.Via {
				case effects.ViaReset:
					what = "RE" + what
				case effects.ViaSetDefault:
					what += " DEFAULT"
				case effects.ViaSet:
					what += " NONE"
				case effects.ViaSetConfig:
					what = strings.Replace(what, "…", "'none'", 1)
				}
				p.Report(st, e.Location, Adjust(Warning, h), StateMessage(what+" acts on whichever server connection this transaction gets, not necessarily the one the earlier change was made on",
					"that connection keeps the changed privileges for its next client", h, note), "")
				continue
			}
			switch {
			case e.Via != effects.ViaSetConfig:
				p.Report(st, -1, Adjust(Critical, h), StateMessage(what+" "+e.Raw+" switches the server connection to "+roleName(e.Raw)+" for the rest of the session"+txNote(p), roleBreaks(e.Raw), h, note), "")
			case e.MaybeLocal:
				p.Report(st, e.Location, Adjust(Warning, h), StateMessage(what+" switches the server connection to "+roleName(e.Raw)+" for the rest of the session when is_local is false at run time"+txNote(p), roleBreaks(e.Raw), h, note), "")
			default:
				p.Report(st, e.Location, Adjust(Critical, h), StateMessage(what+" switches the server connection to "+roleName(e.Raw)+" for the rest of the session"+txNote(p), roleBreaks(e.Raw), h, note), "")
			}
		}
	}
}
