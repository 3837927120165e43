package sqlparse

import (
	"encoding/json"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// body is the source of a routine body: the decoded text of its string
// constant and where that text sits in the source.
type body struct {
	text string
	// raw is the source offset of the first content byte.
	raw int
	// doubled lists decoded offsets where a doubled quote ('') was folded,
	// so offsets after it move by one more byte in the source.
	doubled []int
}

// toSource maps an offset in b.text to a source offset.
func (b *body) toSource(off int) int {
	n := 0
	for _, d := range b.doubled {
		if d < off {
			n++
		}
	}
	return b.raw + off + n
}

// strToken is a string constant found in a statement's source.
type strToken struct {
	content Range // source range of the content between the delimiters
	quote   byte  // '\'' for standard strings, '$' for dollar quotes
	escape  bool  // E'' string
}

// stringTokens lists string constants in src[start:end].
func stringTokens(src []byte, start, end int) []strToken {
	var out []strToken
	s := src[:end]
	for i := start; i < end; {
		c := s[i]
		switch {
		case c == '-' && i+1 < end && s[i+1] == '-':
			i = lineEnd(s, i)
		case c == '/' && i+1 < end && s[i+1] == '*':
			i = skipBlockComment(s, i)
		case c == '"':
			i = skipQuoted(s, i, '"', false)
		case c == '\'':
			e := skipQuoted(s, i, '\'', false)
			out = append(out, strToken{content: Range{i + 1, max(i+1, e-1)}, quote: '\''})
			i = e
		case c == '$':
			if t := dollarTag(s, i); t > 0 {
				e := skipDollar(s, i, t)
				out = append(out, strToken{content: Range{i + t, max(i+t, e-t)}, quote: '$'})
				i = e
			} else {
				i++
			}
		case isIdentStart(c):
			j := i + 1
			for j < end && isIdentCont(s[j]) {
				j++
			}
			if j == i+1 && j < end && s[j] == '\'' {
				e := skipQuoted(s, j, '\'', c == 'e' || c == 'E')
				out = append(out, strToken{content: Range{j + 1, max(j+1, e-1)}, quote: '\'', escape: c == 'e' || c == 'E'})
				i = e
				continue
			}
			i = j
		default:
			i++
		}
	}
	return out
}

// findBody locates the string constant of st whose value is text.
func findBody(src []byte, st *Statement, text string) (body, bool) {
	for _, t := range stringTokens(src, st.Start, st.End) {
		raw := string(src[t.content.Start:t.content.End])
		switch {
		case t.quote == '$' && raw == text:
			return body{text: text, raw: t.content.Start}, true
		case t.quote == '\'' && !t.escape && strings.ReplaceAll(raw, "''", "'") == text:
			b := body{text: text, raw: t.content.Start}
			for k, d := 0, 0; k+1 < len(raw); k++ {
				if raw[k] == '\'' && raw[k+1] == '\'' {
					b.doubled = append(b.doubled, k-d)
					d++
					k++
				}
			}
			return b, true
		}
	}
	return body{}, false
}

// Filter lets a caller skip work on routine bodies that cannot matter to
// it. Both functions get lower-case text; nil functions keep everything.
type Filter struct {
	// Relevant reports whether text may hold a statement of interest. A
	// body, or a PL/pgSQL expression, without one is not parsed.
	Relevant func(lower string) bool
	// NeedsContext reports whether a body's statements must all be kept
	// because a statement of interest depends on the ones around it.
	NeedsContext func(lower string) bool
}

func (f *Filter) relevant(text string) bool {
	return f == nil || f.Relevant == nil || f.Relevant(strings.ToLower(text))
}

func (f *Filter) needsContext(text string) bool {
	return f == nil || f.Relevant == nil || f.NeedsContext == nil || f.NeedsContext(strings.ToLower(text))
}

// Bodies returns the statements inside the routine body of st: a CREATE
// FUNCTION / PROCEDURE in LANGUAGE sql or plpgsql, or a DO block in
// plpgsql. It returns nil for every other statement. Statements in a body
// run when the routine is called, not when it is created. filter (may be
// nil) skips bodies and PL/pgSQL expressions that cannot matter.
func Bodies(src []byte, st *Statement, filter *Filter) []Statement {
	if st.Node == nil {
		return nil
	}
	var (
		lang, text, origin string
		atomic             bool
	)
	switch n := st.Node.Node.(type) {
	case *pg.Node_CreateFunctionStmt:
		f := n.CreateFunctionStmt
		lang, text = RoutineOptions(f.Options)
		name := lastName(f.Funcname)
		if f.IsProcedure {
			origin = "procedure " + name
		} else {
			origin = "function " + name
		}
		atomic = f.SqlBody != nil
	case *pg.Node_DoStmt:
		lang, text = RoutineOptions(n.DoStmt.Args)
		if lang == "" {
			lang = "plpgsql"
		}
		origin = "DO block"
	default:
		return nil
	}
	if atomic {
		return atomicBody(st, st.Node.GetCreateFunctionStmt().SqlBody, origin)
	}
	if text == "" || !filter.relevant(text) {
		return nil
	}
	// Work on the text the parser saw (meta-commands blanked, extension
	// markers replaced), whose offsets are the source's shifted by Base.
	view := []byte(st.Text)
	vs := *st
	vs.Start, vs.End = st.Start-st.Base, st.End-st.Base
	if vs.Start < 0 || vs.End > len(view) || vs.Start > vs.End {
		return nil
	}
	b, ok := findBody(view, &vs, text)
	b.raw += st.Base
	if !ok {
		return nil
	}
	var out []Statement
	switch strings.ToLower(lang) {
	case "sql":
		out = sqlBody(b)
	case "plpgsql":
		out = plpgsqlBody(view[vs.Start:vs.End], b, filter)
	}
	for i := range out {
		out[i].Body = origin
	}
	return out
}

// atomicBody returns the statements of a BEGIN ATOMIC body, which the
// parser has already parsed as part of the CREATE statement; node locations
// map through the CREATE statement's base.
func atomicBody(st *Statement, body *pg.Node, origin string) []Statement {
	var out []Statement
	var add func(n *pg.Node)
	add = func(n *pg.Node) {
		if l := n.GetList(); l != nil {
			for _, item := range l.Items {
				add(item)
			}
			return
		}
		if n != nil && n.Node != nil {
			out = append(out, Statement{Start: st.Start, End: st.End, Base: st.Base, Text: st.Text, Node: n, Body: origin})
		}
	}
	add(body)
	return out
}

// RoutineOptions returns the language and the body text (AS '…') of a
// CREATE FUNCTION or DO statement's options.
func RoutineOptions(opts []*pg.Node) (lang, text string) {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "language":
			lang = d.Arg.GetString_().GetSval()
		case "as":
			if l := d.Arg.GetList(); l != nil && len(l.Items) == 1 {
				text = l.Items[0].GetString_().GetSval()
			} else if s := d.Arg.GetString_(); s != nil {
				text = s.Sval
			}
		}
	}
	return lang, text
}

