// Package extract finds string literals and comments in application source
// code (Go, Python, Ruby, JavaScript/TypeScript, Java, Kotlin, Elixir, PHP,
// Rust and C#) so that the SQL they contain can be analysed with exact source
// positions.
//
// Each language has a small hand-written lexer (Go uses go/scanner from the
// standard library). The lexers only understand as much of each language as
// is needed to tell strings, comments and code apart: they decode escape
// sequences, replace interpolations with Placeholder, and join literals that
// are concatenated within one expression into a single Literal whose
// Segments map every byte of the decoded value back to the file.
//
// Line terminators inside literals are kept as they are in the source,
// except where the language itself normalises them: Go raw strings drop
// carriage returns, and JavaScript template literals and Java text blocks
// turn CRLF into LF. Literals nested inside an interpolation are not
// reported. The analyzer then normalises driver placeholders so that the
// PostgreSQL parser accepts the text.
package extract

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Language names a source language understood by Literals.
type Language string

// The languages understood by Literals.
const (
	Go         Language = "go"
	Python     Language = "python"
	Ruby       Language = "ruby"
	JavaScript Language = "javascript"
	Java       Language = "java"
	Kotlin     Language = "kotlin"
	Elixir     Language = "elixir"
	PHP        Language = "php"
	Rust       Language = "rust"
	CSharp     Language = "csharp"
)

// Placeholder replaces every interpolation (`#{…}`, `${…}`, `{…}` in
// f-strings, Rust format strings and C# interpolated strings, `$name` in
// Kotlin and PHP, `{$…}` in PHP) and every
// non-literal operand of a string concatenation. It is an ordinary
// identifier, so the SQL parser accepts it wherever a value or a name
// stands.
const Placeholder = "pgpoolcheck_param"

var extensions = map[string]Language{
	".go":    Go,
	".py":    Python,
	".rb":    Ruby,
	".rake":  Ruby,
	".js":    JavaScript,
	".mjs":   JavaScript,
	".cjs":   JavaScript,
	".jsx":   JavaScript,
	".ts":    JavaScript,
	".tsx":   JavaScript,
	".mts":   JavaScript,
	".cts":   JavaScript,
	".java":  Java,
	".kt":    Kotlin,
	".kts":   Kotlin,
	".ex":    Elixir,
	".exs":   Elixir,
	".php":   PHP,
	".phtml": PHP,
	".rs":    Rust,
	".cs":    CSharp,
}

// LanguageFor reports the language of a file from its extension. The second
// result is false when the extension is not one that Literals understands.
func LanguageFor(path string) (Language, bool) {
	lang, ok := extensions[strings.ToLower(filepath.Ext(path))]
	return lang, ok
}

// Segment maps a position in a decoded literal value to the file: the value
// byte at offset Value comes from the source byte at offset Source, and the
// bytes after it follow one to one until the next segment starts. A new
// segment starts at every escape sequence, interpolation, removed
// indentation or line continuation, and at every concatenated piece.
type Segment struct{ Value, Source int }

// Literal is one string literal, or several literals joined by concatenation
// within one expression, with its decoded value.
type Literal struct {
	// Value is the decoded string value. Interpolations and non-literal
	// concatenation operands are replaced by Placeholder.
	Value string
	// Segments are sorted by Value and by Source; the first has Value 0.
	Segments []Segment
	// Start and End are the source byte range of the whole expression: from
	// the first opening quote (or heredoc marker) to just after the last
	// closing quote (or heredoc terminator, or trailing operand).
	Start, End int
	// Macro is the name of the macro whose argument list holds the literal
	// directly, without its path and its '!' ("println" for
	// std::println!("…", x)). Only the Rust lexer sets it.
	Macro string
}

// SourceOffset returns the source byte offset of the value byte at
// valueOffset. Offsets inside a decoded escape or a placeholder map to a
// position inside that escape or interpolation, never past it; offsets
// outside the value are clamped to its first or last byte.
func (l *Literal) SourceOffset(valueOffset int) int {
	segs := l.Segments
	if len(segs) == 0 {
		return l.Start
	}
	if valueOffset < 0 {
		valueOffset = 0
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].Value > valueOffset }) - 1
	if i < 0 {
		i = 0
	}
	s := segs[i]
	off := s.Source + valueOffset - s.Value
	limit := l.End
	if i+1 < len(segs) {
		limit = segs[i+1].Source
	}
	if off >= limit {
		off = limit - 1
	}
	if off < s.Source {
		off = s.Source
	}
	return off
}

