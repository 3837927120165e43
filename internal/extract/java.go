package extract

import "bytes"

// lexJava tokenizes Java or, with kotlin set, Kotlin source: comments
// (nested in Kotlin), character literals (skipped), quoted strings, Java
// text blocks with incidental indentation stripped, Kotlin raw strings, and
// Kotlin `${…}` and `$name` templates replaced by Placeholder.
func lexJava(src []byte, kotlin bool) *lexer {
	lx := newLexer(src)
	for i := 0; i < len(src); {
		i = lx.javaCode(i, kotlin)
		if i < len(src) {
			lx.add(tokOther, i, i+1)
			i++
		}
	}
	return lx
}

// javaCode lexes code from i until an unmatched closing brace and returns
// its offset, or len(src).
func (lx *lexer) javaCode(i int, kotlin bool) int {
	src := lx.src
	depth := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = lx.lineComment(i, i+2)
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = lx.starComment(i, kotlin)
		case c == '\'':
			i = javaChar(src, i)
			lx.add(tokOther, i, i)
		case c == '"':
			if i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"' {
				if kotlin {
					i = lx.kotlinRaw(i)
				} else {
					i = lx.textBlock(i)
				}
				continue
			}
			i = lx.javaQuoted(i, kotlin)
		case isIdentStart(c) || c == '$':
			j := i + 1
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '$') {
				j++
			}
			lx.add(tokIdent, i, j)
			i = j
		case c == '`' && kotlin:
			j := i + 1
			for j < len(src) && src[j] != '`' && src[j] != '\n' {
				j++
			}
			if j < len(src) && src[j] == '`' {
				j++
			}
			lx.add(tokIdent, i, j)
			i = j
		case isDigit(c):
			i = lx.number(i, false)
		case c == '.' && !(i+1 < len(src) && src[i+1] == '.'):
			lx.add(tokDot, i, i+1)
			i++
		case c == '?' && kotlin && i+1 < len(src) && src[i+1] == '.':
			lx.add(tokDot, i, i+2)
			i += 2
		case c == '+':
			i = lx.operator(i, tokPlus, "+=")
		default:
			if !lx.punct(i, &depth, true) {
				return i
			}
			i++
		}
	}
	return i
}

// javaChar skips a character literal at src[i].
func javaChar(src []byte, i int) int {
	j := i + 1
	for j < len(src) && src[j] != '\'' && src[j] != '\n' {
		if src[j] == '\\' {
			j++
		}
		j++
	}
	if j < len(src) && src[j] == '\'' {
		return j + 1
	}
	return i + 1
}

// javaEscape decodes the escape at src[i] (a backslash) in a Java or Kotlin
// string and returns the offset after it.
func javaEscape(b *builder, src []byte, i int, kotlin bool) int {
	if i+1 >= len(src) {
		b.verbatim(src, i, i+1)
		return i + 1
	}
	c := src[i+1]
	switch {
	case c == 'u':
		j := i + 1
		for j < len(src) && src[j] == 'u' && !kotlin {
			j++ // Java allows \uuuu0041.
		}
		if kotlin {
			j = i + 2
		}
		if r, n := hexRun(src, j, 4); n == 4 {
			b.decodedRune(r, i)
			return j + 4
		}
	case c == 's' && !kotlin:
		b.decoded(" ", i)
		return i + 2
	case c >= '0' && c <= '7' && !kotlin:
		return octalEscape(b, src, i)
	}
	// \v, \a and \` are not escapes in these languages, nor \f in Kotlin
	// and \$ in Java.
	if kotlin {
		return simpleOrKept(b, src, i, "va`f")
	}
	return simpleOrKept(b, src, i, "va`$")
}

