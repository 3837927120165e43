package rules

import (
	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// groupIndex holds facts about a group's statements that rules look up
// for many statements (is this parameter reset later? was it set
// earlier?), computed once per group so that a large transaction is
// not scanned once per statement.
type groupIndex struct {
	// firstSet is the index of the first statement that sets a parameter
	// (SET or set_config with a constant name); "" holds the first of any
	// parameter but the role.
	firstSet map[string]int
	// lastReset is the index of the last statement that puts a parameter
	// back to its default (RESET, SET … TO DEFAULT, SET ROLE NONE); ""
	// holds the last RESET ALL.
	lastReset map[string]int
	// firstAdvance is the index of the first statement that may advance a
	// sequence: "insert" for INSERT and COPY (column defaults), "*" for a
	// nextval/setval of a sequence not named by a constant, "seq:NAME" for
	// one of sequence NAME, "any" for any of these calls.
	firstAdvance map[string]int
}

func (g *Group) index() *groupIndex {
	if g.idx != nil {
		return g.idx
	}
	x := &groupIndex{firstSet: map[string]int{}, lastReset: map[string]int{}, firstAdvance: map[string]int{}}
	g.idx = x
	firstOf := func(m map[string]int, key string, i int) {
		if _, ok := m[key]; !ok {
			m[key] = i
		}
	}
	first := func(name string, i int) {
		if _, ok := x.firstSet[name]; !ok {
			x.firstSet[name] = i
		}
		if !isRoleParam(name) {
			if _, ok := x.firstSet[""]; !ok {
				x.firstSet[""] = i
			}
		}
	}
	for i, st := range g.Stmts {
		if st.Node == nil {
			continue
		}
		// A cleanup that a ROLLBACK TO SAVEPOINT undoes cleans nothing.
		cleans := !g.Undone(i)
		for _, e := range st.Changes() {
			switch e.Kind {
			case effects.SetParam, effects.SetRole, effects.SessionAuth:
				if e.Name != "" {
					first(e.Name, i)
				}
			case effects.ResetParam, effects.ResetRole, effects.ResetSessionAuth:
				if cleans && !e.Local {
					x.lastReset[e.Name] = i
				}
			case effects.ResetAll:
				if cleans {
					x.lastReset[""] = i
				}
			}
		}
		for _, e := range st.Reads() {
			switch e.Kind {
			case effects.Insert:
				firstOf(x.firstAdvance, "insert", i)
			case effects.NextVal, effects.SetVal:
				firstOf(x.firstAdvance, "any", i)
				if e.Name != "" {
					firstOf(x.firstAdvance, "seq:"+e.Name, i)
				} else {
					firstOf(x.firstAdvance, "*", i)
				}
			}
		}
	}
	return x
}

// after reports whether m records an index greater than i under key.
func after(m map[string]int, key string, i int) bool {
	k, ok := m[key]
	return ok && k > i
}

// resetLater reports whether, in one transaction, a statement after the
// i-th puts parameter name back to its default. A change undone in the
// transaction that made it never reaches the pool. RESET ALL does not
// reset the role.
func resetLater(g *Group, i int, name string) bool {
	if !g.Explicit {
		return false
	}
	x := g.index()
	return after(x.lastReset, name, i) || !isRoleParam(name) && after(x.lastReset, "", i)
}

// setEarlier reports whether, in one transaction, a statement before the
// i-th sets parameter name (any parameter but the role when name is "").
func setEarlier(g *Group, i int, name string) bool {
	if !g.Explicit {
		return false
	}
	k, ok := g.index().firstSet[name]
	return ok && k < i
}

// bodyTxEnd reports whether the i-th statement of a routine body is a
// COMMIT or ROLLBACK of the procedure's own transaction control. The CALL
// keeps its server connection across it, but what a statement before it
// left on the session is held into the next transaction of the call.
func bodyTxEnd(g *Group, i int) bool {
	if g.Body == "" || i < 0 || i >= len(g.Stmts) {
		return false
	}
	ts := g.Stmts[i].txStmt()
	return ts != nil && (ts.Kind == pg.TransactionStmtKind_TRANS_STMT_COMMIT || ts.Kind == pg.TransactionStmtKind_TRANS_STMT_ROLLBACK)
}

// bodyCommitBetween reports whether a COMMIT or ROLLBACK of a procedure
// sits between the i-th and the j-th statement of its body.
func bodyCommitBetween(g *Group, i, j int) bool {
	for k := i + 1; k < j; k++ {
		if bodyTxEnd(g, k) {
			return true
		}
	}
	return false
}
