package rules

import (
	"fmt"
	"slices"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// SequenceSession flags currval() and lastval().
var SequenceSession = &Rule{
	ID:       "sequence-session",
	Title:    "currval() or lastval() relies on a nextval() earlier in the session",
	Severity: Error,
	Fix:      "return the generated value with INSERT … RETURNING, or call nextval() and currval() in the same transaction",
	Funcs:    []string{"currval", "lastval", "nextval", "setval"},
	Check:    checkSequenceSession,
}

func checkSequenceSession(p *Pass) {
	h, note := p.Target.Handle(effects.CurrVal)
	type read struct {
		kind      effects.Kind
		name, raw string
	}
	for i, st := range p.Group.Stmts {
		// One finding per sequence and statement: currval('s') read twice
		// in one INSERT's VALUES is one hazard.
		seen := map[read]bool{}
		for _, e := range st.Reads() {
			if e.Kind != effects.CurrVal && e.Kind != effects.LastVal || sequenceAdvancedBefore(p.Group, i, e) {
				continue
			}
			if k := (read{e.Kind, e.Name, e.Raw}); seen[k] {
				continue
			} else {
				seen[k] = true
			}
			what := e.Func + "()"
			if e.Kind == effects.CurrVal && e.Raw != "" {
				what = fmt.Sprintf("currval('%s')", e.Raw)
			}
			p.Report(st, e.Location, Adjust(Error, h), StateMessage(what+" returns the last nextval() of the server connection, and no nextval() runs earlier in this transaction",
				"the value may be another client's, or an error when this connection never called nextval()", h, note), "")
		}
	}
}

// sequenceAdvancedBefore reports whether a nextval()/setval() of the same
// sequence runs before read r (currval or lastval) of statement i in the
// same transaction: in the same statement, or — inside an explicit
// transaction — in an earlier statement, or an earlier INSERT or COPY
// that may have called it through a column default, or — for a
// framework's identity query — in the framework's INSERT, or — for
// statements in their caller's transaction, or after a call handed its
// connection — in the caller or the callee.
func sequenceAdvancedBefore(g *Group, i int, r effects.Effect) bool {
	if before := g.Stmts[i].TxBefore; len(before) > 0 {
		tx := &Group{Stmts: append(slices.Clip(before), g.Stmts[i]), Explicit: true}
		if advancedIn(tx, len(before), r) {
			return true
		}
	}
	return advancedIn(g, i, r)
}

// advancedIn is sequenceAdvancedBefore within group g alone.
func advancedIn(g *Group, i int, r effects.Effect) bool {
	want := ""
	if r.Kind == effects.CurrVal {
		want = r.Name // "" when not named by a constant
	}
	for _, n := range g.Stmts[i].Reads() {
		if (n.Kind == effects.NextVal || n.Kind == effects.SetVal) && (want == "" || n.Name == "" || n.Name == want) {
			return true
		}
	}
	if g.AfterInsert {
		return true // the framework's INSERT ran just before, in this transaction
	}
	if g.Stmts[i].InCallerTx {
		return true // the caller's (or a callee's) INSERT may have run before, in this transaction
	}
	if !g.Explicit {
		return false
	}
	x := g.index()
	before := func(m map[string]int, key string) bool {
		k, ok := m[key]
		return ok && k < i
	}
	if before(x.firstAdvance, "insert") || before(x.firstAdvance, "*") {
		return true
	}
	if want == "" {
		return before(x.firstAdvance, "any")
	}
	return before(x.firstAdvance, "seq:"+want)
}
