package analyzer

import (
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/classify"
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
	closeAll bool

	prepares   []string
	executes   []string
	deallocs   []string
	deallocAll bool

	nextvals []string // sequence keys (see rules.ConstKey)
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

// trafficFuncs are the functions whose calls facts looks at (see
// rules/classify): a statement whose text names one of them is walked
// for calls.
var trafficFuncs = []string{
	"set_config", "current_setting",
	"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
	"pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all",
	"nextval", "currval", "lastval",
}

// statementFacts computes the facts of a parsed statement from the one
// model of what statements do to session state (rules/classify).
func statementFacts(st *rules.Stmt) *facts {
	f := &facts{}
	if st.Node == nil {
		return f
	}
	for _, e := range classify.Statement(st.Statement) {
		switch e.Kind {
		case classify.SetParam:
			if e.Local {
				continue
			}
			name := e.Name
			if name == "" {
				name = "?"
			}
			f.sets = append(f.sets, name)
		case classify.ResetParam:
			f.resets = append(f.resets, e.Name)
		case classify.ResetAll:
			f.resetAll = true
		case classify.SetRole, classify.SessionAuth:
			if !e.Local {
				f.role = true
			}
		case classify.ResetRole, classify.ResetSessionAuth:
			f.resetRole = true
		case classify.ReadParam:
			f.reads = append(f.reads, e.Name)
		case classify.AdvisoryLock:
			f.locks = append(f.locks, e.Arg)
		case classify.AdvisoryUnlock:
			f.unlocks = append(f.unlocks, e.Arg)
		case classify.AdvisoryUnlockAll:
			f.unlockAll = true
		case classify.Listen:
			f.listens = append(f.listens, e.Name)
		case classify.Unlisten:
			f.unlistens = append(f.unlistens, e.Name)
		case classify.UnlistenAll:
			f.unlistenAll = true
		case classify.CreateTemp:
			f.temps = append(f.temps, tempMade{e.Name, e.Local})
		case classify.DropTemp:
			f.drops = append(f.drops, e.Name)
		case classify.Relation:
			f.rels = append(f.rels, e.Name)
		case classify.DeclareHold:
			f.holds = append(f.holds, e.Name)
		case classify.UseCursor, classify.CloseCursor:
			f.cursors = append(f.cursors, e.Name)
		case classify.CloseAll:
			f.closeAll = true
		case classify.Prepare:
			f.prepares = append(f.prepares, e.Name)
		case classify.ExecutePrepared:
			f.executes = append(f.executes, e.Name)
		case classify.Deallocate:
			f.deallocs = append(f.deallocs, e.Name)
		case classify.DeallocateAll:
			f.deallocAll = true
		case classify.NextVal:
			f.nextvals = append(f.nextvals, e.Arg)
		case classify.CurrVal:
			f.currvals = append(f.currvals, e.Arg)
		case classify.LastVal:
			f.lastval = true
		case classify.Insert:
			f.insert = true
		case classify.DiscardAll:
			f.discardAll = true
		case classify.DiscardTemp:
			f.discardTemp = true
		case classify.TxRollback:
			f.rollback = true
		case classify.TxRollbackTo:
			f.rollbackTo = true
		case classify.TxEnd:
			f.ends = true
		}
	}
	return f
}
