package extract

import (
	"bytes"
	"regexp"
	"sort"
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
	// pyClass is the line of a class definition.
	pyClass = regexp.MustCompile(`(?m)^([ \t]*)class\s+\w+`)
	// pyConnMethod is a call of a DB-API connection's or cursor's method,
	// and its receiver (dotted names).
	pyConnMethod = regexp.MustCompile(`\b([A-Za-z_][\w.]*?)\s*\.\s*(?:commit|rollback|cursor|execute|executemany)\s*\(`)
	// pyCall is a call of a (dotted) name: the name, and the parenthesis
	// that opens its arguments at the end of the match.
	pyCall = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`)
	// pyDefHead ends where a def or class names what it defines.
	pyDefHead = regexp.MustCompile(`\b(?:def|class)\s+$`)
	// pySeqRead is a read of a sequence's session value.
	pySeqRead = regexp.MustCompile(`(?i)\b(?:currval|lastval)\s*\(`)
)

// dbapiImplicit returns the implicit transactions of DB-API drivers in a
// Python file (see above): each function's body, and the module's own
// code (what no def or class holds, as in a script), cut at their
// commit() and rollback() calls; a function's first piece is marked
// Inherited when the function runs its SQL through a cursor or
// connection it was given. A piece of module code that a function or
// class splits is several spans of one Tx number, drawn from tx. After a
// call that is handed the piece's connection or cursor, the rest of the
// piece is a HandedOff span too.
func dbapiImplicit(src []byte, code []bool, tx *int) []Span {
	if autocommitOn.Match(src) {
		return nil
	}
	driver := psycopgImport.Match(src)
	framework := autocommitFramework.Match(src) // its cursors may be what a function is given
	if !driver && (framework || !dbapiStyle(src, code)) {
		return nil
	}
	var spans []Span
	// add adds a piece (the spans of one transaction) and the span after
	// its first hand-off; scope is the code the piece's names live in. A
	// piece of module code counts only when it runs SQL itself: module
	// code that only defines the SQL functions run is not a transaction.
	add := func(piece, scope []Span, async, module bool) {
		read := false
		for _, p := range piece {
			read = read || pySeqRead.Match(src[p.Start:p.End])
		}
		if !driver && (async || !read) || module && !runsSQL(src, code, piece) {
			return
		}
		if len(piece) > 1 {
			*tx++
			for k := range piece {
				piece[k].Tx = *tx
			}
		}
		for _, p := range piece {
			p.Ungrouped = !driver
			spans = append(spans, p)
		}
		if read {
			spans = append(spans, handOffs(src, code, piece, scope)...)
		}
	}
	var blocks []Span // the def and class blocks
	for _, m := range pyDef.FindAllSubmatchIndex(src, -1) {
		if !code[m[0]+indentOf(src[m[0]:])] {
			continue
		}
		end := codeBlockEnd(src, code, m[0], m[3]-m[2])
		blocks = append(blocks, Span{Start: m[0], End: end})
		body := []Span{{Start: m[0], End: end}}
		pieces := txPieces(src, code, body)
		pieces[0][0].Inherited = !framework && givenConnection(src, code, m[1]-1, pieces[0][0], driver)
		async := bytes.Contains(src[m[0]:m[1]], []byte("async"))
		for _, p := range pieces {
			add(p, body, async, false)
		}
	}
	for _, m := range pyClass.FindAllSubmatchIndex(src, -1) {
		if code[m[0]+indentOf(src[m[0]:])] {
			blocks = append(blocks, Span{Start: m[0], End: codeBlockEnd(src, code, m[0], m[3]-m[2])})
		}
	}
	// The module's own code: what lies outside every block, run at
	// import or as a script, on connections no caller gave.
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].Start < blocks[j].Start })
	var module []Span
	at := 0
	for _, b := range blocks {
		if b.Start > at {
			module = append(module, Span{Start: at, End: b.Start})
		}
		at = max(at, b.End)
	}
	if at < len(src) {
		module = append(module, Span{Start: at, End: len(src)})
	}
	for _, p := range txPieces(src, code, module) {
		add(p, module, false, true)
	}
	return spans
}

// txPieces cuts the code of regions (in source order) at the calls that
// end an implicit transaction: each piece is the regions' parts from one
// such call to the next. A piece holds one span per region it touches.
func txPieces(src []byte, code []bool, regions []Span) [][]Span {
	pieces := [][]Span{nil}
	for _, r := range regions {
		from := r.Start
		for _, c := range pyTxEnd.FindAllIndex(src[r.Start:r.End], -1) {
			if at := r.Start + c[0]; code[at] {
				pieces[len(pieces)-1] = append(pieces[len(pieces)-1], Span{Start: from, End: at})
				pieces = append(pieces, nil)
				from = at
			}
		}
		pieces[len(pieces)-1] = append(pieces[len(pieces)-1], Span{Start: from, End: r.End})
	}
	return pieces
}

// runsSQL reports whether code in piece calls .execute( or
// .executemany(.
func runsSQL(src []byte, code []bool, piece []Span) bool {
	for _, p := range piece {
		for _, m := range dbapiExecute.FindAllIndex(src[p.Start:p.End], -1) {
			if code[p.Start+m[0]] {
				return true
			}
		}
	}
	return false
}

// handOffs returns the rest of a piece after its first call that is
// handed the piece's connection or cursor (helper(conn), f(cur=cur)):
// what the callee runs on it, an INSERT included, is in the piece's
// transaction. Connections and cursors are the receivers, in scope, of
// commit(), rollback(), cursor(), execute( and executemany( (self alone
// is not one: it is handed to many calls that run no SQL).
func handOffs(src []byte, code []bool, piece, scope []Span) []Span {
	names := map[string]bool{}
	for _, r := range scope {
		for _, m := range pyConnMethod.FindAllSubmatchIndex(src[r.Start:r.End], -1) {
			if code[r.Start+m[0]] {
				names[string(src[r.Start+m[2]:r.Start+m[3]])] = true
			}
		}
	}
	delete(names, "self")
	delete(names, "cls")
	if len(names) == 0 {
		return nil
	}
	for k, p := range piece {
		for _, m := range pyCall.FindAllSubmatchIndex(src[p.Start:p.End], -1) {
			open := p.Start + m[1] - 1
			if !code[open] || pyNotHandOff[string(src[p.Start+m[2]:p.Start+m[3]])] ||
				pyDefHead.Match(src[max(0, p.Start+m[0]-16):p.Start+m[0]]) {
				continue
			}
			if handsOver(src, code, open, names) {
				out := []Span{{Start: p.Start + m[0], End: p.End, Tx: p.Tx, HandedOff: true}}
				for _, q := range piece[k+1:] {
					out = append(out, Span{Start: q.Start, End: q.End, Tx: q.Tx, HandedOff: true})
				}
				return out
			}
		}
	}
	return nil
}

// handsOver reports whether the argument list that opens at open holds
// one of names as a whole argument (f(conn), f(x, db=conn)).
func handsOver(src []byte, code []bool, open int, names map[string]bool) bool {
	end := CloseParen(src, code, open)
	if end < 0 {
		return false
	}
	for _, it := range listItems(src, code, open, end-1) {
		s := strings.TrimSpace(string(src[it.Start:it.End]))
		if k := strings.IndexByte(s, '='); k >= 0 && !strings.Contains(s[:k], "(") {
			s = strings.TrimSpace(s[k+1:])
		}
		if names[s] {
			return true
		}
	}
	return false
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
	for _, it := range listItems(src, code, open, closeAt) {
		s := strings.TrimLeft(strings.TrimSpace(string(src[it.Start:it.End])), "*")
		if k := strings.IndexAny(s, ":="); k >= 0 {
			s = s[:k]
		}
		if s = strings.TrimSpace(s); s != "" {
			given[s] = true
		}
	}
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

// pyNotHandOff are the names before a parenthesis that are not handed a
// connection to run SQL on: keywords, builtins that print, measure or
// test it, and the connection's own methods.
var pyNotHandOff = map[string]bool{"if": true, "elif": true, "while": true, "return": true, "not": true,
	"and": true, "or": true, "in": true, "assert": true, "yield": true, "with": true, "for": true,
	"print": true, "len": true, "str": true, "repr": true, "id": true, "isinstance": true, "type": true,
	"getattr": true, "hasattr": true, "setattr": true, "close": true, "commit": true, "rollback": true,
	"cursor": true, "execute": true, "executemany": true}

var (
	// pyTxWith is a with statement that runs its block in one
	// transaction: with conn.transaction():, async with
	// pool.transaction():, with transaction.atomic():, with
	// engine.begin() as conn:, with session.begin():.
	pyTxWith = regexp.MustCompile(`(?m)^([ \t]*)(?:async\s+)?with\s+[^\n]*(?:\.transaction\(|\btransaction\.atomic\b|\batomic\(|\.begin\(\))[^\n]*:[ \t]*(?:#[^\n]*)?$`)
	// pyAtomic is Django's @transaction.atomic decorator on a function.
	pyAtomic = regexp.MustCompile(`(?m)^([ \t]*)@(?:transaction\.)?atomic\b[^\n]*\n`)
)

// pythonTxBlocks returns the blocks and functions run in one transaction
// in Python.
func pythonTxBlocks(src []byte, code []bool) []Span {
	var spans []Span
	for _, m := range pyTxWith.FindAllSubmatchIndex(src, -1) {
		if !code[m[0]+indentOf(src[m[0]:])] {
			continue
		}
		spans = append(spans, Span{Start: m[0], End: blockEndByIndent(src, m[0], m[3]-m[2])})
	}
	for _, m := range pyAtomic.FindAllSubmatchIndex(src, -1) {
		if !code[m[0]+indentOf(src[m[0]:])] {
			continue
		}
		// The def after the decorators.
		ls := m[1]
		for ls < len(src) {
			e := bytes.IndexByte(src[ls:], '\n')
			line := src[ls:]
			if e >= 0 {
				line = src[ls : ls+e]
			}
			t := bytes.TrimSpace(line)
			if bytes.HasPrefix(t, []byte("def ")) || bytes.HasPrefix(t, []byte("async def ")) {
				spans = append(spans, Span{Start: ls, End: blockEndByIndent(src, ls, indentOf(line))})
				break
			}
			if !bytes.HasPrefix(t, []byte("@")) || e < 0 {
				break
			}
			ls += e + 1
		}
	}
	return spans
}

// pythonScope returns the span of the def whose body holds offset i (to
// the first later line indented no deeper than the def), or the rest of the
// file outside any def.
func pythonScope(src []byte, i int) Span {
	lineStart := bytes.LastIndexByte(src[:i], '\n') + 1
	ind := indentOf(src[lineStart:])
	// Walk back to the def (or class) that holds the line.
	for ls := lineStart; ls > 0; {
		prev := bytes.LastIndexByte(src[:ls-1], '\n') + 1
		line := src[prev : ls-1]
		ls = prev
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if d := indentOf(line); d < ind {
			t := bytes.TrimSpace(line)
			if bytes.HasPrefix(t, []byte("def ")) || bytes.HasPrefix(t, []byte("async def ")) {
				return Span{Start: prev, End: blockEndByIndent(src, prev, d)}
			}
			ind = d
		}
	}
	return Span{Start: 0, End: len(src)}
}
