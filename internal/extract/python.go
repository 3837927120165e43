package extract

import "strings"

// lexPython tokenizes Python source: comments, string literals with any
// prefix (r, b, u, f, t and their combinations), triple quotes, f-string
// replacement fields, implicit concatenation of adjacent literals (across
// lines inside brackets) and `+`.
func lexPython(src []byte) *lexer {
	lx := newLexer(src)
	lx.adjacent = true
	depth := 0
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			if depth == 0 {
				lx.add(tokBreak, i, i+1)
			}
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i += 2
			if src[i-1] == '\r' && i < len(src) && src[i] == '\n' {
				i++
			}
		case c == '#':
			i = lx.lineComment(i, i+1)
		case c == '"' || c == '\'':
			i = lx.pyString(i, i, "")
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && pyPrefix(src[i:j]) {
				i = lx.pyString(i, j, strings.ToLower(string(src[i:j])))
				continue
			}
			lx.add(tokIdent, i, j)
			i = j
		case isDigit(c):
			i = lx.number(i, true)
		case c == '.':
			lx.add(tokDot, i, i+1)
			i++
		case c == '+' && !(i+1 < len(src) && src[i+1] == '='):
			lx.add(tokPlus, i, i+1)
			i++
		case c == '(' || c == '[' || c == '{':
			depth++
			lx.add(tokOther, i, i+1)
			i++
		case c == ')' || c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
			lx.add(tokOther, i, i+1)
			i++
		default:
			lx.add(tokOther, i, i+1)
			i++
		}
	}
	return lx
}

func pyPrefix(p []byte) bool {
	if len(p) > 2 {
		return false
	}
	var r, other int
	for _, c := range p {
		switch c | 0x20 {
		case 'r':
			r++
		case 'b', 'u', 'f', 't':
			other++
		default:
			return false
		}
	}
	if r > 1 || other > 1 {
		return false
	}
	return !(other == 1 && r == 0 && len(p) == 2) && !(strings.ContainsAny(string(p), "uU") && len(p) == 2)
}

// pyString lexes the literal whose prefix starts at start and whose opening
// quote is at q. It returns the offset after the literal, or after the
// offending line break when the literal is unterminated.
func (lx *lexer) pyString(start, q int, prefix string) int {
	src := lx.src
	quote := src[q]
	triple := q+2 < len(src) && src[q+1] == quote && src[q+2] == quote
	raw := strings.Contains(prefix, "r")
	fstr := strings.ContainsAny(prefix, "ft")
	bytesLit := strings.Contains(prefix, "b")
	i := q + 1
	if triple {
		i = q + 3
	}
	b := newBuilder()
	for {
		if i >= len(src) {
			return len(src)
		}
		c := src[i]
		if c == quote {
			if !triple {
				break
			}
			if i+2 < len(src) && src[i+1] == quote && src[i+2] == quote {
				break
			}
		}
		if c == '\n' && !triple {
			return i
		}
		switch {
		case c == '\\':
			if i+1 >= len(src) {
				return len(src)
			}
			if raw {
				b.verbatim(src, i, i+2)
				if src[i+1] == '\r' && i+2 < len(src) && src[i+2] == '\n' {
					b.verbatim(src, i+2, i+3)
					i++
				}
				i += 2
				continue
			}
			i = pyEscape(&b, src, i, bytesLit)
		case fstr && c == '{':
			if i+1 < len(src) && src[i+1] == '{' {
				b.decoded("{", i)
				i += 2
				continue
			}
			end, ok := pyField(src, i+1, quote, triple)
			if !ok {
				return end
			}
			b.decoded(Placeholder, i)
			i = end
		case fstr && c == '}' && i+1 < len(src) && src[i+1] == '}':
			b.decoded("}", i)
			i += 2
		default:
			j := i + 1
			for j < len(src) && src[j] != quote && src[j] != '\\' && src[j] != '\n' && src[j] != '{' && src[j] != '}' {
				j++
			}
			b.verbatim(src, i, j)
			i = j
		}
	}
	end := i + 1
	if triple {
		end = i + 3
	}
	lx.addString(b.literal(start, end))
	return end
}

// pyEscape decodes the escape sequence at src[i] (a backslash) and returns
// the offset after it.
func pyEscape(b *builder, src []byte, i int, bytesLit bool) int {
	if next, ok := escapeBreak(b, src, i, true); ok {
		return next
	}
	c := src[i+1]
	switch {
	case c >= '0' && c <= '7':
		r, n := octalRun(src, i+1, 3)
		if bytesLit {
			b.decodedByte(r, i)
		} else {
			b.decodedRune(r, i)
		}
		return i + 1 + n
	case c == 'x':
		r, n := hexRun(src, i+2, 2)
		if n < 2 {
			break
		}
		if bytesLit {
			b.decodedByte(r, i)
		} else {
			b.decodedRune(r, i)
		}
		return i + 4
	case (c == 'u' || c == 'U') && !bytesLit:
		want := 4
		if c == 'U' {
			want = 8
		}
		r, n := hexRun(src, i+2, want)
		if n < want {
			break
		}
		b.decodedRune(r, i)
		return i + 2 + n
	}
	// \` and \$ are not escapes in Python ("\0" is handled as octal above);
	// unknown escapes (and \N{...}) keep the backslash.
	return simpleOrKept(b, src, i, "`$")
}

// pyField skips an f-string replacement field whose body starts at i (just
// after the opening brace). It returns the offset after the closing brace.
func pyField(src []byte, i int, quote byte, triple bool) (int, bool) {
	depth := 1
	spec := false
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n' && !triple:
			return i, false
		case c == quote && !triple && !spec:
			// Before Python 3.12 the outer quote cannot appear inside a
			// field; treat it as a nested string only if it closes on the
			// same line, otherwise as the end of the literal.
			j := i + 1
			for j < len(src) && src[j] != quote && src[j] != '\n' {
				j++
			}
			if j >= len(src) || src[j] == '\n' {
				return i, false
			}
			i = j + 1
			continue
		case (c == '"' || c == '\'') && !spec:
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
			if depth == 0 {
				return i + 1, true
			}
			if depth == 1 {
				spec = false
			}
		case c == ':' && depth == 1:
			spec = true
		case c == '!' && depth == 1 && i+1 < len(src) && src[i+1] != '=':
			spec = true
		}
		i++
	}
	return len(src), false
}
