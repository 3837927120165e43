package rules

import (
	"fmt"
	"strings"
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
	h, note := p.Target.Handle(StateSequence)
	for i, st := range p.Group.Stmts {
		for _, c := range st.CallsNamed("currval", "lastval") {
			if sequenceAdvancedBefore(p.Group, i, c) {
				continue
			}
			what := c.Name + "()"
			if c.Name == "currval" && len(c.Args) == 1 {
				if s, ok := ConstString(c.Args[0]); ok {
					what = fmt.Sprintf("currval('%s')", s)
				}
			}
			p.Report(st, c.Location, Adjust(Error, h), StateMessage(what+" returns the last nextval() of the server connection, and no nextval() runs earlier in this transaction",
				"the value may be another client's, or an error when this connection never called nextval()", h, note), "")
		}
	}
}

// seqKey identifies the sequence a currval/nextval/setval call names by
// a constant: 'public.orders_id_seq' and 'orders_id_seq' are the same key.
// ok is false for a call without a constant first argument.
func seqKey(c Call) (string, bool) {
	if len(c.Args) == 0 {
		return "", false
	}
	s, ok := ConstString(c.Args[0])
	if !ok {
		return "", false
	}
	s = strings.ToLower(strings.ReplaceAll(s, `"`, ""))
	if k := strings.LastIndexByte(s, '.'); k >= 0 {
		s = s[k+1:]
	}
	return s, true
}

// sequenceAdvancedBefore reports whether a nextval()/setval() of the same
// sequence runs before call c of statement i in the same transaction: in
// the same statement, or — inside an explicit transaction — in an earlier
// statement, or an earlier INSERT or COPY that may have called it through
// a column default.
func sequenceAdvancedBefore(g *Group, i int, c Call) bool {
	want, known := "", false
	if c.Name == "currval" {
		want, known = seqKey(c)
	}
	for _, n := range g.Stmts[i].CallsNamed("nextval", "setval") {
		if k, ok := seqKey(n); !known || !ok || k == want {
			return true
		}
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
	if !known {
		return before(x.firstAdvance, "any")
	}
	return before(x.firstAdvance, "seq:"+want)
}
