package rules

import "fmt"

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

// sequenceAdvancedBefore reports whether a nextval()/setval() of the same
// sequence runs before call c of statement i in the same transaction, in
// the same statement, or — inside an explicit transaction — an INSERT that
// may have called it through a column default.
func sequenceAdvancedBefore(g *Group, i int, c Call) bool {
	want := ""
	if c.Name == "currval" && len(c.Args) == 1 {
		want, _ = ConstKey(c.Args[0])
	}
	matches := func(n Call) bool {
		if want == "" || len(n.Args) == 0 {
			return true
		}
		k, ok := ConstKey(n.Args[0])
		return !ok || k == want
	}
	for _, n := range g.Stmts[i].CallsNamed("nextval", "setval") {
		if matches(n) {
			return true
		}
	}
	if !g.Explicit {
		return false
	}
	for _, st := range g.Stmts[:i] {
		for _, n := range st.CallsNamed("nextval", "setval") {
			if matches(n) {
				return true
			}
		}
		if st.Node != nil && (st.Node.GetInsertStmt() != nil || st.Node.GetCopyStmt() != nil) {
			return true
		}
	}
	return false
}
