package extract

import "bytes"

// rbValueKeywords are the keywords after which a value (and so a regex, a
// percent literal, a character literal or a heredoc) may start.
var rbValueKeywords = map[string]bool{
	"if": true, "unless": true, "while": true, "until": true, "and": true,
	"or": true, "not": true, "return": true, "when": true, "case": true,
	"in": true, "then": true, "else": true, "elsif": true, "do": true,
	"begin": true, "yield": true, "puts": true, "raise": true,
}

// rbLexer tokenizes Ruby.
type rbLexer struct {
	*lexer
	valueOK   bool // a value may start here
	lastIdent bool // the previous token was an identifier (a possible command call)
	pending   []rbHeredoc
}

// lexRuby tokenizes Ruby source: comments (including =begin/=end), single
// and double quotes, %q/%Q/%() literals with any delimiters, heredocs
// (<<ID, <<-ID, <<~ID with squiggly dedent, quoted identifiers), #{…} and
// #@var interpolation replaced by Placeholder, regex and %w/%i/%r/%s/%x
// literals, symbols and ?a character literals (skipped), `+`, adjacency and
// backslash line continuation. Lexing stops at __END__.
func lexRuby(src []byte) *lexer {
	r := &rbLexer{lexer: newLexer(src), valueOK: true}
	r.adjacent = true
	for i := 0; i < len(src); {
		i = r.run(i, false)
		if i < len(src) {
			r.add(tokOther, i, i+1)
			i++
		}
	}
	for _, h := range r.pending {
		r.dropHeredoc(h)
	}
	return r.lexer
}

func (r *rbLexer) dropHeredoc(h rbHeredoc) {
	if h.tok >= 0 {
		r.toks[h.tok].kind = tokOther
	}
}

func (r *rbLexer) set(value, ident bool) { r.valueOK, r.lastIdent = value, ident }