func lastName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

// sqlBody splits and parses a LANGUAGE sql body.
func sqlBody(b body) []Statement {
	src := []byte(b.text)
	var out []Statement
	for _, c := range Split(src).Chunks {
		for _, s := range ParseChunk(src, c) {
			if s.Err != nil {
				// A body that does not parse was refused by the server
				// already; the CREATE statement parsed, so stay quiet.
				continue
			}
			s.Start, s.End, s.Base = b.toSource(s.Start), b.toSource(s.End), b.toSource(s.Base)
			s.Inexact = len(b.doubled) > 0
			out = append(out, s)
		}
	}
	return out
}

// plExpr is one SQL expression or statement of a PL/pgSQL body.
type plExpr struct {
	query   string
	mode    int
	line    int
	dynamic bool
	control bool // COMMIT or ROLLBACK: always kept
}

func walkPL(v any, line int, dynamic bool, out *[]plExpr) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			walkPL(e, line, dynamic, out)
		}
	case map[string]any:
		if l, ok := x["lineno"].(float64); ok && l > 0 {
			line = int(l)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := x[k]
			switch {
			case k == "PLpgSQL_stmt_commit" || k == "PLpgSQL_stmt_rollback":
				// A procedure's own COMMIT/ROLLBACK ends a transaction.
				l := line
				if m, ok := e.(map[string]any); ok {
					if n, ok := m["lineno"].(float64); ok && n > 0 {
						l = int(n)
					}
				}
				q := "COMMIT"
				if k == "PLpgSQL_stmt_rollback" {
					q = "ROLLBACK"
				}
				*out = append(*out, plExpr{query: q, line: l, control: true})
			case k == "PLpgSQL_expr":
				m, _ := e.(map[string]any)
				q, _ := m["query"].(string)
				mode, _ := m["parseMode"].(float64)
				*out = append(*out, plExpr{query: q, mode: int(mode), line: line, dynamic: dynamic})
			case k == "PLpgSQL_stmt_dynexecute" || k == "PLpgSQL_stmt_dynfors":
				walkDyn(e, line, out)
			case k == "dynquery":
				walkPL(e, line, true, out)
			default:
				walkPL(e, line, dynamic, out)
			}
		}
	}
}

