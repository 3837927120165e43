package effects

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

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

// inPgTemp reports whether a qualified name (schema, name) or (catalog,
// schema, name) puts the object in the session's temporary schema.
func inPgTemp(names []*pg.Node) bool {
	return len(names) > 1 && isPgTemp(names[len(names)-2].GetString_().GetSval())
}

// defineKind names the kind of object a DefineStmt creates.
func defineKind(k pg.ObjectType) string {
	if kind := dropObjects[k]; kind != "" {
		return kind
	}
	return "object"
}

// isTemp reports whether a relation is temporary: TEMP/TEMPORARY, or
// created in schema pg_temp.
func isTemp(rv *pg.RangeVar) bool {
	return rv != nil && (rv.Relpersistence == "t" || isPgTemp(rv.Schemaname))
}

func lastName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

// PgSettingsUpdate reports whether n is an UPDATE of pg_settings, which
// changes a setting like set_config(…, false), and the setting's name
// (lower-case) when its WHERE clause says name = 'constant'.
func PgSettingsUpdate(n *pg.Node) (name string, ok bool) {
	up := n.GetUpdateStmt()
	if up == nil || !isPgSettings(up.Relation) {
		return "", false
	}
	return settingNameFromWhere(up.WhereClause), true
}

func isPgSettings(rv *pg.RangeVar) bool {
	if rv == nil || strings.ToLower(rv.Relname) != "pg_settings" {
		return false
	}
	s := strings.ToLower(rv.Schemaname)
	return s == "" || s == "pg_catalog"
}

// settingNameFromWhere finds name = 'x' in an UPDATE pg_settings WHERE
// clause.
func settingNameFromWhere(w *pg.Node) string {
	e := w.GetAExpr()
	if e == nil || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "=" {
		return ""
	}
	for _, pair := range [][2]*pg.Node{{e.Lexpr, e.Rexpr}, {e.Rexpr, e.Lexpr}} {
		if cr := pair[0].GetColumnRef(); cr != nil && len(cr.Fields) > 0 &&
			strings.ToLower(cr.Fields[len(cr.Fields)-1].GetString_().GetSval()) == "name" {
			if v, ok := ConstString(pair[1]); ok {
				return strings.ToLower(v)
			}
		}
	}
	return ""
}
