package extract

import "bytes"

// phpLexer tokenizes PHP.
type phpLexer struct {
	*lexer
	// braced maps where the code of a {$…} or ${…} interpolation starts to
	// where the interpolation ends. A heredoc lexes its interpolations
	// twice (to find its closing line, then to decode its body), and
	// heredocs can nest inside them: remembering the ends keeps that
	// linear.
	braced map[int]int
}

// lexPHP tokenizes PHP source: only the code between an open tag (<?php
// followed by a blank, or <?=) and ?> is read, and the text around it is
// inline HTML. It knows comments (//, # and /* */, with #[ starting an
// attribute; one-line comments end at ?>), single-quoted strings,
// double-quoted strings and heredocs with their escapes, nowdocs,
// indented closing markers (whose indentation is removed from every line),
// b"…" binary strings, $var, $var[key], $var->prop, {$…} and ${…}
// interpolation replaced by Placeholder, backtick shell commands (skipped)
// and `.` concatenation. Lexing stops at __halt_compiler.
func lexPHP(src []byte) *lexer {
	p := &phpLexer{lexer: newLexer(src)}
	i := phpOpenTag(src, 0)
	for i < len(src) {
		i = p.code(i, false)
		if i < len(src) { // at ?>, which ends a statement like ;
			p.add(tokOther, i, i+2)
			i = phpOpenTag(src, i+2)
		}
	}
	return p.lexer
}

// phpOpenTag skips inline HTML from i and returns the offset after the next
// open tag, or len(src). The short tag <? is not taken for one: the php.ini
// files PHP ships turn it off, and <?xml is common in templates.
func phpOpenTag(src []byte, i int) int {
	for i < len(src) {
		k := bytes.Index(src[i:], []byte("<?"))
		if k < 0 {
			return len(src)
		}
		i += k + 2
		if i < len(src) && src[i] == '=' {
			return i + 1
		}
		if i+3 <= len(src) && (src[i]|0x20) == 'p' && (src[i+1]|0x20) == 'h' && (src[i+2]|0x20) == 'p' {
			if i+3 == len(src) {
				return len(src)
			}
			if c := src[i+3]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				return i + 4
			}
		}
	}
	return len(src)
}

// code lexes code from i. At the top level it stops at a close tag ?> and
// returns its offset; inside an interpolation (inner) it stops at the
// unmatched closing brace instead. It returns len(src) at the end of the
// file.
func (p *phpLexer) code(i int, inner bool) int {
	src := p.src
	depth := 0
	for i < len(src) {
		c, next := src[i], byteAt(src, i+1)
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '?' && next == '>' && !inner:
			return i
		case c == '#' && next == '[':
			p.add(tokOther, i, i+2) // an attribute, closed by a plain ]
			i += 2
		case c == '#' || c == '/' && next == '/':
			text := i + 1
			if c == '/' {
				text = i + 2
			}
			end := phpLineCommentEnd(src, text)
			p.comment(i, end, text, end)
			i = end
		case c == '/' && next == '*':
			i = p.starComment(i, false)
		case c == '\'':
			i = p.single(i, i)
		case c == '"' || c == '`':
			i = p.quoted(i, i, c)
		case c == '<' && next == '<' && i+2 < len(src) && src[i+2] == '<':
			if end, ok := p.heredoc(i, i); ok {
				i = end
				continue
			}
			p.add(tokOther, i, i+3)
			i += 3
		case c == '$' && i+1 < len(src) && (isIdentStart(next) || next == '$'):
			j := i + 1
			for j < len(src) && src[j] == '$' {
				j++
			}
			if j < len(src) && isIdentStart(src[j]) {
				for j < len(src) && isIdentChar(src[j]) {
					j++
				}
				p.add(tokIdent, i, j)
			} else {
				p.add(tokOther, i, j)
			}
			i = j
		case isIdentStart(c) || c == '\\' && isIdentStart(next):
			j := i + 1
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '\\' && j+1 < len(src) && isIdentStart(src[j+1])) {
				j++
			}
			if j == i+1 && (c == 'b' || c == 'B') && j < len(src) {
				// A binary string: b'…', b"…" or b<<<ID.
				switch {
				case src[j] == '\'':
					i = p.single(i, j)
					continue
				case src[j] == '"':
					i = p.quoted(i, j, '"')
					continue
				case bytes.HasPrefix(src[j:], []byte("<<<")):
					if end, ok := p.heredoc(i, j); ok {
						i = end
						continue
					}
				}
			}
			if !inner && j-i == len("__halt_compiler") && bytes.EqualFold(src[i:j], []byte("__halt_compiler")) {
				p.add(tokOther, i, len(src)) // the rest of the file is data
				return len(src)
			}
			p.add(tokIdent, i, j)
			i = j
		case isDigit(c) || c == '.' && isDigit(next):
			i = p.number(i, false)
		case c == '.':
			switch {
			case next == '=':
				p.add(tokOther, i, i+2)
				i += 2
			case next == '.' && i+2 < len(src) && src[i+2] == '.':
				p.add(tokOther, i, i+3)
				i += 3
			default:
				p.add(tokPlus, i, i+1)
				i++
			}
		case c == '-' && next == '>' || c == ':' && next == ':':
			p.add(tokDot, i, i+2)
			i += 2
		case c == '?' && next == '-' && i+2 < len(src) && src[i+2] == '>':
			p.add(tokDot, i, i+3)
			i += 3
		default:
			if !p.punct(i, &depth, inner) {
				return i
			}
			i++
		}
	}
	return i
}

