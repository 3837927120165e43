package extract

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
)

// This file finds the lists of statements that Python code passes whole
// to one call: run_queries([{'sql': insert, 'args': a}, {'sql': "SELECT
// currval(…)"}]), or a list built with append() and then passed
// (queries = []; queries.append((sql, args)); run(queries)). A helper
// given a list of statements runs them together, on one connection and
// in one transaction, as the helpers that take one are written to do; its
// statements run in the list's order. The literals of one list (in it, or
// assigned to a name that is put in it) are spans of one Tx number,
// marked Ungrouped: they tell sequence-session which statements ran
// before each in the transaction, and group nothing for the other rules,
// since the helper itself is not seen.

var (
	// pyListAssign is an assignment of a list display to a name; the
	// bracket opens at the end of the match.
	pyListAssign = regexp.MustCompile(`(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*\[`)
	// pyListGrow is a call that adds to a list (append, extend, insert)
	// or an augmented assignment of one; the parenthesis opens, or the
	// added value starts, at the end of the match.
	pyListGrow = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*(?:\.\s*(?:append|extend|insert)\s*\(|\+=\s*)`)
	// pyName is a name (not an attribute: what precedes it is checked).
	pyName = regexp.MustCompile(`\b[A-Za-z_]\w*\b`)
)

// pyNotList are the names before a parenthesis that are given a list of
// statements without running it: keywords, and builtins and logging
// methods that measure, copy or print it.
var pyNotList = map[string]bool{"if": true, "elif": true, "while": true, "return": true, "not": true,
	"and": true, "or": true, "in": true, "assert": true, "yield": true, "with": true, "for": true,
	"print": true, "len": true, "str": true, "repr": true, "list": true, "tuple": true, "set": true,
	"sorted": true, "reversed": true, "enumerate": true, "zip": true, "iter": true, "map": true,
	"filter": true, "any": true, "all": true, "min": true, "max": true, "sum": true, "isinstance": true,
	"type": true, "id": true, "debug": true, "info": true, "warning": true, "warn": true, "error": true,
	"exception": true, "critical": true, "log": true, "pprint": true, "deepcopy": true, "copy": true}

// pythonStatementLists returns the spans of the literals of each list of
// statements that a call is given (see above), when one of them reads a
// sequence (currval, lastval): one Tx number, drawn from tx, per list.
func pythonStatementLists(src []byte, code []bool, lits []Literal, tx *int) []Span {
	if !pySeqRead.Match(src) {
		return nil
	}
	var defs []Span
	for _, m := range pyDef.FindAllSubmatchIndex(src, -1) {
		if code[m[0]+indentOf(src[m[0]:])] {
			defs = append(defs, Span{Start: m[0], End: codeBlockEnd(src, code, m[0], m[3]-m[2])})
		}
	}
	// scopeOf returns the innermost function that holds at, or the file.
	scopeOf := func(at int) Span {
		s := Span{Start: 0, End: len(src)}
		for _, d := range defs {
			if d.Start <= at && at < d.End && d.Start >= s.Start {
				s = d
			}
		}
		return s
	}
	var spans []Span
	for _, m := range pyCall.FindAllSubmatchIndex(src, -1) {
		open := m[1] - 1
		if !code[m[0]] || !code[open] || pyNotList[string(src[m[2]:m[3]])] ||
			pyDefHead.Match(src[max(0, m[0]-16):m[0]]) {
			continue
		}
		scope := scopeOf(m[0])
		for _, a := range pyArgs(src, code, open) {
			var members []Span
			if src[a.Start] == '[' && closeBracket(src, code, a.Start, '[', ']') == a.End {
				members = []Span{{Start: a.Start + 1, End: a.End - 1}}
			} else if n := string(src[a.Start:a.End]); pyName.FindString(n) == n {
				members = listMembers(src, code, n, Span{Start: scope.Start, End: m[0]})
			}
			group := memberLiterals(src, code, lits, members, scope)
			if len(group) < 2 || !readsSequence(lits, group) {
				continue
			}
			*tx++
			for _, s := range group {
				s.Tx, s.Ungrouped = *tx, true
				spans = append(spans, s)
			}
		}
	}
	return spans
}

// pyArgs returns the arguments of the call whose parenthesis opens at
// open, each without its keyword (name=) and the blanks around it.
func pyArgs(src []byte, code []bool, open int) []Span {
	end := CloseParen(src, code, open)
	if end < 0 {
		return nil
	}
	var args []Span
	for _, it := range listItems(src, code, open, end-1) {
		a, b := it.Start, it.End
		if eq := kwEquals(src, code, a, b); eq >= 0 {
			a = eq + 1
		}
		for a < b && isBlank(src[a]) {
			a++
		}
		for b > a && isBlank(src[b-1]) {
			b--
		}
		if a < b {
			args = append(args, Span{Start: a, End: b})
		}
	}
	return args
}

// listItems returns the items of the bracketed list whose bracket opens
// at open and closes at close (the closing bracket's offset): the spans
// between its commas outside nested brackets, blanks included.
func listItems(src []byte, code []bool, open, close int) []Span {
	var items []Span
	depth, start := 0, open+1
	for k := open + 1; k < close; k++ {
		if !code[k] {
			continue
		}
		switch src[k] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, Span{Start: start, End: k})
				start = k + 1
			}
		}
	}
	return append(items, Span{Start: start, End: close})
}

// kwEquals returns the offset of the = of a keyword argument in
// src[a:b] (name = value), or -1.
func kwEquals(src []byte, code []bool, a, b int) int {
	k := a
	for k < b && isBlank(src[k]) {
		k++
	}
	n := k
	for k < b && isIdentChar(src[k]) {
		k++
	}
	if k == n {
		return -1
	}
	for k < b && isBlank(src[k]) {
		k++
	}
	if k+1 < b && code[k] && src[k] == '=' && src[k+1] != '=' {
		return k
	}
	return -1
}

// listMembers returns what the list held by name is made of, when code in
// within assigns it a list display: the display's contents and the
// arguments of the later calls that add to it.
func listMembers(src []byte, code []bool, name string, within Span) []Span {
	open := -1
	for _, m := range pyListAssign.FindAllSubmatchIndex(src[within.Start:within.End], -1) {
		at := within.Start + m[0] + indentOf(src[within.Start+m[0]:])
		if code[at] && string(src[within.Start+m[2]:within.Start+m[3]]) == name {
			open = within.Start + m[1] - 1
		}
	}
	if open < 0 {
		return nil
	}
	end := closeBracket(src, code, open, '[', ']')
	if end < 0 || end > within.End {
		return nil
	}
	members := []Span{{Start: open + 1, End: end - 1}}
	for _, m := range pyListGrow.FindAllSubmatchIndex(src[end:within.End], -1) {
		at := end + m[0]
		if !code[at] || string(src[end+m[2]:end+m[3]]) != name || at > 0 && src[at-1] == '.' {
			continue
		}
		if from := end + m[1]; src[from-1] == '(' {
			if to := CloseParen(src, code, from-1); to > 0 {
				members = append(members, Span{Start: from, End: to - 1})
			}
		} else {
			members = append(members, Span{Start: from, End: lineEnd(src, from)})
		}
	}
	return members
}

// memberLiterals returns the spans of the literals the members of a list
// are made of: those in them, and those assigned (name = "…") in scope to
// a name a member holds, after the name's use before (if/else branches
// that each assign it count alike).
func memberLiterals(src []byte, code []bool, lits []Literal, members []Span, scope Span) []Span {
	seen := map[int]bool{}
	var out []Span
	take := func(l Literal) {
		if !seen[l.Start] {
			seen[l.Start] = true
			out = append(out, Span{Start: l.Start, End: l.End})
		}
	}
	for _, mb := range members {
		for i := sort.Search(len(lits), func(i int) bool { return lits[i].Start >= mb.Start }); i < len(lits) && lits[i].Start < mb.End; i++ {
			take(lits[i])
		}
		for _, n := range pyName.FindAllIndex(src[mb.Start:mb.End], -1) {
			at := mb.Start + n[0]
			if !code[at] || at > 0 && src[at-1] == '.' || kwEquals(src, code, at, mb.End) >= 0 {
				continue
			}
			for _, l := range assignedLiterals(src, code, lits, string(src[at:mb.Start+n[1]]), Span{Start: scope.Start, End: at}) {
				take(l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// assignedLiterals returns the literals assigned to name in within, after
// its last use there: the value a use at within.End may hold.
func assignedLiterals(src []byte, code []bool, lits []Literal, name string, within Span) []Literal {
	var assigned []Literal
	for from := within.Start; ; {
		k := bytes.Index(src[from:within.End], []byte(name))
		if k < 0 {
			break
		}
		at := from + k
		from = at + len(name)
		if !code[at] || at > 0 && (src[at-1] == '.' || isIdentChar(src[at-1])) || from < len(src) && isIdentChar(src[from]) {
			continue
		}
		eq := kwEquals(src, code, at, within.End)
		if eq < 0 || strings.TrimSpace(string(src[lineStart(src, at):at])) != "" {
			assigned = assigned[:0] // a use: what was assigned before is spent
			continue
		}
		rhs := eq + 1
		for rhs < within.End && (isBlank(src[rhs]) || src[rhs] == '(') {
			rhs++
		}
		i := sort.Search(len(lits), func(i int) bool { return lits[i].End > rhs })
		if i < len(lits) && lits[i].Start <= rhs+2 && lits[i].Start >= rhs {
			assigned = append(assigned, lits[i])
		}
	}
	return assigned
}

// lineStart returns the offset of the start of the line that holds at.
func lineStart(src []byte, at int) int {
	for at > 0 && src[at-1] != '\n' {
		at--
	}
	return at
}

// readsSequence reports whether one of the literals of spans reads a
// sequence's session value.
func readsSequence(lits []Literal, spans []Span) bool {
	for _, s := range spans {
		i := sort.Search(len(lits), func(i int) bool { return lits[i].Start >= s.Start })
		if i < len(lits) && lits[i].Start == s.Start && pySeqRead.MatchString(lits[i].Value) {
			return true
		}
	}
	return false
}
