package rules

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
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
	Crossed:  crossedParam,
	Settings: sessionSettings,

	judgeSetting: judgeSessionSetting,
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

// What breaks when a parameter change stays on the server connection.
const (
	setBreaks   = "the client's later transactions may run without it and the next client of this server connection inherits it"
	resetBreaks = "the connection the earlier SET changed keeps the setting for its next client"
)

func checkSessionSet(p *Pass) {
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) {
			continue // ROLLBACK undoes SET, SET SESSION and set_config(…, false)
		}
		characteristics := false
		for j, e := range st.Changes() {
			if e.Local {
				continue // SET LOCAL, set_config(…, true): this transaction only
			}
			switch e.Kind {
			case effects.SetParam:
				switch e.Via {
				case effects.ViaSet:
					if !pairs.resetAfter(i, j) {
						reportParam(p, st, -1, e.Name, Error, "SET "+e.Name+" lasts for the rest of the session"+txNote(p), setBreaks)
					}
				case effects.ViaCharacteristics:
					if !characteristics {
						characteristics = true
						reportParam(p, st, -1, "default_transaction_isolation", Error,
							"SET SESSION CHARACTERISTICS AS TRANSACTION changes the defaults of every later transaction of the session"+txNote(p), setBreaks)
					}
				case effects.ViaPgSettings:
					what := "UPDATE pg_settings"
					if e.Name != "" {
						what += " of " + e.Name
					}
					reportParam(p, st, e.Location, e.Name, Error, what+" changes the setting for the rest of the session, like set_config(…, false)"+txNote(p), setBreaks)
				case effects.ViaSetConfig:
					label := "set_config(…"
					if e.Name != "" {
						label = fmt.Sprintf("set_config('%s'", e.Name)
					}
					switch {
					case e.Name != "" && pairs.resetAfter(i, j):
					case e.MaybeLocal:
						reportParam(p, st, e.Location, e.Name, Warning, label+", …, is_local) lasts for the rest of the session when is_local is false at run time"+txNote(p), setBreaks)
					default:
						reportParam(p, st, e.Location, e.Name, Error, label+", …, false) lasts for the rest of the session"+txNote(p), setBreaks)
					}
				}
			case effects.ResetParam:
				if len(pairs.stepOf(i, j).Ended) > 0 {
					continue // undoes a change of the same transaction
				}
				what := "RESET " + e.Name
				if e.Via == effects.ViaSetDefault {
					what = "SET " + e.Name + " TO DEFAULT"
				}
				reportParam(p, st, -1, e.Name, Warning, what+" acts on whichever server connection this transaction gets, not necessarily the one an earlier SET changed", resetBreaks)
			case effects.ResetAll:
				if len(pairs.stepOf(i, j).Ended) == 0 {
					reportParam(p, st, -1, "", Warning, "RESET ALL acts on whichever server connection this transaction gets, not necessarily the one the earlier SETs changed", resetBreaks)
				}
			}
		}
	}
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
	h, note := t.HandleParam(name)
	if base == Error && h == Breaks && isSecurityParam(name) {
		base = Critical
		breaks += " (a security leak: this setting decides what a client sees or which checks run)"
	}
	return Adjust(base, h), StateMessage(what, breaks, h, note)
}

// sessionParamChange rates, as session-set rates a SET, a session-level
// change of parameter name (lower-case) that a driver call or a
// connection setting makes on the server connection: it returns the
// severity behind target t and the message, which starts with what.
func sessionParamChange(t Target, name, what string) (Severity, string) {
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
