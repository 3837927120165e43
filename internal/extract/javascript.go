package extract

// jsRegexKeywords are the keywords after which a slash starts a regular
// expression rather than a division.
var jsRegexKeywords = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true,
	"do": true, "else": true, "yield": true, "await": true, "extends": true,
}

// jsLexer tokenizes JavaScript and TypeScript.
type jsLexer struct {
	*lexer
	regexOK bool // a slash here starts a regular expression
}

// lexJavaScript tokenizes JavaScript and TypeScript source: comments,
// quoted strings, template literals (tagged or not) with `${…}` replaced by
// Placeholder, regular expression literals (skipped) and `+`.
func lexJavaScript(src []byte) *lexer {
	js := &jsLexer{lexer: newLexer(src), regexOK: true}
	i := 0
	if len(src) > 1 && src[0] == '#' && src[1] == '!' {
		i = js.lineComment(0, 2)
	}
	for i < len(src) {
		i = js.run(i)
		if i < len(src) { // a stray closing brace at top level
			js.add(tokOther, i, i+1)
			js.regexOK = true
			i++
		}
	}
	return js.lexer
}

// run lexes code from i until an unmatched closing brace (the end of a
// template substitution) and returns its offset, or len(src).
func (js *jsLexer) run(i int) int {
	src := js.src
	depth := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = js.lineComment(i, i+2)
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = js.starComment(i, false)
		case c == '/' && js.regexOK:
			i = jsRegex(src, i)
			js.add(tokOther, i, i)
			js.regexOK = false
		case c == '"' || c == '\'':
			i = js.quoted(i)
			js.regexOK = false
		case c == '`':
			i = js.template(i)
			js.regexOK = false
		case isIdentStart(c) || c == '$' || c == '#':
			j := i + 1
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '$') {
				j++
			}
			if jsRegexKeywords[string(src[i:j])] {
				js.add(tokOther, i, j)
				js.regexOK = true
			} else {
				js.add(tokIdent, i, j)
				js.regexOK = false
			}
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			i = js.number(i, true)
			js.regexOK = false
		case c == '.' && !(i+2 < len(src) && src[i+1] == '.' && src[i+2] == '.'):
			js.add(tokDot, i, i+1)
			js.regexOK = false
			i++
		case c == '?' && i+1 < len(src) && src[i+1] == '.' && !(i+2 < len(src) && isDigit(src[i+2])):
			js.add(tokDot, i, i+2)
			js.regexOK = false
			i += 2
		case c == '+':
			// After x++ a slash divides; after + and += a value follows.
			js.regexOK = !(i+1 < len(src) && src[i+1] == '+')
			i = js.operator(i, tokPlus, "+=")
		case c == ')' || c == ']':
			js.add(tokOther, i, i+1)
			js.regexOK = false
			i++
		default:
			if !js.punct(i, &depth, true) {
				return i
			}
			js.regexOK = true
			i++
		}
	}
	return i
}

// jsRegex skips the regular expression literal starting at src[i] and
// returns the offset after its flags. An unterminated literal ends at the
// line break.
func jsRegex(src []byte, i int) int {
	i++
	class := false
	for i < len(src) {
		switch src[i] {
		case '\\':
			i++
		case '[':
			class = true
		case ']':
			class = false
		case '\n', '\r':
			return i
		case '/':
			if !class {
				i++
				for i < len(src) && isIdentChar(src[i]) {
					i++
				}
				return i
			}
		}
		i++
	}
	return len(src)
}

// quoted lexes a single- or double-quoted string at src[i].
func (js *jsLexer) quoted(i int) int {
	src := js.src
	quote := src[i]
	b := newBuilder()
	j := i + 1
	for {
		if j >= len(src) || src[j] == '\n' || src[j] == '\r' {
			return j // unterminated: dropped
		}
		c := src[j]
		if c == quote {
			break
		}
		if c == '\\' {
			j = jsEscape(&b, src, j)
			continue
		}
		k := j + 1
		for k < len(src) && src[k] != quote && src[k] != '\\' && src[k] != '\n' && src[k] != '\r' {
			k++
		}
		b.verbatim(src, j, k)
		j = k
	}
	js.addString(b.literal(i, j+1))
	return j + 1
}

// template lexes a template literal at src[i], replacing substitutions with
// Placeholder and normalising line terminators to LF.
func (js *jsLexer) template(i int) int {
	src := js.src
	b := newBuilder()
	j := i + 1
	for {
		if j >= len(src) {
			return j
		}
		c := src[j]
		switch {
		case c == '`':
			js.addString(b.literal(i, j+1))
			return j + 1
		case c == '\\':
			j = jsEscape(&b, src, j)
		case c == '$' && j+1 < len(src) && src[j+1] == '{':
			emit, regexOK := js.emit, js.regexOK
			js.emit, js.regexOK = false, true
			end := js.run(j + 2)
			js.emit, js.regexOK = emit, regexOK
			if end >= len(src) {
				return end
			}
			b.decoded(Placeholder, j)
			j = end + 1
		case c == '\r':
			b.decoded("\n", j)
			j++
			if j < len(src) && src[j] == '\n' {
				j++
			}
		default:
			k := j + 1
			for k < len(src) && src[k] != '`' && src[k] != '\\' && src[k] != '$' && src[k] != '\r' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
}

// jsEscape decodes the escape sequence at src[i] (a backslash) and returns
// the offset after it.
func jsEscape(b *builder, src []byte, i int) int {
	if next, ok := escapeBreak(b, src, i, true); ok {
		return next
	}
	c := src[i+1]
	switch c {
	case 'x':
		if r, n := hexRun(src, i+2, 2); n == 2 {
			b.decodedRune(r, i)
			return i + 4
		}
	case 'u':
		if i+2 < len(src) && src[i+2] == '{' {
			if r, next, ok := bracedHex(src, i+2, 8); ok {
				b.decodedRune(r, i)
				return next
			}
			break
		}
		if r, n := hexRun(src, i+2, 4); n == 4 {
			// A surrogate pair written as two escapes.
			if r >= 0xD800 && r < 0xDC00 && i+11 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
				if lo, m := hexRun(src, i+8, 4); m == 4 && lo >= 0xDC00 && lo < 0xE000 {
					b.decodedRune((r-0xD800)<<10+(lo-0xDC00)+0x10000, i)
					return i + 12
				}
			}
			b.decodedRune(r, i)
			return i + 6
		}
	}
	if c >= '0' && c <= '7' {
		// \0, and legacy octal escapes in sloppy-mode code.
		return octalEscape(b, src, i)
	}
	if s, ok := simpleEscape(c); ok && c != 'a' {
		b.decoded(s, i)
		return i + 2
	}
	// Any other escaped character stands for itself.
	return selfEscape(b, src, i)
}