// javaQuoted lexes a one-line string at src[i].
func (lx *lexer) javaQuoted(i int, kotlin bool) int {
	src := lx.src
	b := newBuilder()
	j := i + 1
	for {
		if j >= len(src) || src[j] == '\n' || src[j] == '\r' {
			return j
		}
		c := src[j]
		switch {
		case c == '"':
			lx.addString(b.literal(i, j+1))
			return j + 1
		case c == '\\':
			j = javaEscape(&b, src, j, kotlin)
		case c == '$' && kotlin:
			next := lx.kotlinTemplateInto(&b, j)
			if next < 0 {
				return len(src)
			}
			j = next
		default:
			k := j + 1
			for k < len(src) && src[k] != '"' && src[k] != '\\' && src[k] != '$' && src[k] != '\n' && src[k] != '\r' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
}

// kotlinTemplate recognises a template at src[i] ('$'). It returns the
// offset after it and true, or false when the dollar is literal text. An
// unterminated ${ returns an offset past the end of src.
func (lx *lexer) kotlinTemplate(i int) (int, bool) {
	src := lx.src
	if i+1 >= len(src) {
		return 0, false
	}
	if src[i+1] == '{' {
		emit := lx.emit
		lx.emit = false
		end := lx.javaCode(i+2, true)
		lx.emit = emit
		if end >= len(src) {
			return len(src) + 1, true
		}
		return end + 1, true
	}
	if isIdentStart(src[i+1]) {
		j := i + 2
		for j < len(src) && isIdentChar(src[j]) {
			j++
		}
		return j, true
	}
	return 0, false
}

// kotlinTemplateInto decodes the template at src[j] ('$') into b and
// returns the offset after it; a dollar that starts no template is copied
// as text. It returns -1 for a template left open at the end of the file.
func (lx *lexer) kotlinTemplateInto(b *builder, j int) int {
	end, ok := lx.kotlinTemplate(j)
	if !ok {
		b.verbatim(lx.src, j, j+1)
		return j + 1
	}
	if end > len(lx.src) {
		return -1
	}
	b.decoded(kotlinTemplateValue(lx.src[j:end]), j)
	return end
}

// kotlinTemplateValue is what a template stands for: the dollar itself
// for ${'$'} (the way to write "$" in a raw string), Placeholder for
// everything else.
func kotlinTemplateValue(t []byte) string {
	if string(t) == "${'$'}" {
		return "$"
	}
	return Placeholder
}

// kotlinRaw lexes a Kotlin raw string at src[i] ("""). The closing
// delimiter is the last three quotes of a run of quotes.
func (lx *lexer) kotlinRaw(i int) int {
	src := lx.src
	b := newBuilder()
	j := i + 3
	for {
		if j >= len(src) {
			return j
		}
		c := src[j]
		switch {
		case c == '"' && j+2 < len(src) && src[j+1] == '"' && src[j+2] == '"':
			for j+3 < len(src) && src[j+3] == '"' {
				b.verbatim(src, j, j+1)
				j++
			}
			lx.addString(b.literal(i, j+3))
			return j + 3
		case c == '$':
			next := lx.kotlinTemplateInto(&b, j)
			if next < 0 {
				return len(src)
			}
			j = next
		default:
			k := j + 1
			for k < len(src) && src[k] != '"' && src[k] != '$' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
}

// textBlock lexes a Java text block at src[i] ("""): the content starts on
// the line after the opening delimiter; incidental indentation (the
// smallest indentation of the non-blank lines and of the closing delimiter
// line) and trailing spaces are removed, line terminators become LF, and
// escapes are decoded after that, as the Java language specifies.
func (lx *lexer) textBlock(i int) int {
	src := lx.src
	j := i + 3
	for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
		j++
	}
	if j >= len(src) || (src[j] != '\n' && src[j] != '\r') {
		// Not a valid text block: treat as an empty string plus a quote.
		lx.add(tokOther, i, i+3)
		return i + 3
	}
	if src[j] == '\r' && j+1 < len(src) && src[j+1] == '\n' {
		j++
	}
	bodyStart := j + 1
	// Find the closing delimiter.
	end := -1
	for k := bodyStart; k+2 < len(src); k++ {
		if src[k] == '\\' {
			k++
			continue
		}
		if src[k] == '"' && src[k+1] == '"' && src[k+2] == '"' {
			end = k
			break
		}
	}
	if end < 0 {
		return len(src)
	}
	type line struct{ start, end, next int } // content [start,end), next line at next
	var lines []line
	for k := bodyStart; k <= end; {
		e := k
		for e < end && src[e] != '\n' && src[e] != '\r' {
			e++
		}
		next := e
		if e < end {
			next = e + 1
			if src[e] == '\r' && next < end && src[next] == '\n' {
				next++
			}
		}
		lines = append(lines, line{k, e, next})
		if e >= end {
			break
		}
		k = next
		if k == end { // closing delimiter at the start of a line
			lines = append(lines, line{k, k, k})
			break
		}
	}
	indent := -1
	for n, l := range lines {
		w := 0
		for l.start+w < l.end && (src[l.start+w] == ' ' || src[l.start+w] == '\t' || src[l.start+w] == '\f') {
			w++
		}
		blank := l.start+w == l.end
		if blank && n != len(lines)-1 {
			continue
		}
		if indent < 0 || w < indent {
			indent = w
		}
	}
	if indent < 0 {
		indent = 0
	}
	b := newBuilder()
	for n, l := range lines {
		last := n == len(lines)-1
		s := l.start + indent
		if s > l.end {
			s = l.end
		}
		e := l.end
		for e > s && (src[e-1] == ' ' || src[e-1] == '\t' || src[e-1] == '\f') {
			e--
		}
		if last && s == e {
			break // the closing delimiter's own line
		}
		b.skip()
		k := s
		cont := false
		for k < e {
			if src[k] == '\\' {
				if k+1 == e {
					cont = true // line continuation
					k++
					break
				}
				k = javaEscape(&b, src, k, false)
				continue
			}
			m := k + 1
			for m < e && src[m] != '\\' {
				m++
			}
			b.verbatim(src, k, m)
			k = m
		}
		if last {
			break
		}
		if !cont {
			if src[l.end] == '\n' {
				b.verbatim(src, l.end, l.end+1)
			} else {
				b.decoded("\n", l.end)
			}
		}
	}
	lx.addString(b.literal(i, end+3))
	return end + 3
}

// TrimMargin reports whether the Kotlin raw string that ends at end is
// followed by .trimMargin(), and the margin prefix that call strips: "|",
// or the one-character string literal given.
func TrimMargin(src []byte, end int) (byte, bool) {
	k := end
	for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
		k++
	}
	const call = ".trimMargin("
	if !bytes.HasPrefix(src[k:], []byte(call)) {
		return 0, false
	}
	k += len(call)
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	if k+2 < len(src) && src[k] == '"' && src[k+2] == '"' {
		return src[k+1], true
	}
	if k < len(src) && src[k] == ')' {
		return '|', true
	}
	return 0, false
}

// BlankMargins replaces the margin prefix of each line of v (the first
// character after its leading blanks, when it is margin) with a blank, as
// trimMargin strips it, keeping every other byte where it is: the value's
// offsets still map to the source.
func BlankMargins(v string, margin byte) string {
	b := []byte(v)
	start := true
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\n':
			start = true
		case start && (b[i] == ' ' || b[i] == '\t'):
		case start && b[i] == margin:
			b[i] = ' '
			start = false
		default:
			start = false
		}
	}
	return string(b)
}
