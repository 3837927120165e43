package rules

import "github.com/pgpoolcheck/pgpoolcheck/rules/effects"

// Discard flags DISCARD sent by a client.
var Discard = &Rule{
	ID:       "discard",
	Title:    "DISCARD cleans whichever server connection it lands on",
	Severity: Info,
	Fix:      "leave connection cleanup to the pooler; if the application needs a clean session, do not keep session state in the first place",
	Check:    checkDiscard,
}

// discardTargets names what each kind of DISCARD cleans.
var discardTargets = map[effects.Kind]string{
	effects.DiscardAll: "ALL", effects.DiscardTemp: "TEMP",
	effects.DiscardPlans: "PLANS", effects.DiscardSequences: "SEQUENCES",
}

func checkDiscard(p *Pass) {
	_, note := p.Target.Handle(effects.DiscardAll)
	for _, st := range p.Group.Stmts {
		for _, e := range st.Changes() {
			if what, ok := discardTargets[e.Kind]; ok {
				p.Report(st, -1, Info, "DISCARD "+what+" cleans whichever server connection this transaction gets, not the ones this client used before; "+note, "")
			}
		}
	}
}