// run lexes code from i. With inner set it stops at an unmatched closing
// brace (the end of an interpolation) and returns its offset.
func (r *rbLexer) run(i int, inner bool) int {
	src := r.src
	depth := 0
	for i < len(src) {
		c := src[i]
		lineStart := i == 0 || src[i-1] == '\n'
		space := i > 0 && (src[i-1] == ' ' || src[i-1] == '\t')
		next := byteAt(src, i+1)
		switch {
		case c == '\n':
			r.add(tokBreak, i, i+1)
			r.set(true, false)
			i++
			if len(r.pending) > 0 {
				i = r.heredocBodies(i)
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '\\' && (next == '\n' || next == '\r'):
			i += 2
			if next == '\r' && i < len(src) && src[i] == '\n' {
				i++
			}
		case c == '#':
			i = r.lineComment(i, i+1)
		case lineStart && c == '=' && bytes.HasPrefix(src[i:], []byte("=begin")) && (i+6 == len(src) || !isIdentChar(src[i+6])):
			i = r.blockComment(i)
		case lineStart && !inner && bytes.HasPrefix(src[i:], []byte("__END__")) &&
			(i+7 == len(src) || src[i+7] == '\n' || src[i+7] == '\r'):
			return len(src)
		case c == '"':
			i = r.quoted(i, i+1, '"', '"', true, true)
			r.set(false, false)
		case c == '\'':
			i = r.quoted(i, i+1, '\'', '\'', false, true)
			r.set(false, false)
		case c == '`':
			i = r.quoted(i, i+1, '`', '`', true, false)
			r.set(false, false)
		case c == '%' && (r.valueOK || r.lastIdent && space && next != ' ' && next != '='):
			if end, ok := r.percent(i); ok {
				i = end
				r.set(false, false)
				continue
			}
			r.add(tokOther, i, i+1)
			r.set(true, false)
			i++
		case c == '?' && (r.valueOK || r.lastIdent && space) && r.charLiteral(i) > i:
			i = r.charLiteral(i)
			r.add(tokOther, i, i)
			r.set(false, false)
		case c == '/' && (r.valueOK || r.lastIdent && space && next != ' ' && next != '='):
			i = r.quoted(i, i+1, '/', '/', true, false)
			for i < len(src) && isIdentChar(src[i]) && src[i] < 0x80 {
				i++
			}
			r.add(tokOther, i, i)
			r.set(false, false)
		case c == '<' && next == '<':
			if end, ok := r.heredocStart(i); ok {
				i = end
				r.set(false, false)
				continue
			}
			r.add(tokOther, i, i+2)
			r.set(true, false)
			i += 2
		case c == ':' && next == ':':
			r.add(tokDot, i, i+2)
			r.set(false, false)
			i += 2
		case c == ':' && (next == '"' || next == '\'') && !(i > 0 && isIdentChar(src[i-1])) && (r.valueOK || space):
			i = r.quoted(i+1, i+2, next, next, next == '"', false)
			r.add(tokOther, i, i)
			r.set(false, false)
		case c == ':' && isIdentStart(next) && (r.valueOK || space):
			j := i + 2
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '?' || src[j] == '!' || src[j] == '=') && !(j+1 < len(src) && (src[j+1] == '=' || src[j+1] == '>' || src[j+1] == '~')) {
				j++
			}
			r.add(tokOther, i, j)
			r.set(false, false)
			i = j
		case c == ':' && (r.valueOK || space) && rbOperatorSymbol(src[i+1:]) > 0:
			// An operator method name such as :% or :<=>.
			j := i + 1 + rbOperatorSymbol(src[i+1:])
			r.add(tokOther, i, j)
			r.set(false, false)
			i = j
		case c == '@' || c == '$':
			j := i + 1
			if c == '@' && next == '@' {
				j++
			}
			if j < len(src) && isIdentStart(src[j]) {
				for j < len(src) && isIdentChar(src[j]) {
					j++
				}
			} else if c == '$' && j < len(src) && src[j] != '\n' {
				j++ // special globals such as $! and $0
			}
			r.add(tokIdent, i, j)
			r.set(false, false)
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '?' || src[j] == '!') &&
				!(j+1 < len(src) && (src[j+1] == '=' && !(j+2 < len(src) && src[j+2] == '=') || src[j+1] == ':')) {
				j++
			}
			if rbValueKeywords[string(src[i:j])] {
				r.add(tokOther, i, j)
				r.set(true, false)
			} else {
				r.add(tokIdent, i, j)
				r.set(false, true)
			}
			i = j
		case isDigit(c):
			i = r.number(i, false)
			r.set(false, false)
		case c == '.' && next != '.':
			r.add(tokDot, i, i+1)
			r.set(false, false)
			i++
		case c == '&' && next == '.':
			r.add(tokDot, i, i+2)
			r.set(false, false)
			i += 2
		case c == '+' && next != '=':
			r.add(tokPlus, i, i+1)
			r.set(true, false)
			i++
		case c == ')' || c == ']':
			r.add(tokOther, i, i+1)
			r.set(false, false)
			i++
		default:
			if !r.punct(i, &depth, inner) {
				return i
			}
			// After an opening bracket or an operator a value may start.
			r.set(c != '}', false)
			i++
		}
	}
	return i
}

// blockComment skips an =begin … =end comment at src[i].
func (r *rbLexer) blockComment(i int) int {
	src := r.src
	k := lineEnd(src, i)
	for k < len(src) {
		k++ // past '\n'
		if bytes.HasPrefix(src[k:], []byte("=end")) && (k+4 == len(src) || !isIdentChar(src[k+4])) {
			end := lineEnd(src, k)
			r.comment(i, end, i+6, k)
			return end
		}
		k = lineEnd(src, k)
	}
	r.comment(i, len(src), i+6, len(src))
	return len(src)
}

