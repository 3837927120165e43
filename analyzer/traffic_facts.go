package analyzer

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
// crossed a transaction boundary.
type facts struct {
	sets      []string // session-scoped parameters set (lower-case; "?" when unknown)
	resets    []string // parameters reset to their default
	resetAll  bool
	role      bool // SET ROLE / SET SESSION AUTHORIZATION / set_config('role', …, false)
	resetRole bool
	reads     []string // SHOW name, current_setting('name')

	locks     []string // advisory lock keys taken at session level
	unlocks   []string
	unlockAll bool

	listens     []string
	unlistens   []string
	unlistenAll bool

	temps    []tempMade // temporary objects created
	drops    []string   // tables, views and sequences dropped
	rels     []string   // relations referenced (unqualified or in pg_temp)
	holds    []string   // DECLARE … WITH HOLD
	cursors  []string   // FETCH, MOVE and CLOSE of a named cursor
	closes   []string   // CLOSE of a named cursor
	closeAll bool

	prepares   []string
	executes   []string
	deallocs   []string
	deallocAll bool

	nextvals []string // sequence keys (see effects.ConstKey)
	currvals []string
	lastval  bool
	insert   bool // an INSERT may call nextval() through a column default

	discardAll, discardTemp bool
	rollback                bool // ROLLBACK (not TO SAVEPOINT) or ABORT
	rollbackTo              bool // ROLLBACK TO SAVEPOINT: the transaction goes on after an error
	ends                    bool // COMMIT, ROLLBACK or PREPARE TRANSACTION (without AND CHAIN)
}

type tempMade struct {
	name       string
	commitDrop bool
}

// statementFacts computes the facts of a parsed statement from the one
// model of what statements do to session state (rules/effects).
func statementFacts(st *rules.Stmt) *facts {
	f := &facts{}
	if st.Node == nil {
		return f
	}
	all := append(append(slices.Clone(st.Changes()), st.Reads()...), st.Relations()...)
	for _, e := range all {
		switch e.Kind {
		case effects.SetParam:
			if e.Local {
				continue
			}
			name := e.Name
			if name == "" {
				name = "?"
			}
			f.sets = append(f.sets, name)
		case effects.ResetParam:
			f.resets = append(f.resets, e.Name)
		case effects.ResetAll:
			f.resetAll = true
		case effects.SetRole, effects.SessionAuth:
			if !e.Local {
				f.role = true
			}
		case effects.ResetRole, effects.ResetSessionAuth:
			f.resetRole = true
		case effects.ReadParam:
			f.reads = append(f.reads, e.Name)
		case effects.AdvisoryLock:
			f.locks = append(f.locks, e.Arg)
		case effects.AdvisoryUnlock:
			f.unlocks = append(f.unlocks, e.Arg)
		case effects.AdvisoryUnlockAll:
			f.unlockAll = true
		case effects.Listen:
			f.listens = append(f.listens, e.Name)
		case effects.Unlisten:
			f.unlistens = append(f.unlistens, e.Name)
		case effects.UnlistenAll:
			f.unlistenAll = true
		case effects.CreateTemp:
			f.temps = append(f.temps, tempMade{e.Name, e.Local})
		case effects.DropTemp:
			f.drops = append(f.drops, e.Name)
		case effects.Relation:
			f.rels = append(f.rels, e.Name)
		case effects.DeclareHold:
			f.holds = append(f.holds, e.Name)
		case effects.UseCursor:
			f.cursors = append(f.cursors, e.Name)
		case effects.CloseCursor:
			f.cursors = append(f.cursors, e.Name)
			f.closes = append(f.closes, e.Name)
		case effects.CloseAll:
			f.closeAll = true
		case effects.Prepare:
			f.prepares = append(f.prepares, e.Name)
		case effects.ExecutePrepared:
			f.executes = append(f.executes, e.Name)
		case effects.Deallocate:
			f.deallocs = append(f.deallocs, e.Name)
		case effects.DeallocateAll:
			f.deallocAll = true
		case effects.NextVal, effects.SetVal:
			f.nextvals = append(f.nextvals, e.Arg)
		case effects.CurrVal:
			f.currvals = append(f.currvals, e.Arg)
		case effects.LastVal:
			f.lastval = true
		case effects.Insert:
			f.insert = true
		case effects.DiscardAll:
			f.discardAll = true
		case effects.DiscardTemp:
			f.discardTemp = true
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
