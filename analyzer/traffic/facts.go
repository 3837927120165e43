package traffic

import (
	"slices"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// facts are what one statement does to, or reads from, session state, as
// analyze follows it across a session's transactions. They depend only on
// the statement's text, so they are computed once per distinct text. The
// rules package decides whether a statement is a hazard; facts only say
// which names it touches, so that analyze can tell whether the state
// crossed a transaction boundary. What the statement makes and ends is
// its changes, which the session's effects.Session pairs.
type facts struct {
	changes []effects.Effect // in the order the statement makes them

	reads    []string // SHOW name, current_setting('name')
	rels     []string // relations referenced (unqualified or in pg_temp)
	cursors  []string // FETCH, MOVE and CLOSE of a named cursor
	executes []string // EXECUTE and DEALLOCATE of a prepared statement

	nextvals []string // sequence keys (see effects.ConstKey)
	currvals []string
	lastval  bool
	insert   bool // an INSERT may call nextval() through a column default

	rollback   bool // ROLLBACK (not TO SAVEPOINT) or ABORT
	rollbackTo bool // ROLLBACK TO SAVEPOINT: the transaction goes on after an error
	ends       bool // COMMIT, ROLLBACK or PREPARE TRANSACTION (without AND CHAIN)
}

// statementFacts computes the facts of a parsed statement from the one
// model of what statements do to session state (rules/effects).
func statementFacts(st *rules.Stmt) *facts {
	f := &facts{}
	if st.Node == nil {
		return f
	}
	for _, e := range st.Changes() {
		switch e.Kind {
		case effects.CallRoutine, effects.RoutineChange:
			continue // nothing the session holds
		case effects.CloseCursor:
			f.cursors = append(f.cursors, e.Name)
		case effects.Deallocate:
			f.executes = append(f.executes, e.Name)
		}
		f.changes = append(f.changes, e)
	}
	for _, e := range slices.Concat(st.Reads(), st.Relations()) {
		switch e.Kind {
		case effects.ReadParam:
			f.reads = append(f.reads, e.Name)
		case effects.Relation:
			f.rels = append(f.rels, e.Name)
		case effects.UseCursor:
			f.cursors = append(f.cursors, e.Name)
		case effects.ExecutePrepared:
			f.executes = append(f.executes, e.Name)
		case effects.NextVal, effects.SetVal:
			f.nextvals = append(f.nextvals, e.Arg)
		case effects.CurrVal:
			f.currvals = append(f.currvals, e.Arg)
		case effects.LastVal:
			f.lastval = true
		case effects.Insert:
			f.insert = true
		case effects.TxRollback:
			f.rollback = true
		case effects.TxRollbackTo:
			f.rollbackTo = true
		case effects.TxEnd:
			f.ends = true
		}
	}
	return f
}
