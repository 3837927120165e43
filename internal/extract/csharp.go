package extract

import (
	"strings"
)

// csGroup is an open parenthesis. format marks the argument list of
// string.Format or StringBuilder.AppendFormat, whose format string has
// {0}-style items.
type csGroup struct {
	format bool
	fresh  bool // nothing lexed yet in the current argument
	done   bool // the format string has been lexed
}

// csTok is one code token kept for Subscriptions. Its kind is 'i' for an
// identifier or keyword, '.' for a member access, '(' and '[' for
// themselves, '=' for an assignment, '+' for +=, '?' for a nullable mark or
// a conditional, and 'o' for anything else (runs of them are merged).
type csTok struct {
	kind       byte
	start, end int
}

// dottedPath returns the dotted path of identifier tokens that ends at
// token k (a.b.c), without a leading self (this. or self.), and the index
// of its first token.
func dottedPath(src []byte, t []csTok, k int, self string) (string, int) {
	from := k
	for from >= 2 && t[from-1].kind == '.' && t[from-2].kind == 'i' {
		from -= 2
	}
	var sb strings.Builder
	for m := from; m <= k; m += 2 {
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.Write(src[t[m].start:t[m].end])
	}
	return strings.TrimPrefix(sb.String(), self), from
}

// csSpan is a source range.
type csSpan struct{ start, end int }

var noSpan = csSpan{-1, -1}

// csLexer tokenizes C#.
type csLexer struct {
	*lexer
	groups []csGroup
	base   int // groups below base belong to the code around an interpolation
	// The last code token, the last identifier, and the identifier before
	// the member access that precedes it (string in string.Format).
	lastKind byte
	ident    csSpan
	qual     csSpan
	dotQual  csSpan
	// record keeps the code tokens outside interpolations in ctoks, for
	// Subscriptions.
	record bool
	ctoks  []csTok
}

func newCSLexer(src []byte) *csLexer {
	return &csLexer{lexer: newLexer(src), ident: noSpan, qual: noSpan, dotQual: noSpan}
}

// lexCSharp tokenizes C# source: // and /* */ comments, preprocessor
// directives (# lines, skipped), character literals (skipped), regular
// strings with C#'s escapes (\x with one to four digits, \u, \U, \e),
// verbatim strings @"…" with doubled quotes, interpolated strings $"…",
// $@"…" and @$"…" with {{ and }} decoded and each hole (alignment and
// format clause included) replaced by Placeholder, raw strings """…"""
// with three or more quotes (the indentation of the closing line removed
// from every line of a multi-line one) and interpolated raw strings
// $$"""…{{x}}…""" whose holes open with as many braces as there are
// dollars, the u8 suffix, and `+`. The format string of string.Format
// and AppendFormat has its items ({0}, {1,-8:N2}) replaced by Placeholder
// and {{ and }} decoded.
func lexCSharp(src []byte) *lexer {
	c := newCSLexer(src)
	c.code(0, false)
	return c.lexer
}

// token adds a code token: kind is its csTok kind, tk its kind for join.
func (c *csLexer) token(kind byte, tk tokKind, start, end int) {
	c.add(tk, start, end)
	c.note(kind, start, end)
}

// note follows the last code tokens, for string.Format and Subscriptions.
func (c *csLexer) note(kind byte, start, end int) {
	switch kind {
	case 'i':
		if c.lastKind == '.' {
			c.qual = c.dotQual
		} else {
			c.qual = noSpan
		}
		c.ident = csSpan{start, end}
	case '.':
		if c.lastKind == 'i' {
			c.dotQual = c.ident
		} else {
			c.dotQual = noSpan
		}
	}
	c.lastKind = kind
	if c.record && c.emit {
		if n := len(c.ctoks); kind == 'o' && n > 0 && c.ctoks[n-1].kind == 'o' {
			c.ctoks[n-1].end = end
			return
		}
		c.ctoks = append(c.ctoks, csTok{kind, start, end})
	}
}

// open pushes a parenthesis; the argument list of string.Format (or
// String.Format) and of AppendFormat holds a format string.
func (c *csLexer) open() {
	format := false
	if c.lastKind == 'i' {
		switch string(c.src[c.ident.start:c.ident.end]) {
		case "AppendFormat":
			format = true
		case "Format":
			if c.qual.start >= 0 {
				q := string(c.src[c.qual.start:c.qual.end])
				format = q == "string" || q == "String"
			}
		}
	}
	c.groups = append(c.groups, csGroup{format: format, fresh: true})
}