// Comment is one comment in the source. Start and End are its byte range,
// markers included (a trailing carriage return is excluded); Text is its
// content without the comment markers.
type Comment struct {
	Start, End int
	Text       string
}

// Literals returns the string literals and the comments of src, in source
// order. It never fails or panics on malformed input: an unterminated
// one-line string is dropped and lexing resumes at its line break, while an
// unterminated multi-line form (triple quotes, template, heredoc, text
// block, any PHP or Rust string, a C# verbatim or multi-line raw string)
// ends the file. The error is only for an
// unknown language.
func Literals(lang Language, src []byte) (lits []Literal, comments []Comment, err error) {
	lex, ok := lexers[lang]
	if !ok {
		return nil, nil, fmt.Errorf("extract: unsupported language %q", lang)
	}
	lx := lex(src)
	return lx.join(), lx.comments, nil
}

// lexers holds the lexer of each language understood by Literals.
var lexers = map[Language]func(src []byte) *lexer{
	Go:         lexGo,
	Python:     lexPython,
	Ruby:       lexRuby,
	JavaScript: lexJavaScript,
	Java:       func(src []byte) *lexer { return lexJava(src, false) },
	Kotlin:     func(src []byte) *lexer { return lexJava(src, true) },
	Elixir:     lexElixir,
	PHP:        lexPHP,
	Rust:       lexRust,
	CSharp:     lexCSharp,
}

// builder accumulates a decoded value and its segments.
type builder struct {
	val  []byte
	segs []Segment
	next int // source offset that continues the current segment; -1 for none
}

func newBuilder() builder { return builder{next: -1} }

// verbatim appends src[from:to], which is copied unchanged into the value.
func (b *builder) verbatim(src []byte, from, to int) {
	if from >= to {
		return
	}
	if b.next != from || len(b.segs) == 0 {
		b.segs = append(b.segs, Segment{Value: len(b.val), Source: from})
	}
	b.val = append(b.val, src[from:to]...)
	b.next = to
}

// decoded appends s, the decoded form of the source text starting at at.
func (b *builder) decoded(s string, at int) {
	b.next = -1
	if s == "" {
		return
	}
	b.segs = append(b.segs, Segment{Value: len(b.val), Source: at})
	b.val = append(b.val, s...)
}

// decodedRune appends r as UTF-8, decoded from the source text at at.
func (b *builder) decodedRune(r rune, at int) {
	if r < 0 || r > 0x10FFFF || (r >= 0xD800 && r < 0xE000) {
		r = 0xFFFD
	}
	b.decoded(string(r), at)
}

// skip records that source bytes were dropped, so the next verbatim byte
// starts a new segment.
func (b *builder) skip() { b.next = -1 }

// literal finishes the builder into a Literal spanning [start, end).
func (b *builder) literal(start, end int) Literal {
	return Literal{Value: string(b.val), Segments: b.segs, Start: start, End: end}
}

type tokKind uint8

const (
	tokOther  tokKind = iota
	tokString         // a string literal; lit indexes lexer.pieces
	tokPlus           // a binary string concatenation operator
	tokIdent          // an identifier or a dotted path, a possible operand
	tokDot            // a member access operator
	tokBreak          // an end of statement; it stops concatenation unless an operator precedes it
)

type tok struct {
	kind       tokKind
	start, end int
	lit        int
}

// lexer holds what a language lexer produces: a simplified token stream, the
// string pieces it refers to, and the comments.
type lexer struct {
	src      []byte
	toks     []tok
	pieces   []Literal
	comments []Comment
	adjacent bool // adjacent string literals are concatenated (Python, Ruby)
	emit     bool // false while skipping code inside an interpolation
}

