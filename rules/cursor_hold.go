package rules

import (
	"fmt"
	"strings"
)

// cursorOptHold is CURSOR_OPT_HOLD from PostgreSQL's parsenodes.h; the bit
// masks keep their C values in pg_query's tree.
const cursorOptHold = 0x20

// CursorWithHold flags DECLARE … WITH HOLD.
var CursorWithHold = &Rule{
	ID:       "cursor-with-hold",
	Title:    "WITH HOLD cursor outlives the transaction",
	Severity: Error,
	Fix:      "declare the cursor without HOLD and fetch from it inside one transaction, or CLOSE it before COMMIT; for paging across requests use keyset pagination",
	Check:    checkCursorWithHold,
}

func checkCursorWithHold(p *Pass) {
	if p.Group.RolledBack() {
		return // a cursor declared in an aborted transaction is gone
	}
	h, note := p.Target.Handle(StateHoldCursor)
	for i, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		d := st.Node.GetDeclareCursorStmt()
		if d == nil || d.Options&cursorOptHold == 0 {
			continue
		}
		if p.Group.Explicit && closedLater(p.Group.Stmts[i+1:], d.Portalname) {
			continue
		}
		p.Report(st, -1, Adjust(Error, h), StateMessage(fmt.Sprintf("cursor %s is declared WITH HOLD and survives COMMIT on the server connection", d.Portalname),
			"the client's FETCH in a later transaction may run on a connection where it does not exist, and the open cursor and its memory stay with the next client of this one", h, note), "")
	}
}

// closedLater reports whether one of stmts closes the named cursor.
func closedLater(stmts []*Stmt, name string) bool {
	for _, st := range stmts {
		if st.Node == nil {
			continue
		}
		if c := st.Node.GetClosePortalStmt(); c != nil && (c.Portalname == "" || strings.EqualFold(c.Portalname, name)) {
			return true
		}
	}
	return false
}
