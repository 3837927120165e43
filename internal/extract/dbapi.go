package extract

import (
	"bytes"
	"regexp"
	"strings"
)

// This file finds the implicit transactions of Python's DB-API 2.0
// drivers, one of the transaction spans of txscopes.go.

var (
	// psycopgImport is an import of a DB-API 2.0 driver for PostgreSQL
	// whose connections do not autocommit: psycopg 2 or 3, pg8000,
	// PyGreSQL's pgdb.
	psycopgImport = regexp.MustCompile(`(?m)^\s*(?:import\s+(?:psycopg2?|pg8000|pgdb)\b|from\s+(?:psycopg2?|pg8000|pgdb)(?:\.\w+)*\s+import\b)`)
	// autocommitOn turns autocommit on (or imports what does), or names
	// a driver whose connections always autocommit (asyncpg, aiopg,
	// pg8000's native API).
	autocommitOn = regexp.MustCompile(`autocommit\s*=\s*True|\.autocommit\(\s*True|ISOLATION_LEVEL_AUTOCOMMIT|set_isolation_level\(\s*0|isolation_level\s*=\s*["']AUTOCOMMIT|\b(?:asyncpg|aiopg)\b|\bpg8000\.native\b|from\s+pg8000\s+import\s+native\b`)
	// autocommitFramework imports a library whose connections or cursors
	// autocommit unless told otherwise (Django, SQLAlchemy 1.x's DML
	// autocommit, encode/databases, peewee, Pony, Tortoise, records,
	// dataset): an .execute( in its file is not DB-API's.
	autocommitFramework = regexp.MustCompile(`(?m)^\s*(?:from|import)\s+(?:django|sqlalchemy|flask_sqlalchemy|databases|peewee|playhouse|pony|tortoise|records|dataset|asyncpg|aiopg)\b`)
	// dbapiExecute is a call of a DB-API cursor's (or connection's)
	// execute method, and the name its receiver starts with.
	dbapiExecute = regexp.MustCompile(`\b([A-Za-z_]\w*)(?:\.\w+|\(\))*\.(?:execute|executemany)\s*\(`)
	// pyAwait is an await just before a call.
	pyAwait = regexp.MustCompile(`\bawait\s*$`)
	// pyDef is the line of a function definition; its parameter list
	// opens at the end of the match.
	pyDef = regexp.MustCompile(`(?m)^([ \t]*)(?:async\s+)?def\s+\w+\s*\(`)
	// pyTxEnd is a call that ends the implicit transaction: commit(),
	// rollback(), or a COMMIT, ROLLBACK, END or ABORT executed.
	pyTxEnd = regexp.MustCompile(`\.(?:commit|rollback)\(|\.execute\(\s*[rRuUbB]?(?:"|')\s*(?i:commit|rollback|end|abort)\b`)
	// pyConnect opens a connection.
	pyConnect = regexp.MustCompile(`\.connect\(|\bconnect\(`)
	// pyAssign is an assignment of a name from an expression that starts
	// with a name (cur = conn.cursor()), or a with … as name whose
	// expression does (with conn.cursor() as cur:).
	pyAssign = regexp.MustCompile(`(?m)^[ \t]*(?:([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\b|(?:async\s+)?with\s+([A-Za-z_]\w*)\b[^\n]*\bas\s+([A-Za-z_]\w*)\s*:)`)
	// pySeqRead is a read of a sequence's session value.
	pySeqRead = regexp.MustCompile(`(?i)\b(?:currval|lastval)\s*\(`)
)