// walkDyn walks a dynamic EXECUTE statement: its "query" expression is the
// SQL text to run; other expressions (USING, INTO) are ordinary.
func walkDyn(v any, line int, out *[]plExpr) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if l, ok := m["lineno"].(float64); ok && l > 0 {
		line = int(l)
	}
	for k, e := range m {
		walkPL(e, line, k == "query", out)
	}
}

// plpgsqlBody compiles a PL/pgSQL routine with libpg_query and returns the
// SQL statements and expressions in it, each at its body line.
func plpgsqlBody(stmt []byte, b body, filter *Filter) []Statement {
	js, err := pg.ParsePlPgSqlToJSON(string(stmt))
	if err != nil {
		return plpgsqlFallback(b)
	}
	var tree any
	if json.Unmarshal([]byte(js), &tree) != nil {
		return plpgsqlFallback(b)
	}
	var exprs []plExpr
	walkPL(tree, 0, false, &exprs)
	// Object keys were visited in sorted order; the body's own order is
	// by line.
	sort.SliceStable(exprs, func(i, j int) bool { return exprs[i].line < exprs[j].line })
	bodyLines := NewLineIndex([]byte(b.text))
	all := filter.needsContext(b.text)
	var out []Statement
	for _, e := range exprs {
		text, skip := plQueryText(e)
		if text == "" || (!all && !e.control && !filter.relevant(text)) {
			continue
		}
		res, err := pg.Parse(text)
		if err != nil || len(res.Stmts) == 0 {
			continue
		}
		lineOff := bodyLines.LineStart(max(e.line, 1))
		if e.dynamic {
			for _, lit := range dynamicLiterals(res) {
				r2, err := pg.Parse(lit)
				if err != nil {
					continue
				}
				for _, raw := range r2.Stmts {
					out = append(out, plStatement(b, lineOff, raw.Stmt, lit, -1))
				}
			}
			continue
		}
		// Find the expression's own text on or after its line so node
		// locations map exactly.
		at := -1
		if k := strings.Index(b.text[lineOff:], text[skip:]); k >= 0 {
			at = lineOff + k - skip
		}
		for _, raw := range res.Stmts {
			out = append(out, plStatement(b, lineOff, raw.Stmt, text, at))
		}
	}
	return out
}

// plStatement builds a body statement reported at the first token of body
// line offset lineOff. at is the body offset where text[0] sits (text may
// start with a "SELECT " that is not in the source), or -1 when unknown.
func plStatement(b body, lineOff int, node *pg.Node, text string, at int) Statement {
	start := b.toSource(skipSpaceAndComments([]byte(b.text), lineOff, len(b.text)))
	if at < 0 {
		return Statement{Start: start, End: start, Base: start, Text: text, Node: node, Inexact: true}
	}
	end := b.toSource(min(at+len(text), len(b.text)))
	return Statement{Start: start, End: max(start, end), Base: b.toSource(at), Text: text, Node: node, Inexact: len(b.doubled) > 0}
}