// close pops a parenthesis, never one opened outside the interpolation
// being lexed.
func (c *csLexer) close() {
	if len(c.groups) > c.base {
		c.groups = c.groups[:len(c.groups)-1]
	}
}

// takeFresh reports whether the token about to be lexed opens an argument
// of the innermost parenthesis, which it then no longer does.
func (c *csLexer) takeFresh() bool {
	if len(c.groups) <= c.base {
		return false
	}
	g := &c.groups[len(c.groups)-1]
	fresh := g.fresh
	g.fresh = false
	return fresh
}

// formatString reports whether a literal that opens an argument (fresh)
// is the format string of the innermost parenthesis: the first literal
// that opens an argument of string.Format or AppendFormat.
func (c *csLexer) formatString(fresh bool) bool {
	if !fresh || len(c.groups) <= c.base {
		return false
	}
	g := &c.groups[len(c.groups)-1]
	if !g.format || g.done {
		return false
	}
	g.done = true
	return true
}

func csBlank(ch byte) bool { return ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' }

// code lexes code from i. Inside an interpolation (hole) it stops at the
// unmatched closing brace, or at the colon that starts a format clause,
// and returns its offset; it returns len(src) at the end of the file.
func (c *csLexer) code(i int, hole bool) int {
	src := c.src
	braces, parens := 0, 0
	for i < len(src) {
		ch, next := src[i], byteAt(src, i+1)
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v':
			i++
			continue
		case ch == '/' && next == '/':
			i = c.lineComment(i, i+2)
			continue
		case ch == '/' && next == '*':
			i = c.starComment(i, false)
			continue
		case ch == '#':
			// A preprocessor directive (#if, #region, #pragma, #nullable)
			// fills its line; '#' starts nothing else in code.
			end := lineEnd(src, i)
			c.token('o', tokOther, i, end)
			i = end
			continue
		}
		fresh := c.takeFresh()
		switch {
		case ch == '"':
			i = c.quoted(i, i, 0, false, c.formatString(fresh))
		case ch == '$' || ch == '@':
			i = c.prefixed(i, fresh)
		case ch == '\'':
			end := javaChar(src, i)
			c.token('o', tokOther, i, end)
			i = end
		case isIdentStart(ch):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			c.token('i', tokIdent, i, j)
			i = j
		case isDigit(ch) || ch == '.' && isDigit(next):
			j := numberEnd(src, i, false)
			c.token('o', tokOther, i, j)
			i = j
		case ch == '.' && next == '.':
			c.token('o', tokOther, i, i+2)
			i += 2
		case ch == '.':
			c.token('.', tokDot, i, i+1)
			i++
		case ch == '?' && next == '.' && !(i+2 < len(src) && isDigit(src[i+2])):
			c.token('.', tokDot, i, i+2) // null-conditional member access
			i += 2
		case ch == '?' && next == '?':
			c.token('o', tokOther, i, i+2)
			i += 2
		case ch == '?':
			c.token('?', tokOther, i, i+1)
			i++
		case ch == '+':
			switch next {
			case '+':
				c.token('o', tokOther, i, i+2)
				i += 2
			case '=':
				c.token('+', tokOther, i, i+2)
				i += 2
			default:
				c.token('o', tokPlus, i, i+1)
				i++
			}
		case (ch == '=' || ch == '!' || ch == '<' || ch == '>') && (next == '=' || ch == '=' && next == '>'):
			c.token('o', tokOther, i, i+2)
			i += 2
		case ch == '=':
			c.token('=', tokOther, i, i+1)
			i++
		case ch == '(' || ch == '[':
			parens++
			if ch == '(' {
				c.open()
			}
			c.token(ch, tokOther, i, i+1)
			i++
		case ch == ')' || ch == ']':
			if parens > 0 {
				parens--
			}
			if ch == ')' {
				c.close()
			}
			c.token('o', tokOther, i, i+1)
			i++
		case ch == ':' && next == ':':
			c.token('o', tokOther, i, i+2) // global::
			i += 2
		case ch == ':' && hole && braces == 0 && parens == 0:
			return i
		case ch == ',':
			c.token('o', tokOther, i, i+1)
			if len(c.groups) > c.base {
				c.groups[len(c.groups)-1].fresh = true
			}
			i++
		default:
			if !c.punct(i, &braces, hole) {
				return i
			}
			c.note('o', i, i+1)
			i++
		}
	}
	return i
}

