package rules

import (
	"sort"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// registry lists every rule, in catalogue order.
var registry = []*Rule{
	SessionSet,
	SessionRole,
	AdvisoryLockSession,
	Listen,
	TempTable,
	CursorWithHold,
	SQLPrepare,
	SessionLoad,
	SequenceSession,
	BackendPID,
	Discard,
	ProtocolPrepare,
	UnnamedStatementReuse,
	StartupParameter,
	IdleInTransaction,
	ParseError,
	BadIgnore,
	UnusedIgnore,
	InvalidEncoding,
	OtherDialect,
}

// All returns every rule in catalogue order.
func All() []*Rule { return registry }

// Lookup returns the rule with the given id, or nil.
func Lookup(id string) *Rule {
	for _, r := range registry {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// IDs returns every rule id, sorted.
func IDs() []string {
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.ID
	}
	sort.Strings(out)
	return out
}

// InterestingFuncs returns the union of Funcs of the given rules.
func InterestingFuncs(rs []*Rule) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rs {
		for _, f := range r.Funcs {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// covering maps kinds of effects (package effects) to the rule that
// reports them.
var covering = map[effects.Kind]*Rule{
	effects.SetParam: SessionSet, effects.ResetParam: SessionSet, effects.ResetAll: SessionSet,
	effects.SetRole: SessionRole, effects.ResetRole: SessionRole,
	effects.SessionAuth: SessionRole, effects.ResetSessionAuth: SessionRole,
	effects.AdvisoryLock: AdvisoryLockSession, effects.AdvisoryUnlock: AdvisoryLockSession,
	effects.AdvisoryUnlockAll: AdvisoryLockSession,
	effects.Listen:            Listen, effects.Unlisten: Listen, effects.UnlistenAll: Listen,
	effects.CreateTemp: TempTable, effects.DropTemp: TempTable,
	effects.DeclareHold: CursorWithHold, effects.CloseCursor: CursorWithHold, effects.CloseAll: CursorWithHold,
	effects.Prepare: SQLPrepare, effects.Deallocate: SQLPrepare, effects.DeallocateAll: SQLPrepare,
	effects.ExecutePrepared: SQLPrepare,
	effects.Load:            SessionLoad,
	effects.DiscardAll:      Discard, effects.DiscardTemp: Discard, effects.DiscardPlans: Discard,
	effects.DiscardSequences: Discard,
	effects.CurrVal:          SequenceSession, effects.LastVal: SequenceSession,
	effects.BackendIdentity: BackendPID,
}

// Covering returns the rule that reports effects of kind k, or nil for
// kinds no rule reports on their own (calls of routines, plain reads).
func Covering(k effects.Kind) *Rule { return covering[k] }
