package extract

// lexElixir tokenizes Elixir source: comments, double-quoted strings and
// single-quoted charlists, heredocs (triple double or single quotes)
// dedented by the closing delimiter's indentation, sigils (~s ~S ~q ~Q and
// multi-letter uppercase sigils such as ~SQL are reported; ~r, ~w and the
// others are skipped), #{…} interpolation replaced by Placeholder, atoms
// and ?a character literals (skipped), and `<>` concatenation.
func lexElixir(src []byte) *lexer {
	lx := newLexer(src)
	for i := 0; i < len(src); {
		i = lx.exCode(i)
		if i < len(src) {
			lx.add(tokOther, i, i+1)
			i++
		}
	}
	return lx
}

// exCode lexes code from i until an unmatched closing brace and returns its
// offset, or len(src).
func (lx *lexer) exCode(i int) int {
	src := lx.src
	depth := 0
	for i < len(src) {
		c, next := src[i], byteAt(src, i+1)
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '#':
			i = lx.lineComment(i, i+1)
		case c == '"' || c == '\'':
			i = lx.exString(i, i, c, true, true)
		case c == '~' && (next >= 'a' && next <= 'z' || next >= 'A' && next <= 'Z'):
			i = lx.exSigil(i)
		case c == '?' && next != 0 && !(i > 0 && isIdentChar(src[i-1])):
			// A character literal such as ?a, ?" or ?\n.
			j := i + 2
			if next == '\\' && j < len(src) {
				j++
			}
			for j < len(src) && src[j]&0xC0 == 0x80 {
				j++
			}
			lx.add(tokOther, i, j)
			i = j
		case c == ':' && (next == '"' || next == '\'') && !(i > 0 && (isIdentChar(src[i-1]) || src[i-1] == ':')):
			emit := lx.emit
			lx.emit = false
			i = lx.exString(i+1, i+1, next, true, false)
			lx.emit = emit
			lx.add(tokOther, i, i)
		case c == ':' && next == ':':
			lx.add(tokOther, i, i+2)
			i += 2
		case c == '<' && next == '>':
			lx.add(tokPlus, i, i+2)
			i += 2
		case isIdentStart(c) || c == '@':
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '?' || src[j] == '!') {
				j++
			}
			lx.add(tokIdent, i, j)
			i = j
		case isDigit(c):
			i = lx.number(i, false)
		case c == '.' && next != '.':
			lx.add(tokDot, i, i+1)
			i++
		default:
			if !lx.punct(i, &depth, true) {
				return i
			}
			i++
		}
	}
	return i
}

// exSigil lexes a sigil at src[i] ('~').
func (lx *lexer) exSigil(i int) int {
	src := lx.src
	j := i + 1
	upper := src[j] >= 'A' && src[j] <= 'Z'
	for j < len(src) && (src[j] >= 'A' && src[j] <= 'Z' || src[j] >= 'a' && src[j] <= 'z' && j == i+1 || isDigit(src[j]) && upper) {
		j++
	}
	name := string(src[i+1 : j])
	if j >= len(src) {
		lx.add(tokOther, i, j)
		return j
	}
	report := name == "s" || name == "S" || name == "q" || name == "Q" || len(name) > 1
	open := src[j]
	var end int
	switch open {
	case '"', '\'':
		end = lx.exString(i, j, open, !upper, report)
	case '(', '[', '{', '<', '/', '|':
		end = lx.exDelimited(i, j+1, closingDelim(open), !upper, report)
	default:
		lx.add(tokOther, i, j)
		return j
	}
	for end < len(src) && (src[end] >= 'a' && src[end] <= 'z' || src[end] >= 'A' && src[end] <= 'Z') {
		end++ // modifiers
	}
	if !report {
		lx.add(tokOther, i, end)
	}
	return end
}

// exString lexes a quoted literal or heredoc whose opening quote is at
// src[q] (start is where the expression starts, before a sigil name).
func (lx *lexer) exString(start, q int, quote byte, escapes, report bool) int {
	src := lx.src
	if q+2 < len(src) && src[q+1] == quote && src[q+2] == quote {
		return lx.exHeredoc(start, q, quote, escapes, report)
	}
	return lx.exDelimited(start, q+1, quote, escapes, report)
}