// charLiteral returns the offset after a ?a character literal at src[i],
// or i when the question mark is an operator.
func (r *rbLexer) charLiteral(i int) int {
	src := r.src
	if i+1 >= len(src) {
		return i
	}
	c := src[i+1]
	switch {
	case c == '\\' && i+2 < len(src):
		j := i + 3
		if src[i+2] == 'u' && j < len(src) && src[j] == '{' {
			for j < len(src) && src[j] != '}' && src[j] != '\n' {
				j++
			}
			return j + 1
		}
		for j < len(src) && isHex(src[j]) && j < i+7 && (src[i+2] == 'u' || src[i+2] == 'x') {
			j++
		}
		return j
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return i
	case c >= 0x80:
		j := i + 2
		for j < len(src) && src[j]&0xC0 == 0x80 {
			j++
		}
		if j < len(src) && isIdentChar(src[j]) {
			return i
		}
		return j
	}
	if i+2 < len(src) && isIdentChar(src[i+2]) && isIdentChar(c) {
		return i
	}
	return i + 2
}

// percent lexes a %-literal at src[i]. It reports false when the percent
// sign is an operator.
func (r *rbLexer) percent(i int) (int, bool) {
	src := r.src
	k := i + 1
	var typ byte
	if k < len(src) && (src[k] >= 'a' && src[k] <= 'z' || src[k] >= 'A' && src[k] <= 'Z') {
		typ = src[k]
		k++
	}
	if k >= len(src) {
		return 0, false
	}
	open := src[k]
	if isIdentChar(open) || open == ' ' || open == '\t' || open == '\n' || open == '\r' || open == '=' && typ == 0 {
		return 0, false
	}
	switch typ {
	case 0, 'Q':
		return r.quoted(i, k+1, open, closingDelim(open), true, true), true
	case 'q':
		return r.quoted(i, k+1, open, closingDelim(open), false, true), true
	case 'W', 'I', 'x':
		return r.quoted(i, k+1, open, closingDelim(open), true, false), true
	case 'w', 'i', 's':
		return r.quoted(i, k+1, open, closingDelim(open), false, false), true
	case 'r':
		end := r.quoted(i, k+1, open, closingDelim(open), true, false)
		for end < len(src) && src[end] >= 'a' && src[end] <= 'z' {
			end++
		}
		return end, true
	}
	return 0, false
}

// quoted lexes a literal opened at src[start] whose body starts at body and
// ends at the close delimiter (bracket delimiters nest). double selects
// escapes and interpolation; emit whether it is reported.
func (r *rbLexer) quoted(start, body int, open, close byte, double, emit bool) int {
	src := r.src
	b := newBuilder()
	depth := 0
	j := body
	for {
		if j >= len(src) {
			return len(src)
		}
		c := src[j]
		switch {
		case c == close && depth == 0:
			if emit {
				r.addString(b.literal(start, j+1))
			}
			return j + 1
		case c == '\\':
			if double {
				j = rbEscape(&b, src, j)
				continue
			}
			if j+1 < len(src) && (src[j+1] == '\\' || src[j+1] == close || src[j+1] == open) {
				b.decoded(string(src[j+1]), j)
				j += 2
				continue
			}
			b.verbatim(src, j, j+1)
			j++
		case double && c == '#':
			end, ok := r.interpolation(j)
			if !ok {
				end = j
			}
			if j, ok = b.interpolation(src, j, end); !ok {
				return len(src)
			}
		default:
			if open != close {
				if c == open {
					depth++
				} else if c == close {
					depth--
				}
			}
			b.verbatim(src, j, j+1)
			j++
		}
	}
}

// interpolation recognises #{…}, #@var, #@@var and #$var at src[i] ('#').
// It returns the offset after it, past len(src) when unterminated.
func (r *rbLexer) interpolation(i int) (int, bool) {
	src := r.src
	if i+1 >= len(src) {
		return 0, false
	}
	switch src[i+1] {
	case '{':
		emit, pending, valueOK, lastIdent := r.emit, r.pending, r.valueOK, r.lastIdent
		r.emit, r.pending = false, nil
		r.set(true, false)
		end := r.run(i+2, true)
		r.emit, r.pending = emit, pending
		r.set(valueOK, lastIdent)
		if end >= len(src) {
			return len(src) + 1, true
		}
		return end + 1, true
	case '@', '$':
		j := i + 2
		if src[i+1] == '@' && j < len(src) && src[j] == '@' {
			j++
		}
		if j >= len(src) || !isIdentStart(src[j]) {
			return 0, false
		}
		for j < len(src) && isIdentChar(src[j]) {
			j++
		}
		return j, true
	}
	return 0, false
}

