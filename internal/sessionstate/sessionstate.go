// Package sessionstate connects the pooler to the rules package: it
// implements pooler.StateClassifier with rules/classify. It uses the
// effect types of package pooler/engine (which pooler aliases), so that
// the pooler's own tests can use the real classifier.
package sessionstate

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
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

var stateKinds = map[classify.Kind]engine.StateKind{
	classify.SetParam:          engine.StateSet,
	classify.ResetParam:        engine.StateReset,
	classify.ResetAll:          engine.StateResetAll,
	classify.SetRole:           engine.StateRole,
	classify.ResetRole:         engine.StateRole,
	classify.SessionAuth:       engine.StateRole,
	classify.ResetSessionAuth:  engine.StateRole,
	classify.AdvisoryLock:      engine.StateLock,
	classify.AdvisoryUnlock:    engine.StateUnlock,
	classify.AdvisoryUnlockAll: engine.StateUnlockAll,
	classify.Listen:            engine.StateListen,
	classify.Unlisten:          engine.StateUnlisten,
	classify.UnlistenAll:       engine.StateUnlistenAll,
	classify.CreateTemp:        engine.StateCreateTemp,
	classify.DropTemp:          engine.StateDropTemp,
	classify.DeclareHold:       engine.StateDeclareHold,
	classify.CloseCursor:       engine.StateCloseCursor,
	classify.CloseAll:          engine.StateCloseAll,
	classify.Prepare:           engine.StatePrepare,
	classify.Deallocate:        engine.StateDeallocate,
	classify.DeallocateAll:     engine.StateDeallocateAll,
	classify.Load:              engine.StateLoad,
	classify.DiscardAll:        engine.StateDiscardAll,
	classify.DiscardTemp:       engine.StateDiscardTemp,
	classify.CallRoutine:       engine.StateCall,
	classify.RoutineChange:     engine.StateRoutineChange,
}

// foundRules are the rules of the state the pooler finds on a server when
// it verifies it (engine.Session.Reconcile).
var foundRules = map[engine.StateKind]*rules.Rule{
	engine.StateSet:         rules.SessionSet,
	engine.StateRole:        rules.SessionRole,
	engine.StateLock:        rules.AdvisoryLockSession,
	engine.StateListen:      rules.Listen,
	engine.StateCreateTemp:  rules.TempTable,
	engine.StateDeclareHold: rules.CursorWithHold,
	engine.StatePrepare:     rules.SQLPrepare,
}

// RuleOf names the rule of state of kind k that the pooler found on a
// server, and the rule's fix.
func (Classifier) RuleOf(k engine.StateKind) (rule, fix string) {
	if r := foundRules[k]; r != nil {
		return r.ID, r.Fix
	}
	return "", ""
}

// Classify implements pooler.StateClassifier. Transaction-scoped effects
// (SET LOCAL, ON COMMIT DROP) are left out; statements with no effect
// cost the classifier's pre-filter and no allocation.
func (a Classifier) Classify(sql string) ([]engine.StateEffect, string) {
	return a.ClassifyKnown(sql, nil)
}

// ClassifyKnown implements pooler.KnownClassifier: calls of routines
// that known reports clean do not make the statement worth parsing.
func (a Classifier) ClassifyKnown(sql string, known func(name string) bool) ([]engine.StateEffect, string) {
	r := a.c.ClassifyKnown(sql, known)
	if len(r.Effects) == 0 {
		return nil, ""
	}
	var out []engine.StateEffect
	for _, e := range r.Effects {
		k, ok := stateKinds[e.Kind]
		if !ok || e.Local {
			continue
		}
		fix := ""
		if rule := rules.Lookup(e.Rule); rule != nil {
			fix = rule.Fix
		}
		name := e.Name
		if e.Kind == classify.CallRoutine {
			switch name {
			case classify.DOBlock:
				name = engine.DOBlock
			case classify.OpaqueDOBlock:
				name = engine.OpaqueDOBlock
			}
		}
		out = append(out, engine.StateEffect{
			Kind: k, Name: name,
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

// AnalyzeRoutine implements pooler.RoutineAnalyzer with classify.Routine.
func (Classifier) AnalyzeRoutine(def string) (clean, opaque bool, params, calls []string) {
	r := classify.Routine(def)
	return r.Clean, r.Opaque, r.Params, r.Calls
}
