package rules

import "strings"

// Discard flags DISCARD sent by a client.
var Discard = &Rule{
	ID:       "discard",
	Title:    "DISCARD cleans whichever server connection it lands on",
	Severity: Info,
	Fix:      "leave connection cleanup to the pooler; if the application needs a clean session, do not keep session state in the first place",
	Check:    checkDiscard,
}

func checkDiscard(p *Pass) {
	_, note := p.Target.Handle(StateDiscard)
	for _, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		if d := st.Node.GetDiscardStmt(); d != nil {
			what := strings.TrimPrefix(d.Target.String(), "DISCARD_")
			p.Report(st, -1, Info, "DISCARD "+what+" cleans whichever server connection this transaction gets, not the ones this client used before; "+note, "")
		}
	}
}
