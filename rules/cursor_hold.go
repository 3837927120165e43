package rules

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// CursorWithHold flags DECLARE … WITH HOLD.
var CursorWithHold = &Rule{
	ID:       "cursor-with-hold",
	Title:    "WITH HOLD cursor outlives the transaction",
	Severity: Error,
	Fix:      "declare the cursor without HOLD and fetch from it inside one transaction, or CLOSE it before COMMIT; for paging across requests use keyset pagination",
	Check:    checkCursorWithHold,
}

func checkCursorWithHold(p *Pass) {
	h, note := p.Target.Handle(StateHoldCursor)
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// A cursor declared in an aborted transaction is gone, and
			// PREPARE TRANSACTION refuses a transaction that declared a
			// WITH HOLD cursor (it rolls back).
			continue
		}
		for _, e := range st.Changes() {
			if e.Kind != effects.DeclareHold {
				continue
			}
			if closedLater(p.Group, i, e.Name) {
				if k := firstClose(p.Group, i, e.Name); bodyCommitBetween(p.Group, i, k) {
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

// firstClose returns the index of the first statement after the i-th that
// closes the named cursor (or all cursors), or len(g.Stmts).
func firstClose(g *Group, i int, name string) int {
	for k := i + 1; k < len(g.Stmts); k++ {
		for _, e := range g.Stmts[k].Changes() {
			if e.Kind == effects.CloseAll || e.Kind == effects.CloseCursor && strings.EqualFold(e.Name, name) {
				return k
			}
		}
	}
	return len(g.Stmts)
}
