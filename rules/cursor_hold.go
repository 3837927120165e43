package rules

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// CursorWithHold flags DECLARE … WITH HOLD.
var CursorWithHold = &Rule{
	ID:       "cursor-with-hold",
	Title:    "WITH HOLD cursor outlives the transaction",
	Severity: Error,
	Fix:      "declare the cursor without HOLD and fetch from it inside one transaction, or CLOSE it before COMMIT; for paging across requests use keyset pagination",
	Check:    checkCursorWithHold,
	Crossed:  crossedUse,
}

func checkCursorWithHold(p *Pass) {
	h, note := p.Target.Handle(effects.DeclareHold)
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// A cursor declared in an aborted transaction is gone, and
			// PREPARE TRANSACTION refuses a transaction that declared a
			// WITH HOLD cursor (it rolls back).
			continue
		}
		for j, e := range st.Changes() {
			if e.Kind != effects.DeclareHold {
				continue
			}
			if k, closed := pairs.endedAfter(pairs.stepOf(i, j).Held, i); closed {
				if bodyCommitBetween(p.Group, i, k) {
					p.Report(st, -1, Adjust(Warning, h), StateMessage(fmt.Sprintf("cursor %s is declared WITH HOLD and closed only after a COMMIT of the procedure", e.Name),
						"an error in a transaction between them ends the call before the CLOSE, so the open cursor stays with the server connection, held for its next client, and a retry there fails because the cursor already exists", h, note), "")
				}
				continue
			}
			p.Report(st, -1, Adjust(Error, h), StateMessage(fmt.Sprintf("cursor %s is declared WITH HOLD and survives COMMIT on the server connection", e.Name),
				"the client's FETCH in a later transaction may run on a connection where it does not exist, and the open cursor and its memory stay with the next client of this one", h, note), "")
		}
	}
}