// plQueryText turns a PL/pgSQL expression into a statement to parse, and
// says how many leading bytes of it are not in the source.
func plQueryText(e plExpr) (string, int) {
	q := e.query
	switch e.mode {
	case 0: // a whole statement; PERFORM is stored as SELECT
		if strings.HasPrefix(q, "SELECT ") {
			return q, len("SELECT ")
		}
		return q, 0
	case 2: // an expression
		return "SELECT " + q, len("SELECT ")
	case 3, 4, 5: // "target := expression"
		if k := assignOp(q); k >= 0 {
			rest := strings.TrimLeft(q[k:], " \t\r\n")
			return "SELECT " + rest, len("SELECT ")
		}
	}
	return "", 0
}

// assignOp returns the offset just past the ":=" or "=" of an assignment.
func assignOp(q string) int {
	if k := strings.Index(q, ":="); k >= 0 {
		return k + 2
	}
	if k := strings.IndexByte(q, '='); k >= 0 {
		return k + 1
	}
	return -1
}

// DynamicPlaceholder stands for the parts of a dynamic statement that are
// only known at run time.
const DynamicPlaceholder = "pgpoolcheck_dyn"

// dynamicLiterals returns the statement text of "SELECT <expr>", the form
// an EXECUTE <expr> takes, when expr is built from constants: a literal,
// literals joined with || to run-time values, or format() with a constant
// format string. Run-time parts become an identifier placeholder, so
// EXECUTE 'SET search_path = ' || quote_ident(s) reads as a SET.
func dynamicLiterals(res *pg.ParseResult) []string {
	var out []string
	for _, raw := range res.Stmts {
		sel := raw.Stmt.GetSelectStmt()
		if sel == nil || len(sel.TargetList) != 1 {
			continue
		}
		rt := sel.TargetList[0].GetResTarget()
		if rt == nil {
			continue
		}
		if text, known := dynamicText(rt.Val); known {
			out = append(out, text)
		}
	}
	return out
}

// dynamicText renders an expression that builds SQL text; known is false
// when no part of it is a constant.
func dynamicText(n *pg.Node) (text string, known bool) {
	switch {
	case n.GetAConst() != nil && n.GetAConst().GetSval() != nil:
		return n.GetAConst().GetSval().Sval, true
	case n.GetTypeCast() != nil:
		return dynamicText(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if len(e.Name) == 1 && e.Name[0].GetString_().GetSval() == "||" {
			l, lk := dynamicText(e.Lexpr)
			r, rk := dynamicText(e.Rexpr)
			return l + r, lk || rk
		}
	case n.GetFuncCall() != nil:
		f := n.GetFuncCall()
		if len(f.Funcname) > 0 && f.Funcname[len(f.Funcname)-1].GetString_().GetSval() == "format" && len(f.Args) > 0 {
			if c := f.Args[0].GetAConst(); c != nil && c.GetSval() != nil {
				return formatPlaceholders(c.GetSval().Sval), true
			}
		}
	}
	return DynamicPlaceholder, false
}

// formatPlaceholders replaces format()'s %s, %I, %L (and %n$s forms) with
// the placeholder and %% with %.
func formatPlaceholders(f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		if f[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == '$' || f[j] == '-' || f[j] == '*') {
			j++
		}
		if j < len(f) && (f[j] == 's' || f[j] == 'I' || f[j] == 'L') {
			b.WriteString(DynamicPlaceholder)
			i = j
			continue
		}
		b.WriteByte(f[i])
	}
	return b.String()
}