func newLexer(src []byte) *lexer {
	// Application code has about one string literal per 100 bytes.
	return &lexer{
		src:    src,
		emit:   true,
		toks:   make([]tok, 0, len(src)/40+8),
		pieces: make([]Literal, 0, len(src)/100+4),
	}
}

func (lx *lexer) add(kind tokKind, start, end int) {
	if !lx.emit {
		return
	}
	// Only strings, operators and the operands that follow an operator
	// matter to join; everything else collapses into one tokOther run,
	// which keeps the token stream about as long as the list of strings.
	last := tokOther
	if n := len(lx.toks); n > 0 {
		last = lx.toks[n-1].kind
	}
	switch kind {
	case tokIdent:
		n := len(lx.toks)
		if last == tokDot && n >= 2 && lx.toks[n-2].kind == tokIdent {
			lx.toks[n-2].end = end
			lx.toks = lx.toks[:n-1]
			return
		}
		if last != tokPlus {
			kind = tokOther
		}
	case tokDot:
		if last != tokIdent {
			kind = tokOther
		}
	case tokBreak:
		if last == tokPlus {
			return // an operator at the end of a line continues the expression
		}
		kind = tokOther
	}
	if kind == tokOther && last == tokOther && len(lx.toks) > 0 {
		lx.toks[len(lx.toks)-1].end = end
		return
	}
	lx.toks = append(lx.toks, tok{kind: kind, start: start, end: end})
}

func (lx *lexer) addString(l Literal) int {
	if !lx.emit {
		return -1
	}
	lx.pieces = append(lx.pieces, l)
	lx.toks = append(lx.toks, tok{kind: tokString, start: l.Start, end: l.End, lit: len(lx.pieces) - 1})
	return len(lx.toks) - 1
}

func (lx *lexer) comment(start, end, textStart, textEnd int) {
	if !lx.emit {
		return
	}
	for end > start && lx.src[end-1] == '\r' {
		end--
	}
	if textEnd > end {
		textEnd = end
	}
	if textStart > textEnd {
		textStart = textEnd
	}
	lx.comments = append(lx.comments, Comment{Start: start, End: end, Text: string(lx.src[textStart:textEnd])})
}

// join turns the token stream into literals, joining string pieces that are
// concatenated (with a binary operator, or by adjacency where the language
// does that) and replacing identifier operands of a concatenation with
// Placeholder.
func (lx *lexer) join() []Literal {
	out := make([]Literal, 0, len(lx.pieces))
	toks := lx.toks
	var val []byte // the joined value, when more than one piece
	for i := 0; i < len(toks); {
		if toks[i].kind != tokString {
			i++
			continue
		}
		// Pieces are not used after joining, so cur may extend the first
		// piece's segments in place.
		cur := lx.pieces[toks[i].lit]
		val = append(val[:0], cur.Value...)
		joined := false
		add := func(p Literal) {
			if p.Value != "" {
				base := len(val)
				for _, s := range p.Segments {
					cur.Segments = append(cur.Segments, Segment{Value: s.Value + base, Source: s.Source})
				}
				val = append(val, p.Value...)
			}
			cur.End = p.End
			joined = true
		}
		j := i + 1
		for j < len(toks) {
			k := j
			if lx.adjacent && toks[k].kind == tokString && toks[k].start >= cur.End {
				add(lx.pieces[toks[k].lit])
				j = k + 1
				continue
			}
			if toks[k].kind != tokPlus {
				break
			}
			k++
			if k >= len(toks) || toks[k].start < cur.End {
				break
			}
			if toks[k].kind == tokString {
				add(lx.pieces[toks[k].lit])
				j = k + 1
				continue
			}
			if toks[k].kind == tokIdent {
				add(Literal{Value: Placeholder, Segments: []Segment{{0, toks[k].start}}, Start: toks[k].start, End: toks[k].end})
				j = k + 1
				// A call (str_replace('\'', '\\\'', $name)) or a subscript
				// ($m[1], $row['name']): its argument list or index is part
				// of the operand, string arguments included, and the
				// concatenation may go on after it.
				if end, ok := lx.operandTail(toks, toks[k].end); ok {
					cur.End = end
					for j < len(toks) && toks[j].start < end {
						j++
					}
				}
				continue
			}
			break
		}
		if joined {
			cur.Value = string(val)
		}
		if len(cur.Segments) == 0 {
			cur.Segments = []Segment{{0, cur.Start}}
		}
		out = append(out, cur)
		i = j
	}
	return out
}

