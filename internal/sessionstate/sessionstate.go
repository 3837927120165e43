// Package sessionstate connects the pooler to the rules package: it
// implements pooler.StateClassifier with rules/classify.
package sessionstate

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/classify"
)

// Classifier fills the pooler's StateClassifier from the rules
// package: the pooler stays free of SQL semantics, the classifier of the
// pooler's types.
type Classifier struct{ c *classify.Classifier }

func New() Classifier {
	return Classifier{classify.New(classify.Options{})}
}

var stateKinds = map[classify.Kind]pooler.StateKind{
	classify.SetParam:          pooler.StateSet,
	classify.ResetParam:        pooler.StateReset,
	classify.ResetAll:          pooler.StateResetAll,
	classify.SetRole:           pooler.StateRole,
	classify.ResetRole:         pooler.StateRole,
	classify.SessionAuth:       pooler.StateRole,
	classify.ResetSessionAuth:  pooler.StateRole,
	classify.AdvisoryLock:      pooler.StateLock,
	classify.AdvisoryUnlock:    pooler.StateUnlock,
	classify.AdvisoryUnlockAll: pooler.StateUnlockAll,
	classify.Listen:            pooler.StateListen,
	classify.Unlisten:          pooler.StateUnlisten,
	classify.UnlistenAll:       pooler.StateUnlistenAll,
	classify.CreateTemp:        pooler.StateCreateTemp,
	classify.DropTemp:          pooler.StateDropTemp,
	classify.DeclareHold:       pooler.StateDeclareHold,
	classify.CloseCursor:       pooler.StateCloseCursor,
	classify.CloseAll:          pooler.StateCloseAll,
	classify.Prepare:           pooler.StatePrepare,
	classify.Deallocate:        pooler.StateDeallocate,
	classify.DeallocateAll:     pooler.StateDeallocateAll,
	classify.Load:              pooler.StateLoad,
	classify.DiscardAll:        pooler.StateDiscardAll,
	classify.DiscardTemp:       pooler.StateDiscardTemp,
}

// Classify implements pooler.StateClassifier. Transaction-scoped effects
// (SET LOCAL, ON COMMIT DROP) are left out; statements with no effect
// cost the classifier's pre-filter and no allocation.
func (a Classifier) Classify(sql string) ([]pooler.StateEffect, string) {
	r := a.c.Classify(sql)
	if len(r.Effects) == 0 {
		return nil, ""
	}
	var out []pooler.StateEffect
	for _, e := range r.Effects {
		k, ok := stateKinds[e.Kind]
		if !ok || e.Local {
			continue
		}
		fix := ""
		if rule := rules.Lookup(e.Rule); rule != nil {
			fix = rule.Fix
		}
		out = append(out, pooler.StateEffect{
			Kind: k, Name: e.Name,
			Key: e.Key, KeyKnown: e.KeyKnown, Shared: e.Shared, Pair: e.Pair,
			SessionAuthority: e.Kind == classify.SessionAuth || e.Kind == classify.ResetSessionAuth,
			Rule:             e.Rule, Fix: fix,
		})
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, fmt.Sprintf("%016x", r.Fingerprint)
}
