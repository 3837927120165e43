package rules

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// TempTable flags temporary objects.
var TempTable = &Rule{
	ID:       "temp-table",
	Title:    "temporary object outlives the transaction",
	Severity: Error,
	Fix:      "create the temporary table inside BEGIN … COMMIT with ON COMMIT DROP, or use a regular (unlogged) table, a CTE or a subquery",
	Check:    checkTempTable,
	Crossed:  crossedUse,
}

func checkTempTable(p *Pass) {
	h, note := p.Target.Handle(effects.CreateTemp)
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// ROLLBACK drops what the transaction created; PREPARE
			// TRANSACTION of a transaction that created a temporary
			// object fails and rolls it back.
			continue
		}
		for j, t := range st.Changes() {
			if t.Kind != effects.CreateTemp {
				continue
			}
			what := fmt.Sprintf("temporary %s %s", t.Object, t.Name)
			switch {
			case t.Local:
				// ON COMMIT DROP: dropped at the COMMIT of the transaction
				// that made it (in autocommit, at the end of the statement).
				continue
			case dropped(pairs, i, j):
				continue // created and dropped (or DISCARD TEMP) in one transaction
			case t.DeleteRows:
				what += " with ON COMMIT DELETE ROWS loses its rows at COMMIT but lives until the session ends"
			default:
				what += " lives until the session ends"
			}
			p.Report(st, t.Location, Adjust(Error, h), StateMessage(what,
				"the client's later transactions may run on a server connection without it, and the next client of this one sees it (or fails to create its own)", h, note), "")
		}
	}
}

// dropped reports whether the temporary object made by the j-th change of
// statement i is dropped later in the group.
func dropped(pairs *pairing, i, j int) bool {
	_, ok := pairs.endedAfter(pairs.stepOf(i, j).Held, i)
	return ok
}
