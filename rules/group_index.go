package rules

import (
	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// groupIndex holds facts about a group's statements that rules look up
// for many statements (has a sequence advanced before?), computed once
// per group so that a large transaction is not scanned once per
// statement. What a statement makes and ends is the group's pairing.
type groupIndex struct {
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
	x := &groupIndex{firstAdvance: map[string]int{}}
	g.idx = x
	firstOf := func(m map[string]int, key string, i int) {
		if _, ok := m[key]; !ok {
			m[key] = i
		}
	}
	for i, st := range g.Stmts {
		if st.Node == nil {
			continue
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
