package extract

import "strings"

// The pieces of string-literal scanning that several lexers share: escape
// decoding and delimiters. Each language's escape decoder (exEscape,
// rbEscape, phpEscape, javaEscape, jsEscape, pyEscape, rustEscape,
// csEscape, yamlEscape) is called at a backslash, appends what the escape
// stands for to a builder and returns the offset after it; what the
// languages agree on is written here once.

// escapeBreak handles a backslash at src[i] that ends the source (it is
// kept as text) or its line (a line continuation: the backslash and the
// line break are dropped; with loneCR a carriage return not followed by a
// line feed is a line break too). It returns the offset after what it
// consumed, or false for any other escape.
func escapeBreak(b *builder, src []byte, i int, loneCR bool) (int, bool) {
	if i+1 >= len(src) {
		b.verbatim(src, i, i+1)
		return i + 1, true
	}
	switch src[i+1] {
	case '\n':
		b.skip()
		return i + 2, true
	case '\r':
		if i+2 < len(src) && src[i+2] == '\n' {
			b.skip()
			return i + 3, true
		}
		if loneCR {
			b.skip()
			return i + 2, true
		}
	}
	return 0, false
}

// rbFamilyEscape decodes the escapes that Ruby's and Elixir's
// double-quoted strings share at src[i] (a backslash): line
// continuations, \s, \e, \uXXXX, the C-like one-character escapes, and any
// other character standing for itself. Each language's decoder handles
// its own escapes first and calls it for the rest.
func rbFamilyEscape(b *builder, src []byte, i int) int {
	if next, ok := escapeBreak(b, src, i, false); ok {
		return next
	}
	c := src[i+1]
	switch {
	case c == 's':
		b.decoded(" ", i)
		return i + 2
	case c == 'e':
		b.decoded("\x1b", i)
		return i + 2
	case c == 'u':
		if v, n := hexRun(src, i+2, 4); n == 4 {
			b.decodedRune(v, i)
			return i + 6
		}
	default:
		if s, ok := simpleEscape(c); ok {
			b.decoded(s, i)
			return i + 2
		}
	}
	return selfEscape(b, src, i)
}

// simpleOrKept decodes the escape at src[i] (a backslash) when
// simpleEscape knows it and it is not one of except, which the language
// lacks; otherwise the backslash is kept as text. It returns the offset
// after what it decoded.
func simpleOrKept(b *builder, src []byte, i int, except string) int {
	c := src[i+1]
	if s, ok := simpleEscape(c); ok && strings.IndexByte(except, c) < 0 {
		b.decoded(s, i)
		return i + 2
	}
	b.verbatim(src, i, i+1)
	return i + 1
}

// octalRun parses up to max octal digits at src[i:], returning the value
// and the number of digits read.
func octalRun(src []byte, i, max int) (rune, int) {
	var r rune
	n := 0
	for n < max && i+n < len(src) && src[i+n] >= '0' && src[i+n] <= '7' {
		r = r*8 + rune(src[i+n]-'0')
		n++
	}
	return r, n
}

// bracedHex parses a code point written as {hex digits} at src[i] (the
// opening brace), one to max digits, as in \u{…}. It returns the value and
// the offset after the closing brace, or false.
func bracedHex(src []byte, i, max int) (rune, int, bool) {
	if i >= len(src) || src[i] != '{' {
		return 0, 0, false
	}
	r, n := hexRun(src, i+1, max)
	if n == 0 || i+1+n >= len(src) || src[i+1+n] != '}' {
		return 0, 0, false
	}
	return r, i + 2 + n, true
}

// decodedByte appends the byte v (truncated to eight bits), decoded from
// the source text at at: the octal and hex escapes of byte strings.
func (b *builder) decodedByte(v rune, at int) {
	b.decoded(string([]byte{byte(v)}), at)
}

// dedent returns the offset after the indentation that a heredoc's
// closing marker strips from the line starting at src[i] (see
// skipIndent), and records in b that those bytes were dropped.
func (b *builder) dedent(src []byte, i, end, indent int) int {
	k := skipIndent(src, i, end, indent)
	if k != i {
		b.skip()
	}
	return k
}

// closingDelim returns the delimiter that closes a Ruby percent literal or
// an Elixir sigil opened with open: the matching bracket, or open itself.
func closingDelim(open byte) byte {
	switch open {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	case '<':
		return '>'
	}
	return open
}