// phpLineCommentEnd returns where a one-line comment whose text starts at i
// ends: at the line break or at a close tag ?>.
func phpLineCommentEnd(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		if src[i] == '?' && i+1 < len(src) && src[i+1] == '>' {
			return i
		}
		i++
	}
	return i
}

// single lexes a single-quoted string whose opening quote is at src[q]
// (start is before a b prefix). Only \' and \\ are escapes. An unterminated
// string ends the file.
func (p *phpLexer) single(start, q int) int {
	src := p.src
	b := newBuilder()
	j := q + 1
	for {
		if j >= len(src) {
			return len(src)
		}
		c := src[j]
		if c == '\'' {
			break
		}
		if c == '\\' && j+1 < len(src) && (src[j+1] == '\'' || src[j+1] == '\\') {
			b.decoded(string(src[j+1]), j)
			j += 2
			continue
		}
		k := j + 1
		for k < len(src) && src[k] != '\'' && src[k] != '\\' {
			k++
		}
		b.verbatim(src, j, k)
		j = k
	}
	p.addString(b.literal(start, j+1))
	return j + 1
}

// quoted lexes a double-quoted string, or a backtick shell command (which
// is not reported), whose opening quote is at src[q]. An unterminated
// string ends the file.
func (p *phpLexer) quoted(start, q int, quote byte) int {
	src := p.src
	b := newBuilder()
	j := q + 1
	for {
		if j >= len(src) {
			return len(src)
		}
		c := src[j]
		switch {
		case c == quote:
			if quote == '"' {
				p.addString(b.literal(start, j+1))
			} else {
				p.add(tokOther, start, j+1)
			}
			return j + 1
		case c == '\\':
			j = phpEscape(&b, src, j, quote)
		case c == '$' || c == '{':
			var ok bool
			if j, ok = b.interpolation(src, j, p.interpolation(j)); !ok {
				return len(src)
			}
		default:
			k := j + 1
			for k < len(src) && src[k] != quote && src[k] != '\\' && src[k] != '$' && src[k] != '{' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
}

// interpolation recognises an interpolation at src[i] ('$' or '{') in a
// double-quoted string or heredoc: $name, optionally followed by one
// [offset] or ->prop (?->prop), and {$…} and ${…}, whose bodies are code.
// It returns the offset after it, i when there is none there, or past
// len(src) when a braced interpolation is unterminated.
func (p *phpLexer) interpolation(i int) int {
	src := p.src
	if i+1 >= len(src) {
		return i
	}
	if src[i] == '{' {
		if src[i+1] != '$' {
			return i
		}
		return p.skipBraced(i + 1)
	}
	if src[i+1] == '{' {
		return p.skipBraced(i + 2)
	}
	if !isIdentStart(src[i+1]) {
		return i
	}
	j := i + 2
	for j < len(src) && isIdentChar(src[j]) {
		j++
	}
	if j >= len(src) {
		return j
	}
	switch {
	case src[j] == '[':
		// $a[0], $a[-1], $a[key], $a[$k]
		k := j + 1
		if k < len(src) && (src[k] == '$' || src[k] == '-') {
			k++
		}
		from := k
		for k < len(src) && isIdentChar(src[k]) {
			k++
		}
		if k > from && k < len(src) && src[k] == ']' {
			return k + 1
		}
	case bytes.HasPrefix(src[j:], []byte("->")) || bytes.HasPrefix(src[j:], []byte("?->")):
		k := j + 2
		if src[j] == '?' {
			k++
		}
		if k < len(src) && isIdentStart(src[k]) {
			for k < len(src) && isIdentChar(src[k]) {
				k++
			}
			return k
		}
	}
	return j
}

// skipBraced skips the code of a {$…} or ${…} interpolation, which starts
// at i, and returns the offset after its closing brace, past len(src) when
// it is unterminated. Nothing inside it is reported.
func (p *phpLexer) skipBraced(i int) int {
	if end, ok := p.braced[i]; ok {
		return end
	}
	emit := p.emit
	p.emit = false
	end := p.code(i, true) + 1
	p.emit = emit
	if p.braced == nil {
		p.braced = map[int]int{}
	}
	p.braced[i] = end
	return end
}

// heredoc lexes a heredoc (<<<ID or <<<"ID") or nowdoc (<<<'ID') whose
// <<< is at src[i] (start is before a b prefix). The body starts on the
// next line and ends before the line holding the closing identifier,
// which may be indented: that indentation is removed from every line. It
// reports false when no heredoc opens here; an unterminated heredoc ends
// the file.
func (p *phpLexer) heredoc(start, i int) (int, bool) {
	src := p.src
	k := i + 3
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	quote := byte(0)
	if k < len(src) && (src[k] == '"' || src[k] == '\'') {
		quote = src[k]
		k++
	}
	if k >= len(src) || !isIdentStart(src[k]) {
		return 0, false
	}
	idStart := k
	for k < len(src) && isIdentChar(src[k]) {
		k++
	}
	id := src[idStart:k]
	if quote != 0 {
		if k >= len(src) || src[k] != quote {
			return 0, false
		}
		k++
	}
	switch {
	case k+1 < len(src) && src[k] == '\r' && src[k+1] == '\n':
		k += 2
	case k < len(src) && src[k] == '\n':
		k++
	default:
		return 0, false
	}
	bodyStart := k
	escapes := quote != '\''

	// Find the closing line: optional indentation, then the identifier not
	// followed by an identifier character.
	closeLine, closeID := -1, -1
	for ls := bodyStart; ls < len(src); {
		m := ls
		for m < len(src) && (src[m] == ' ' || src[m] == '\t') {
			m++
		}
		if bytes.HasPrefix(src[m:], id) && (m+len(id) == len(src) || !isIdentChar(src[m+len(id)])) {
			closeLine, closeID = ls, m
			break
		}
		// Skip the line; an interpolation may span lines.
		for m < len(src) && src[m] != '\n' {
			if escapes && src[m] == '\\' && m+1 < len(src) && src[m+1] != '\n' && src[m+1] != '\r' {
				m += 2
				continue
			}
			if escapes && (src[m] == '$' || src[m] == '{') {
				if e := p.interpolation(m); e > m {
					m = e
					continue
				}
			}
			m++
		}
		ls = m + 1
	}
	if closeLine < 0 {
		return len(src), true
	}
	end := closeID + len(id)
	indent := closeID - closeLine
	// The line break before the closing line is not part of the value.
	bodyEnd := closeLine
	if bodyEnd > bodyStart {
		bodyEnd--
		if bodyEnd > bodyStart && src[bodyEnd-1] == '\r' {
			bodyEnd--
		}
	}
	body := src[:bodyEnd]
	b := newBuilder()
	dedented := -1
	for j := bodyStart; j < bodyEnd; {
		if indent > 0 && j != dedented && (j == bodyStart || src[j-1] == '\n') {
			dedented = j
			j = b.dedent(src, j, bodyEnd, indent)
			continue
		}
		c := src[j]
		switch {
		case escapes && c == '\\':
			j = phpEscape(&b, body, j, 0)
		case escapes && (c == '$' || c == '{'):
			j, _ = b.interpolation(src, j, min(p.interpolation(j), bodyEnd))
		default:
			m := j + 1
			for m < bodyEnd && src[m-1] != '\n' && !(escapes && (src[m] == '\\' || src[m] == '$' || src[m] == '{')) {
				m++
			}
			b.verbatim(src, j, m)
			j = m
		}
	}
	p.addString(b.literal(start, end))
	return end, true
}

// phpEscape decodes an escape sequence at src[i] (a backslash) in a
// double-quoted string (quote '"'), a backtick command ('`') or a heredoc
// (0), and returns the offset after it. Unknown escapes keep the
// backslash, as in PHP.
func phpEscape(b *builder, src []byte, i int, quote byte) int {
	if i+1 >= len(src) {
		b.verbatim(src, i, i+1)
		return i + 1
	}
	c := src[i+1]
	switch c {
	case 'n', 't', 'r', 'v', 'f', '\\', '$':
		v, _ := simpleEscape(c)
		b.decoded(v, i)
		return i + 2
	case 'e':
		b.decoded("\x1b", i)
		return i + 2
	case '"', '`':
		if c == quote {
			b.decoded(string(c), i)
			return i + 2
		}
	case 'x', 'X':
		if v, n := hexRun(src, i+2, 2); n > 0 {
			b.decodedByte(v, i)
			return i + 2 + n
		}
	case 'u':
		// \u{…} is a code point written as UTF-8; \u without a brace is
		// text.
		if v, next, ok := bracedHex(src, i+2, 64); ok && v <= 0x10FFFF {
			b.decoded(string(phpUTF8(v)), i)
			return next
		}
	default:
		if c >= '0' && c <= '7' {
			v, n := octalRun(src, i+1, 3)
			b.decodedByte(v, i) // \400 wraps to \0, as in PHP
			return i + 1 + n
		}
	}
	// Kept as written: the backslash and the character after it, which so
	// cannot start an escape or interpolation of its own.
	b.verbatim(src, i, i+2)
	return i + 2
}

// phpUTF8 encodes a code point as PHP does for \u{…}: surrogates are
// encoded like any other code point rather than replaced.
func phpUTF8(r rune) []byte {
	switch {
	case r < 0x80:
		return []byte{byte(r)}
	case r < 0x800:
		return []byte{0xC0 | byte(r>>6), 0x80 | byte(r)&0x3F}
	case r < 0x10000:
		return []byte{0xE0 | byte(r>>12), 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F}
	}
	return []byte{0xF0 | byte(r>>18), 0x80 | byte(r>>12)&0x3F, 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F}
}