// dbapiImplicit returns the implicit transactions of DB-API drivers in a
// Python file (see above): each function's body, cut at its commit() and
// rollback() calls, the first piece marked Inherited when the function
// runs its SQL through a cursor or connection it was given.
func dbapiImplicit(src []byte, code []bool) []Span {
	if autocommitOn.Match(src) {
		return nil
	}
	driver := psycopgImport.Match(src)
	framework := autocommitFramework.Match(src) // its cursors may be what a function is given
	if !driver && (framework || !dbapiStyle(src, code)) {
		return nil
	}
	var spans []Span
	for _, m := range pyDef.FindAllSubmatchIndex(src, -1) {
		if !code[m[0]+indentOf(src[m[0]:])] {
			continue
		}
		end := codeBlockEnd(src, code, m[0], m[3]-m[2])
		var pieces []Span
		from := m[0]
		for _, c := range pyTxEnd.FindAllIndex(src[m[0]:end], -1) {
			if at := m[0] + c[0]; code[at] {
				pieces = append(pieces, Span{Start: from, End: at})
				from = at
			}
		}
		pieces = append(pieces, Span{Start: from, End: end})
		pieces[0].Inherited = !framework && givenConnection(src, code, m[1]-1, pieces[0], driver)
		async := bytes.Contains(src[m[0]:m[1]], []byte("async"))
		for _, p := range pieces {
			if driver {
				spans = append(spans, p)
			} else if !async && pySeqRead.Match(src[p.Start:p.End]) {
				p.Ungrouped = true
				spans = append(spans, p)
			}
		}
	}
	return spans
}

// codeBlockEnd is blockEndByIndent for code: a line that starts inside a
// string or a comment (a multi-line SQL literal, a comment at the margin)
// does not end the block.
func codeBlockEnd(src []byte, code []bool, lineStart, ind int) int {
	for {
		end := blockEndByIndent(src, lineStart, ind)
		if end >= len(src) {
			return end
		}
		if first := end + indentOf(src[end:]); first < len(src) && code[first] {
			return end
		}
		lineStart = end // go on from that line, as from the block's own
	}
}

// dbapiStyle reports whether a Python file runs SQL as DB-API code does:
// an .execute( or .executemany( call in code that is not awaited.
func dbapiStyle(src []byte, code []bool) bool {
	for _, m := range dbapiExecute.FindAllIndex(src, -1) {
		if code[m[0]] && !pyAwait.Match(src[max(0, m[0]-16):m[0]]) {
			return true
		}
	}
	return false
}

// givenConnection reports whether the piece p of a function (from its def
// line; open is its parameter list's parenthesis) runs its SQL through a
// cursor or connection the function was given: an .execute( or
// .executemany( call on a parameter, self included, or on a name
// assigned from one, and no connect( before it. Without a driver's import
// an awaited call does not count (asyncpg's connections autocommit).
func givenConnection(src []byte, code []bool, open int, p Span, driver bool) bool {
	closeAt := CloseParen(src, code, open) - 1 // the closing parenthesis
	if closeAt < 0 || closeAt > p.End {
		return false
	}
	given := map[string]bool{}
	depth := 0
	start := open + 1
	param := func(a, b int) {
		s := strings.TrimLeft(strings.TrimSpace(string(src[a:b])), "*")
		if k := strings.IndexAny(s, ":="); k >= 0 {
			s = s[:k]
		}
		if s = strings.TrimSpace(s); s != "" {
			given[s] = true
		}
	}
	for k := open + 1; k < closeAt; k++ {
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
				param(start, k)
				start = k + 1
			}
		}
	}
	param(start, closeAt)
	if len(given) == 0 {
		return false
	}
	body := Span{Start: closeAt, End: p.End}
	for _, m := range pyAssign.FindAllSubmatchIndex(src[body.Start:body.End], -1) {
		if !code[body.Start+m[0]+indentOf(src[body.Start+m[0]:])] {
			continue
		}
		name := func(i int) string { return string(src[body.Start+m[2*i] : body.Start+m[2*i+1]]) }
		if m[2] >= 0 && given[name(2)] {
			given[name(1)] = true
		} else if m[6] >= 0 && given[name(3)] {
			given[name(4)] = true
		}
	}
	for _, c := range pyConnect.FindAllIndex(src[body.Start:body.End], -1) {
		if code[body.Start+c[0]] {
			return false // the function opens its own connection
		}
	}
	for _, m := range dbapiExecute.FindAllSubmatchIndex(src[body.Start:body.End], -1) {
		at := body.Start + m[0]
		if code[at] && given[string(src[at:body.Start+m[3]])] && (driver || !pyAwait.Match(src[max(0, at-16):at])) {
			return true
		}
	}
	return false
}
