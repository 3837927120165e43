package rules

import "github.com/pgpoolcheck/pgpoolcheck/rules/effects"

// Listen flags LISTEN.
var Listen = &Rule{
	ID:       "listen",
	Title:    "LISTEN registers the server connection, not the client",
	Severity: Error,
	Fix:      "listen on a dedicated connection that bypasses the pooler (or a session-mode pool); NOTIFY and pg_notify() are safe through it",
	Check:    checkListen,
}

func checkListen(p *Pass) {
	h, note := p.Target.Handle(effects.Listen)
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// LISTEN takes effect at COMMIT; an aborted one never does, and
			// PREPARE TRANSACTION refuses a transaction that ran LISTEN or
			// UNLISTEN (it rolls back).
			continue
		}
		for j, e := range st.Changes() {
			step := pairs.stepOf(i, j)
			switch e.Kind {
			case effects.Listen:
				if _, ok := pairs.endedAfter(step.Held, i); ok {
					continue // an UNLISTEN later in the transaction cancels it
				}
				p.Report(st, -1, Adjust(Error, h), StateMessage("LISTEN "+e.Name+" subscribes the server connection, not the client",
					"notifications arrive on it after this transaction, so this client misses them and the next client of the connection receives them", h, note), "")
			case effects.Unlisten, effects.UnlistenAll:
				if len(step.Ended) > 0 {
					continue // cancels a LISTEN of the same transaction
				}
				ch := e.Name
				if ch == "" {
					ch = "*"
				}
				p.Report(st, -1, Info, StateMessage("UNLISTEN "+ch+" acts on whichever server connection this transaction gets, not necessarily the one that ran LISTEN",
					"that connection stays subscribed", h, note), "")
			}
		}
	}
}
