// Package sessionstate connects the pooler to the rules package: it
// implements pooler.StateClassifier with rules/classify (the fast path to
// the effects model, rules/effects) and names each effect's rule with
// rules.Covering. It returns the effects as the type of package
// pooler/engine (StateEffect, which pooler aliases), of the kinds of
// rules/effects that the pooler follows (engine.Follows), so that the
// pooler's own tests can use the real classifier.
package sessionstate

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/classify"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Classifier fills the pooler's StateClassifier from the rules
// package: the pooler stays free of SQL semantics, the classifier of the
// pooler's types.
type Classifier struct{ c *classify.Classifier }

func New() Classifier {
	return Classifier{classify.New(classify.Options{})}
}

// RuleOf names the rule of state of kind k that the pooler found on a
// server when it verified it (engine.Session.Reconcile), and the rule's
// fix: the rule that covers effects of that kind (rules.Covering).
func (Classifier) RuleOf(k effects.Kind) (rule, fix string) {
	if r := rules.Covering(k); r != nil {
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
		if !engine.Follows(e.Kind) || e.Local {
			continue
		}
		object := ""
		if e.Kind == effects.CreateTemp || e.Kind == effects.DropTemp {
			// The pooler follows objects that are not relations by the
			// names they share.
			object = effects.Namespace(e.Object)
		}
		rule, fix := "", ""
		if r := rules.Covering(e.Kind); r != nil {
			rule, fix = r.ID, r.Fix
		}
		out = append(out, engine.StateEffect{
			Kind: e.Kind, Name: e.Name,
			Key: e.Key, KeyKnown: e.KeyKnown, Shared: e.Shared, Pair: e.Pair,
			Object: object,
			Rule:   rule, Fix: fix,
		})
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, fmt.Sprintf("%016x", r.Fingerprint)
}

// AnalyzeRoutine implements pooler.RoutineAnalyzer with effects.Routine.
func (Classifier) AnalyzeRoutine(def string) (clean, opaque bool, params, calls []string) {
	r := effects.Routine(def)
	return r.Clean, r.Opaque, r.Params, r.Calls
}
