package rules

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// TempTable flags temporary objects.
var TempTable = &Rule{
	ID:       "temp-table",
	Title:    "temporary object outlives the transaction",
	Severity: Error,
	Fix:      "create the temporary table inside BEGIN … COMMIT with ON COMMIT DROP, or use a regular (unlogged) table, a CTE or a subquery",
	Check:    checkTempTable,
}

// tempTarget describes a relation created by a statement.
type tempTarget struct {
	kind     string // "table", "view", "sequence", "function"
	rel      *pg.RangeVar
	name     string
	onCommit pg.OnCommitAction
	loc      int32
}

// createdTemp returns the temporary object a statement creates, if any.
func createdTemp(n *pg.Node) (tempTarget, bool) {
	isTemp := func(rv *pg.RangeVar) bool {
		return rv != nil && (rv.Relpersistence == "t" || strings.EqualFold(rv.Schemaname, "pg_temp"))
	}
	switch {
	case n.GetCreateStmt() != nil:
		c := n.GetCreateStmt()
		if isTemp(c.Relation) {
			return tempTarget{"table", c.Relation, c.Relation.Relname, c.Oncommit, c.Relation.Location}, true
		}
	case n.GetCreateTableAsStmt() != nil:
		c := n.GetCreateTableAsStmt()
		if c.Into != nil && isTemp(c.Into.Rel) {
			kind := "table"
			if c.Objtype == pg.ObjectType_OBJECT_MATVIEW {
				kind = "materialized view"
			}
			return tempTarget{kind, c.Into.Rel, c.Into.Rel.Relname, c.Into.OnCommit, c.Into.Rel.Location}, true
		}
	case n.GetSelectStmt() != nil:
		s := n.GetSelectStmt()
		if s.IntoClause != nil && isTemp(s.IntoClause.Rel) {
			return tempTarget{"table", s.IntoClause.Rel, s.IntoClause.Rel.Relname, s.IntoClause.OnCommit, s.IntoClause.Rel.Location}, true
		}
	case n.GetViewStmt() != nil:
		v := n.GetViewStmt()
		if isTemp(v.View) {
			return tempTarget{"view", v.View, v.View.Relname, 0, v.View.Location}, true
		}
	case n.GetCreateSeqStmt() != nil:
		s := n.GetCreateSeqStmt()
		if isTemp(s.Sequence) {
			return tempTarget{"sequence", s.Sequence, s.Sequence.Relname, 0, s.Sequence.Location}, true
		}
	case n.GetCreateFunctionStmt() != nil:
		f := n.GetCreateFunctionStmt()
		if len(f.Funcname) > 1 && strings.EqualFold(f.Funcname[0].GetString_().GetSval(), "pg_temp") {
			kind := "function"
			if f.IsProcedure {
				kind = "procedure"
			}
			return tempTarget{kind, nil, lastName(f.Funcname), 0, -1}, true
		}
	}
	return tempTarget{}, false
}

func lastName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

func checkTempTable(p *Pass) {
	h, note := p.Target.Handle(StateTempObject)
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) {
			continue // ROLLBACK drops what the transaction created
		}
		t, ok := createdTemp(st.Node)
		if !ok {
			continue
		}
		what := fmt.Sprintf("temporary %s %s", t.kind, t.name)
		switch {
		case t.onCommit == pg.OnCommitAction_ONCOMMIT_DROP:
			// Dropped at the COMMIT of the transaction that made it (in
			// autocommit, at the end of the statement).
			continue
		case droppedLater(p.Group, i, t.name):
			continue // created and dropped in one transaction
		case t.onCommit == pg.OnCommitAction_ONCOMMIT_DELETE_ROWS:
			what += " with ON COMMIT DELETE ROWS loses its rows at COMMIT but lives until the session ends"
		default:
			what += " lives until the session ends"
		}
		p.Report(st, t.loc, Adjust(Error, h), StateMessage(what,
			"the client's later transactions may run on a server connection without it, and the next client of this one sees it (or fails to create its own)", h, note), "")
	}
}