// plpgsqlFallback is used when libpg_query cannot compile a body (it also
// checks names, e.g. an undeclared loop variable): the body is cut at its
// semicolons; in every piece the first SQL command (PERFORM counts as
// SELECT) that parses is kept, and otherwise the expressions after ":=",
// IF, ELSIF, WHILE, WHEN and RETURN are parsed as SELECT lists; the SQL
// text of a dynamic EXECUTE is read as in a compiled body.
func plpgsqlFallback(b body) []Statement {
	src := []byte(b.text)
	doubled := len(b.doubled) > 0
	var out []Statement
	for _, c := range Split(src).Chunks {
		ws := words(src, c.Start, c.End)
		out = append(out, fallbackExecute(b, src, ws, c.End)...)
		found := false
		for _, w := range ws {
			if !plCommandWords[w.word] {
				continue
			}
			text := string(src[w.start:c.End])
			if w.word == "perform" {
				// "SELECT" and "PERFORM" have the same length, so
				// offsets line up (the word may end the body).
				text = "SELECT" + text[len("perform"):]
			}
			res, err := pg.Parse(text)
			if err != nil {
				continue
			}
			for _, raw := range res.Stmts {
				out = append(out, Statement{Start: b.toSource(w.start), End: b.toSource(c.End), Base: b.toSource(w.start), Text: text, Node: raw.Stmt, Inexact: doubled})
			}
			found = true
			break
		}
		if found {
			continue
		}
		for i, w := range ws {
			var from, to int
			switch w.word {
			case ":=":
				from, to = w.end, c.End
			case "if", "elsif", "while", "when", "return":
				from, to = w.end, c.End
				for _, x := range ws[i+1:] {
					if x.word == "then" || x.word == "loop" {
						to = x.start
						break
					}
				}
			default:
				continue
			}
			text := "SELECT " + string(src[from:to])
			res, err := pg.Parse(text)
			if err != nil {
				continue
			}
			start := skipSpaceAndComments(src, from, to)
			for _, raw := range res.Stmts {
				out = append(out, Statement{Start: b.toSource(start), End: b.toSource(to), Base: b.toSource(from) - len("SELECT "), Text: text, Node: raw.Stmt, Inexact: doubled})
			}
		}
	}
	return out
}

// fallbackExecute returns the statements run by the dynamic EXECUTE
// commands among ws (the words of one piece of a body that ends at end):
// the expression after EXECUTE, up to INTO, USING or the LOOP of FOR … IN
// EXECUTE, read as dynamic SQL text, every statement of it.
func fallbackExecute(b body, src []byte, ws []word, end int) []Statement {
	var out []Statement
	for i, w := range ws {
		if w.word != "execute" {
			continue
		}
		to := end
		for _, x := range ws[i+1:] {
			if x.word == "into" || x.word == "using" || x.word == "loop" {
				to = x.start
				break
			}
		}
		res, err := pg.Parse("SELECT " + string(src[w.end:to]))
		if err != nil {
			continue
		}
		for _, lit := range dynamicLiterals(res) {
			r2, err := pg.Parse(lit)
			if err != nil {
				continue
			}
			for _, raw := range r2.Stmts {
				out = append(out, plStatement(b, w.start, raw.Stmt, lit, -1))
			}
		}
	}
	return out
}

// word is an identifier (lower-case) or ":=" found in a body.
type word struct {
	word       string
	start, end int
}

// words lists the identifiers and ":=" operators in src[start:end],
// outside strings and comments.
func words(src []byte, start, end int) []word {
	var out []word
	s := src[:end]
	for i := start; i < end; {
		c := s[i]
		switch {
		case c == '\'':
			i = skipQuoted(s, i, '\'', false)
		case c == '"':
			i = skipQuoted(s, i, '"', false)
		case c == '$':
			if t := dollarTag(s, i); t > 0 {
				i = skipDollar(s, i, t)
			} else {
				i++
			}
		case c == '-' && i+1 < end && s[i+1] == '-':
			i = lineEnd(s, i)
		case c == '/' && i+1 < end && s[i+1] == '*':
			i = skipBlockComment(s, i)
		case c == ':' && i+1 < end && s[i+1] == '=':
			out = append(out, word{":=", i, i + 2})
			i += 2
		case isIdentStart(c):
			j := i + 1
			for j < end && isIdentCont(s[j]) {
				j++
			}
			out = append(out, word{lowerASCII(s[i:j]), i, j})
			i = j
		default:
			i++
		}
	}
	return out
}

var plCommandWords = map[string]bool{
	"perform": true, "select": true, "set": true, "reset": true, "insert": true, "update": true,
	"delete": true, "create": true, "listen": true, "unlisten": true, "load": true, "discard": true,
	"prepare": true, "deallocate": true, "with": true, "drop": true, "alter": true,
}
