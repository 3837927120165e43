package rules

import "github.com/pgpoolcheck/pgpoolcheck/rules/effects"

// SQLPrepare flags SQL-level prepared statements.
var SQLPrepare = &Rule{
	ID:       "sql-prepare",
	Title:    "PREPARE / EXECUTE / DEALLOCATE at the SQL level",
	Severity: Error,
	Fix:      "let the driver prepare statements over the extended protocol (which PgBouncer ≥ 1.21 and pgpoolcheck re-prepare per connection), or PREPARE and EXECUTE inside one transaction and DEALLOCATE before COMMIT",
	Check:    checkSQLPrepare,
	Crossed:  crossedUse,
}

func checkSQLPrepare(p *Pass) {
	h, note := p.Target.Handle(effects.Prepare)
	sev := Adjust(Error, h)
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		for j, e := range st.Changes() {
			step := pairs.stepOf(i, j)
			switch {
			case e.Kind == effects.Prepare:
				if _, ok := pairs.endedAfter(step.Held, i); ok {
					continue // prepared, used and deallocated in one transaction
				}
				p.Report(st, -1, sev, StateMessage("PREPARE "+e.Name+" creates the statement on the server connection, not for the client",
					"the client's EXECUTE in a later transaction may run on a connection without it, and the next client of this one gets \"already exists\" when it prepares the same name", h, note), "")
			case e.Kind != effects.Deallocate && e.Kind != effects.DeallocateAll:
			case len(step.Ended) > 0:
				continue // runs on the connection that prepared it
			case e.Kind == effects.DeallocateAll:
				p.Report(st, -1, Info, StateMessage("DEALLOCATE ALL acts on whichever server connection this transaction gets, not necessarily the ones this client prepared statements on",
					"those keep their statements", h, note), "")
			default:
				p.Report(st, -1, sev, StateMessage("DEALLOCATE "+e.Name+" may run on a server connection that never prepared it",
					"it then fails, and the connection that did keeps the statement", h, note), "")
			}
		}
		for _, e := range st.Reads() {
			if e.Kind != effects.ExecutePrepared || pairs.holds(effects.Prepare, e.Name, i) {
				continue // runs on the connection that prepared it
			}
			p.Report(st, -1, sev, StateMessage("EXECUTE "+e.Name+" needs a statement prepared earlier on the same server connection",
				"in a transaction of its own it may run on a connection where it does not exist, or where another client prepared a different statement under that name", h, note), "")
		}
	}
}