// rbEscape decodes a double-quote escape at src[i] (a backslash) and
// returns the offset after it.
func rbEscape(b *builder, src []byte, i int) int {
	if i+1 < len(src) {
		switch c := src[i+1]; {
		case c >= '0' && c <= '7':
			v, n := octalRun(src, i+1, 3)
			b.decodedByte(v, i)
			return i + 1 + n
		case c == 'x':
			if v, n := hexRun(src, i+2, 2); n > 0 {
				b.decodedByte(v, i)
				return i + 2 + n
			}
		case c == 'u':
			if next, ok := rbCodePoints(b, src, i); ok {
				return next
			}
		}
		if v, n, ok := rbMetaCtrl(src, i); ok {
			b.decodedByte(rune(v), i)
			return i + n
		}
	}
	return rbFamilyEscape(b, src, i)
}

// rbCodePoints decodes \u{…} at src[i], one or more code points separated
// by blanks, and returns the offset after it, or false.
func rbCodePoints(b *builder, src []byte, i int) (int, bool) {
	if i+2 >= len(src) || src[i+2] != '{' {
		return 0, false
	}
	j := i + 3
	var out []byte
	for j < len(src) && src[j] != '}' {
		if src[j] == ' ' || src[j] == '\t' {
			j++
			continue
		}
		v, n := hexRun(src, j, 6)
		if n == 0 {
			break
		}
		out = append(out, string(runeOrReplacement(v))...)
		j += n
	}
	if j < len(src) && src[j] == '}' {
		b.decoded(string(out), i)
		if len(out) == 0 {
			b.skip()
		}
		return j + 1, true
	}
	return 0, false
}

// rbMetaCtrl decodes the control and meta escapes \cx, \C-x and \M-x,
// which may nest (\M-\C-x), at src[i]. It returns the byte and the length
// of the escape.
func rbMetaCtrl(src []byte, i int) (byte, int, bool) {
	if i+2 >= len(src) || src[i] != '\\' {
		return 0, 0, false
	}
	var ctrl, meta bool
	j := i + 2
	switch {
	case src[i+1] == 'c':
		ctrl = true
	case src[i+1] == 'C' && src[i+2] == '-':
		ctrl, j = true, i+3
	case src[i+1] == 'M' && src[i+2] == '-':
		meta, j = true, i+3
	default:
		return 0, 0, false
	}
	if j >= len(src) {
		return 0, 0, false
	}
	c, end := src[j], j+1
	if c == '\\' {
		if v, n, ok := rbMetaCtrl(src, j); ok {
			c, end = v, j+n
		} else if j+1 < len(src) {
			c, end = src[j+1], j+2
			if s, ok := simpleEscape(src[j+1]); ok {
				c = s[0]
			}
		} else {
			return 0, 0, false
		}
	}
	if ctrl {
		if c == '?' {
			c = 0x7f
		} else {
			c &= 0x9f
		}
	}
	if meta {
		c |= 0x80
	}
	return c, end - i, true
}

func runeOrReplacement(v rune) rune {
	if v > 0x10FFFF || v >= 0xD800 && v < 0xE000 {
		return 0xFFFD
	}
	return v
}

var rbOperators = []string{"[]=", "[]", "<=>", "===", "==", "=~", "!=", "!~", "**", "+@", "-@", "<<", ">>", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "!", "&", "|", "^", "~"}

// rbOperatorSymbol returns the length of the operator method name at the
// start of b, or 0.
func rbOperatorSymbol(b []byte) int {
	for _, op := range rbOperators {
		if bytes.HasPrefix(b, []byte(op)) {
			return len(op)
		}
	}
	return 0
}