// prefixed lexes what starts with $ or @ at src[i]: an interpolated,
// verbatim or interpolated raw string, or a verbatim identifier (@class).
// fresh reports that it opens an argument.
func (c *csLexer) prefixed(i int, fresh bool) int {
	src := c.src
	at := func(k int, ch byte) bool { return k < len(src) && src[k] == ch }
	if src[i] == '@' {
		switch {
		case at(i+1, '"'):
			return c.plain(i, i+1, true, false, c.formatString(fresh))
		case at(i+1, '$') && at(i+2, '"'):
			return c.plain(i, i+2, true, true, false)
		case i+1 < len(src) && isIdentStart(src[i+1]):
			j := i + 2
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			c.token('i', tokIdent, i, j)
			return j
		}
		c.token('o', tokOther, i, i+1)
		return i + 1
	}
	j := i
	for j < len(src) && src[j] == '$' {
		j++
	}
	switch {
	case j-i == 1 && at(j, '@') && at(j+1, '"'):
		return c.plain(i, j+1, true, true, false)
	case at(j, '"'):
		return c.quoted(i, j, j-i, true, false)
	}
	c.token('o', tokOther, i, j)
	return j
}

// quoted lexes a string whose first quote is at q (start is where its
// prefix starts): a raw string when three or more quotes open it, else a
// regular one. dollars is the number of $ of an interpolated string.
func (c *csLexer) quoted(start, q, dollars int, interp, format bool) int {
	src := c.src
	n := 0
	for q+n < len(src) && src[q+n] == '"' {
		n++
	}
	if n >= 3 {
		return c.raw(start, q, n, dollars, format)
	}
	return c.plain(start, q, false, interp, format)
}