// exDelimited lexes a literal body from i up to the close delimiter.
func (lx *lexer) exDelimited(start, i int, close byte, escapes, report bool) int {
	src := lx.src
	body := i
	b := newBuilder()
	for {
		if i >= len(src) {
			return len(src)
		}
		c := src[i]
		switch {
		case c == close:
			// "key": value is a quoted keyword (an atom), not a string.
			keyword := (close == '"' || close == '\'') && start+1 == body && i+2 < len(src) && src[i+1] == ':' &&
				(src[i+2] == ' ' || src[i+2] == '\t' || src[i+2] == '\n' || src[i+2] == '\r')
			if report && !keyword {
				lx.addString(b.literal(start, i+1))
			}
			return i + 1
		case c == '\\':
			if escapes {
				i = exEscape(&b, src, i)
				continue
			}
			if i+1 < len(src) && src[i+1] == close {
				b.decoded(string(close), i)
				i += 2
				continue
			}
			b.verbatim(src, i, i+1)
			i++
		case c == '#' && escapes && i+1 < len(src) && src[i+1] == '{':
			end := lx.exInterpolation(i)
			if end > len(src) {
				return len(src)
			}
			b.decoded(Placeholder, i)
			i = end
		default:
			k := i + 1
			for k < len(src) && src[k] != close && src[k] != '\\' && src[k] != '#' {
				k++
			}
			b.verbatim(src, i, k)
			i = k
		}
	}
}

// exInterpolation skips #{…} at src[i] and returns the offset after it,
// past len(src) when unterminated.
func (lx *lexer) exInterpolation(i int) int {
	emit := lx.emit
	lx.emit = false
	end := lx.exCode(i + 2)
	lx.emit = emit
	if end >= len(lx.src) {
		return len(lx.src) + 1
	}
	return end + 1
}

// exHeredoc lexes a heredoc whose opening triple quote is at src[q]. The
// content starts on the next line; the closing delimiter's indentation is
// removed from every line.
func (lx *lexer) exHeredoc(start, q int, quote byte, escapes, report bool) int {
	src := lx.src
	bodyStart := lineEnd(src, q+3) + 1
	if bodyStart > len(src) {
		return len(src)
	}
	// Find the closing line: optional indentation, then three quotes.
	closeLine, closeQuote := -1, -1
	for ls := bodyStart; ls < len(src); {
		k := ls
		for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		if k+2 < len(src) && src[k] == quote && src[k+1] == quote && src[k+2] == quote {
			closeLine, closeQuote = ls, k
			break
		}
		// Skip the line, but an interpolation may span lines.
		for k < len(src) && src[k] != '\n' {
			if escapes && src[k] == '\\' && k+1 < len(src) && src[k+1] != '\n' {
				k += 2
				continue
			}
			if escapes && src[k] == '#' && k+1 < len(src) && src[k+1] == '{' {
				k = lx.exInterpolation(k)
				continue
			}
			k++
		}
		ls = k + 1
	}
	if closeLine < 0 {
		return len(src)
	}
	indent := closeQuote - closeLine
	end := closeQuote + 3
	if !report {
		return end
	}
	b := newBuilder()
	dedented := -1
	for i := bodyStart; i < closeLine; {
		if i != dedented && (i == bodyStart || src[i-1] == '\n') {
			dedented = i
			i = b.dedent(src, i, closeLine, indent)
			continue
		}
		c := src[i]
		switch {
		case escapes && c == '\\':
			i = exEscape(&b, src, i)
		case escapes && c == '#' && i+1 < len(src) && src[i+1] == '{':
			e := lx.exInterpolation(i)
			if e > closeLine {
				e = closeLine
			}
			b.decoded(Placeholder, i)
			i = e
		default:
			k := i + 1
			for k < closeLine && src[k-1] != '\n' && src[k] != '\\' && src[k] != '#' {
				k++
			}
			b.verbatim(src, i, k)
			i = k
		}
	}
	lx.addString(b.literal(start, end))
	return end
}

// exEscape decodes an escape at src[i] (a backslash) and returns the offset
// after it.
func exEscape(b *builder, src []byte, i int) int {
	if i+1 < len(src) {
		switch src[i+1] {
		case 'd':
			b.decoded("\x7f", i)
			return i + 2
		case 'x':
			if v, n := hexRun(src, i+2, 2); n > 0 {
				b.decodedRune(v, i)
				return i + 2 + n
			}
		case 'u':
			if v, next, ok := bracedHex(src, i+2, 6); ok {
				b.decodedRune(v, i)
				return next
			}
		}
	}
	return rbFamilyEscape(b, src, i)
}