// operandTail reports whether an operand's argument list (after blanks)
// or subscripts (right after it) open at from, and returns the offset
// after the last of them: f(x), $m[1], f(x)[0], $a[1][2].
func (lx *lexer) operandTail(toks []tok, from int) (int, bool) {
	end, ok := lx.group(toks, from, '(', ')', true)
	if !ok {
		end = from
	}
	for {
		next, sub := lx.group(toks, end, '[', ']', false)
		if !sub {
			return end, ok
		}
		end, ok = next, true
	}
}

// group reports whether a group that opens with open at from (after
// blanks, when blanks is set) closes on the same statement, and returns
// the offset after its closing byte. Brackets inside string tokens do not
// count.
func (lx *lexer) group(toks []tok, from int, open, close byte, blanks bool) (int, bool) {
	src := lx.src
	i := from
	for blanks && i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i >= len(src) || src[i] != open {
		return 0, false
	}
	// The string tokens from i on, to skip their bytes.
	t := sort.Search(len(toks), func(n int) bool { return toks[n].start >= i })
	depth := 0
	for k := i; k < len(src); k++ {
		for t < len(toks) && toks[t].end <= k {
			t++
		}
		if t < len(toks) && toks[t].kind == tokString && toks[t].start <= k && k < toks[t].end {
			k = toks[t].end - 1
			continue
		}
		switch src[k] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return k + 1, true
			}
		case ';', '\n':
			if depth == 0 {
				return 0, false
			}
		}
	}
	return 0, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) rune {
	switch {
	case isDigit(c):
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return 0
}

// isIdentStart reports whether c can start an identifier; bytes of
// multi-byte UTF-8 characters count as letters.
func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// hexRun parses up to max hex digits at src[i:], returning the value and the
// number of digits read.
func hexRun(src []byte, i, max int) (rune, int) {
	var r rune
	n := 0
	for n < max && i+n < len(src) && isHex(src[i+n]) {
		if r < 0x110000 {
			r = r*16 + hexVal(src[i+n])
		}
		n++
	}
	return r, n
}

// lineEnd returns the index of the next '\n' at or after i, or len(src).
func lineEnd(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}

// octalEscape decodes a C-style octal escape at src[i] (the backslash,
// followed by an octal digit): up to three digits when the first is 0-3,
// else two, as in Java and JavaScript. It returns the offset after it.
func octalEscape(b *builder, src []byte, i int) int {
	limit := 2
	if src[i+1] <= '3' {
		limit = 3
	}
	r, n := octalRun(src, i+1, limit)
	b.decodedRune(r, i)
	return i + 1 + n
}

// selfEscape decodes an escape at src[i] whose character stands for
// itself (\q is "q"); a backslash before a non-ASCII byte is dropped. It
// returns the offset after what it consumed.
func selfEscape(b *builder, src []byte, i int) int {
	if c := src[i+1]; c < 0x80 {
		b.decoded(string([]byte{c}), i)
		return i + 2
	}
	b.skip()
	return i + 1
}

// skipIndent returns the offset after the blanks (spaces and tabs) that
// start a heredoc line at src[i], at most indent of them and not past end:
// the indentation a closing marker's column strips from each line.
func skipIndent(src []byte, i, end, indent int) int {
	j := i
	for j < end && j-i < indent && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return j
}

// simpleEscape decodes the one-character escapes shared by most C-like
// languages.
func simpleEscape(c byte) (string, bool) {
	switch c {
	case 'n':
		return "\n", true
	case 't':
		return "\t", true
	case 'r':
		return "\r", true
	case 'b':
		return "\b", true
	case 'f':
		return "\f", true
	case 'v':
		return "\v", true
	case 'a':
		return "\a", true
	case '0':
		return "\x00", true
	case '\\', '\'', '"', '`', '$':
		return string(c), true
	}
	return "", false
}
