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
	kind     string // "table", "view", "sequence", "function", "type", "domain", …
	rel      *pg.RangeVar
	name     string
	onCommit pg.OnCommitAction
	loc      int32
}

// createdTemp returns the temporary object a statement creates, if any.
func createdTemp(n *pg.Node) (tempTarget, bool) {
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
		if inPgTemp(f.Funcname) {
			kind := "function"
			if f.IsProcedure {
				kind = "procedure"
			}
			return tempTarget{kind, nil, lastName(f.Funcname), 0, -1}, true
		}
	case n.GetCompositeTypeStmt() != nil:
		// CREATE TYPE pg_temp.t AS (…)
		if rv := n.GetCompositeTypeStmt().Typevar; isTemp(rv) {
			return tempTarget{"type", rv, rv.Relname, 0, rv.Location}, true
		}
	case n.GetCreateDomainStmt() != nil:
		if d := n.GetCreateDomainStmt(); inPgTemp(d.Domainname) {
			return tempTarget{"domain", nil, lastName(d.Domainname), 0, -1}, true
		}
	case n.GetCreateEnumStmt() != nil:
		if e := n.GetCreateEnumStmt(); inPgTemp(e.TypeName) {
			return tempTarget{"type", nil, lastName(e.TypeName), 0, -1}, true
		}
	case n.GetCreateRangeStmt() != nil:
		if r := n.GetCreateRangeStmt(); inPgTemp(r.TypeName) {
			return tempTarget{"type", nil, lastName(r.TypeName), 0, -1}, true
		}
	case n.GetDefineStmt() != nil:
		// CREATE OPERATOR / AGGREGATE / TYPE / COLLATION / TEXT SEARCH … in
		// pg_temp.
		if d := n.GetDefineStmt(); inPgTemp(d.Defnames) {
			return tempTarget{defineKind(d.Kind), nil, lastName(d.Defnames), 0, -1}, true
		}
	}
	return tempTarget{}, false
}

// CreatedTemp reports the temporary object statement n creates, if any:
// its kind ("table", "view", "sequence", "function", …), its name, and its
// ON COMMIT action (ONCOMMIT_DROP: dropped at the end of the transaction).
func CreatedTemp(n *pg.Node) (kind, name string, onCommit pg.OnCommitAction, ok bool) {
	t, ok := createdTemp(n)
	return t.kind, t.name, t.onCommit, ok
}

// IsTemp reports whether a relation is temporary: TEMP/TEMPORARY, or
// named in schema pg_temp.
func IsTemp(rv *pg.RangeVar) bool { return isTemp(rv) }

// inPgTemp reports whether a qualified name (schema, name) or (catalog,
// schema, name) puts the object in the session's temporary schema.
func inPgTemp(names []*pg.Node) bool {
	return len(names) > 1 && strings.EqualFold(names[len(names)-2].GetString_().GetSval(), "pg_temp")
}

// defineKind names the kind of object a DefineStmt creates.
func defineKind(k pg.ObjectType) string {
	switch k {
	case pg.ObjectType_OBJECT_OPERATOR:
		return "operator"
	case pg.ObjectType_OBJECT_AGGREGATE:
		return "aggregate"
	case pg.ObjectType_OBJECT_COLLATION:
		return "collation"
	case pg.ObjectType_OBJECT_TYPE:
		return "type"
	case pg.ObjectType_OBJECT_TSCONFIGURATION:
		return "text search configuration"
	case pg.ObjectType_OBJECT_TSDICTIONARY:
		return "text search dictionary"
	case pg.ObjectType_OBJECT_TSPARSER:
		return "text search parser"
	case pg.ObjectType_OBJECT_TSTEMPLATE:
		return "text search template"
	}
	return "object"
}

// isTemp reports whether a relation is temporary: TEMP/TEMPORARY, or
// created in schema pg_temp.
func isTemp(rv *pg.RangeVar) bool {
	return rv != nil && (rv.Relpersistence == "t" || strings.EqualFold(rv.Schemaname, "pg_temp"))
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
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// ROLLBACK drops what the transaction created; PREPARE
			// TRANSACTION of a transaction that created a temporary
			// object fails and rolls it back.
			continue
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