// plain lexes a string that one quote opens at q (start is where its
// prefix starts). A regular one, "…" or $"…", has escapes and stays on
// one line: an unterminated one is dropped, and lexing resumes at its
// line break. A verbatim one (verbatim set), @"…" or $@"…", has no
// escapes but "" for a quote, and keeps its line breaks as they are in
// the source: an unterminated one ends the file.
func (c *csLexer) plain(start, q int, verbatim, interp, format bool) int {
	src := c.src
	b := newBuilder()
	holes := 0 // the braces that open a hole
	if interp {
		holes = 1
	}
	j := q + 1
	for {
		if j >= len(src) {
			return j
		}
		ch := src[j]
		switch {
		case ch == '"':
			if verbatim && j+1 < len(src) && src[j+1] == '"' {
				b.decoded(`"`, j)
				j += 2
				continue
			}
			return c.finish(&b, start, j+1, interp)
		case !verbatim && (ch == '\n' || ch == '\r'):
			return j
		case !verbatim && ch == '\\':
			j = csEscape(&b, src, j)
		case (interp || format) && (ch == '{' || ch == '}'):
			var ok bool
			if j, ok = c.stringBrace(&b, j, holes); !ok {
				return len(src)
			}
		default:
			k := j + 1
			for k < len(src) && src[k] != '"' && !((interp || format) && (src[k] == '{' || src[k] == '}')) &&
				(verbatim || src[k] != '\\' && src[k] != '\n' && src[k] != '\r') {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
}

// stringBrace decodes the brace at src[j] of a string on one line: of an
// interpolated one whose holes open with n braces (n > 0), else of a
// format string. It reports false when a hole is left open at the end of
// the file.
func (c *csLexer) stringBrace(b *builder, j, n int) (int, bool) {
	if n > 0 {
		return c.braces(b, j, n)
	}
	return formatItem(b, c.src, j, len(c.src)), true
}

// finish adds the string that b holds, from start to end (after its
// closing quote, before a u8 suffix), and returns the offset after it.
func (c *csLexer) finish(b *builder, start, end int, interp bool) int {
	src := c.src
	if !interp && end+1 < len(src) && (src[end] == 'u' || src[end] == 'U') && src[end+1] == '8' &&
		!(end+2 < len(src) && isIdentChar(src[end+2])) {
		end += 2 // a UTF-8 string literal, "…"u8
	}
	c.addString(b.literal(start, end))
	c.note('o', start, end)
	return end
}

// braces decodes the braces at src[j] in an interpolated string whose
// holes open with n braces (n is 1 but for raw strings): a run of fewer
// than n is text, as are the braces beyond n of a longer run of opening
// braces; {{ and }} are braces in a string with one dollar; the last n of
// a run of opening braces open a hole, replaced by Placeholder. It
// reports false when a hole is left open at the end of the file.
func (c *csLexer) braces(b *builder, j, n int) (int, bool) {
	src := c.src
	ch := src[j]
	k := j
	for k < len(src) && src[k] == ch {
		k++
	}
	run := k - j
	if n == 1 {
		if run >= 2 {
			b.decoded(string(ch), j) // {{ or }}
			return j + 2, true
		}
		if ch == '}' {
			b.verbatim(src, j, j+1) // a lone closing brace (an error)
			return j + 1, true
		}
	} else if ch == '}' || run < n {
		b.verbatim(src, j, k)
		return k, true
	}
	open := k - n
	b.verbatim(src, j, open)
	end := c.hole(k, n)
	if end < 0 {
		return 0, false
	}
	b.decoded(Placeholder, open)
	return end, true
}

// hole skips the interpolation whose expression starts at i: the
// expression (lexed as code, reporting nothing), its alignment, its format
// clause and the n closing braces. It returns the offset after it, or -1
// when the file ends first.
func (c *csLexer) hole(i, n int) int {
	src := c.src
	emit, base, depth := c.emit, c.base, len(c.groups)
	c.emit, c.base = false, depth
	j := c.code(i, true)
	c.emit, c.base = emit, base
	c.groups = c.groups[:depth]
	if j >= len(src) {
		return -1
	}
	if src[j] == ':' {
		j++
		for j < len(src) && src[j] != '}' && src[j] != '"' && src[j] != '\n' && src[j] != '\r' {
			j++
		}
		if j >= len(src) {
			return -1
		}
		if src[j] != '}' {
			return j // the format clause is cut off: the string goes on
		}
	}
	k := j
	for k < len(src) && k-j < n && src[k] == '}' {
		k++
	}
	return k
}

// raw lexes a raw string whose n (at least three) opening quotes start at
// q. When only blanks follow them on their line, it is a multi-line raw
// string; otherwise it ends on its line, and an unterminated one is
// dropped there.
func (c *csLexer) raw(start, q, n, dollars int, format bool) int {
	src := c.src
	j := q + n
	k := j
	for k < len(src) && csBlank(src[k]) {
		k++
	}
	if k >= len(src) {
		return len(src)
	}
	if src[k] == '\n' || src[k] == '\r' {
		return c.rawLines(start, k, n, dollars, format)
	}
	b := newBuilder()
	for {
		if j >= len(src) {
			return j
		}
		ch := src[j]
		switch {
		case ch == '\n' || ch == '\r':
			return j
		case ch == '"':
			m := j
			for m < len(src) && src[m] == '"' {
				m++
			}
			if m-j >= n {
				return c.finish(&b, start, m, dollars > 0)
			}
			b.verbatim(src, j, m)
			j = m
		case (dollars > 0 || format) && (ch == '{' || ch == '}'):
			var ok bool
			if j, ok = c.stringBrace(&b, j, dollars); !ok {
				return len(src)
			}
		default:
			m := j + 1
			for m < len(src) && src[m] != '"' && src[m] != '\n' && src[m] != '\r' &&
				!((dollars > 0 || format) && (src[m] == '{' || src[m] == '}')) {
				m++
			}
			b.verbatim(src, j, m)
			j = m
		}
	}
}

// rawLines lexes a multi-line raw string whose opening line ends at
// src[k]. Its content is the lines between the opening and the closing
// line; the blanks before the closing quotes are removed from the start
// of every content line, and line breaks are kept as they are in the
// source (the one before the closing line is dropped). Holes may span
// lines; a line that starts inside a hole is not a content line. A
// closing run of quotes that does not start its line is an error: the
// string is dropped. An unterminated one ends the file.
func (c *csLexer) rawLines(start, k, n, dollars int, format bool) int {
	src := c.src
	bodyStart := k + 1
	if src[k] == '\r' && k+1 < len(src) && src[k+1] == '\n' {
		bodyStart = k + 2
	}
	var holes []csSpan
	closeLine, closeAt, closeEnd := -1, -1, -1
	for ls := bodyStart; closeLine < 0; {
		m := ls
		for m < len(src) && csBlank(src[m]) {
			m++
		}
		q := m
		for q < len(src) && src[q] == '"' {
			q++
		}
		if q-m >= n {
			closeLine, closeAt, closeEnd = ls, m, q
			break
		}
		for m < len(src) && src[m] != '\n' && src[m] != '\r' {
			switch {
			case src[m] == '"':
				q := m
				for q < len(src) && src[q] == '"' {
					q++
				}
				if q-m >= n {
					c.token('o', tokOther, start, q)
					return q
				}
				m = q
			case dollars > 0 && src[m] == '{':
				q := m
				for q < len(src) && src[q] == '{' {
					q++
				}
				if q-m < dollars {
					m = q
					continue
				}
				e := c.hole(q, dollars)
				if e < 0 {
					return len(src)
				}
				holes = append(holes, csSpan{q - dollars, e})
				m = e
			default:
				m++
			}
		}
		if m >= len(src) {
			return len(src)
		}
		if src[m] == '\r' && m+1 < len(src) && src[m+1] == '\n' {
			m++
		}
		ls = m + 1
	}
	indent := src[closeLine:closeAt]
	bodyEnd := closeLine
	if bodyEnd > bodyStart {
		bodyEnd--
		if src[bodyEnd] == '\n' && bodyEnd > bodyStart && src[bodyEnd-1] == '\r' {
			bodyEnd--
		}
	}
	b := newBuilder()
	h := 0
	lineStart := true
	for j := bodyStart; j < bodyEnd; {
		if lineStart {
			lineStart = false
			m := j
			for m < bodyEnd && m-j < len(indent) && src[m] == indent[m-j] {
				m++
			}
			if m > j {
				b.skip()
				j = m
				continue
			}
		}
		if h < len(holes) && j == holes[h].start {
			b.decoded(Placeholder, j)
			j = min(holes[h].end, bodyEnd)
			h++
			continue
		}
		ch := src[j]
		switch {
		case ch == '\n' || ch == '\r':
			e := j + 1
			if ch == '\r' && e < bodyEnd && src[e] == '\n' {
				e++
			}
			b.verbatim(src, j, e)
			j = e
			lineStart = true
		case format && (ch == '{' || ch == '}'):
			j = formatItem(&b, src, j, bodyEnd)
		default:
			limit := bodyEnd
			if h < len(holes) {
				limit = min(limit, holes[h].start)
			}
			m := j + 1
			for m < limit && src[m] != '\n' && src[m] != '\r' && !(format && (src[m] == '{' || src[m] == '}')) {
				m++
			}
			b.verbatim(src, j, m)
			j = m
		}
	}
	return c.finish(&b, start, closeEnd, dollars > 0)
}

// formatItem decodes the brace at src[j] of a composite format string
// (string.Format): {{ and }} are braces, and an item {index[,alignment]
// [:format]} ending before limit is replaced by Placeholder. Any other
// brace is text.
func formatItem(b *builder, src []byte, j, limit int) int {
	if j+1 < limit && src[j+1] == src[j] {
		b.decoded(string(src[j]), j)
		return j + 2
	}
	if src[j] == '{' {
		k := j + 1
		for k < limit && isDigit(src[k]) {
			k++
		}
		if k > j+1 {
			for k < limit && src[k] != '}' && src[k] != '{' && src[k] != '"' && src[k] != '\\' && src[k] != '\n' && src[k] != '\r' {
				k++
			}
			if k < limit && src[k] == '}' {
				b.decoded(Placeholder, j)
				return k + 1
			}
		}
	}
	b.verbatim(src, j, j+1)
	return j + 1
}

// csEscape decodes the escape at src[i] (a backslash) in a regular string
// and returns the offset after it. A surrogate pair written as two
// escapes is one character; an invalid escape (a compile error) keeps its
// backslash.
func csEscape(b *builder, src []byte, i int) int {
	if i+1 >= len(src) {
		b.verbatim(src, i, i+1)
		return i + 1
	}
	switch ch := src[i+1]; ch {
	case '\'', '"', '\\', '0', 'a', 'b', 'f', 'n', 'r', 't', 'v':
		v, _ := simpleEscape(ch)
		b.decoded(v, i)
		return i + 2
	case 'e':
		b.decoded("\x1b", i)
		return i + 2
	case 'x', 'u', 'U':
		r, next, ok := csHexEscape(src, i)
		if !ok {
			break
		}
		if r >= 0xD800 && r < 0xDC00 {
			if r2, next2, ok := csHexEscape(src, next); ok && r2 >= 0xDC00 && r2 < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
				next = next2
			}
		}
		b.decodedRune(r, i)
		return next
	}
	b.verbatim(src, i, i+1)
	return i + 1
}

// csHexEscape decodes a \x (one to four hex digits), \u (four) or \U
// (eight) escape at src[i]: the UTF-16 code unit or code point, and the
// offset after it.
func csHexEscape(src []byte, i int) (rune, int, bool) {
	if i+1 >= len(src) || src[i] != '\\' {
		return 0, 0, false
	}
	switch src[i+1] {
	case 'x':
		if r, n := hexRun(src, i+2, 4); n > 0 {
			return r, i + 2 + n, true
		}
	case 'u':
		if r, n := hexRun(src, i+2, 4); n == 4 {
			return r, i + 6, true
		}
	case 'U':
		if r, n := hexRun(src, i+2, 8); n == 8 && r <= 0x10FFFF {
			return r, i + 10, true
		}
	}
	return 0, 0, false
}
