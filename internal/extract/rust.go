package extract

import "unicode/utf8"

// rustFormatArg maps the macros that take a format string (holes {…},
// braces doubled) to the index of its argument: the format string is the
// first literal that opens an argument from there on (the logging macros
// may take a target and fields before it).
var rustFormatArg = map[string]int{
	"format": 0, "format_args": 0, "write": 1, "writeln": 1,
	"print": 0, "println": 0, "eprint": 0, "eprintln": 0, "panic": 0,
	"unreachable": 0, "todo": 0, "unimplemented": 0,
	"info": 0, "warn": 0, "error": 0, "debug": 0, "trace": 0,
	"anyhow": 0, "bail": 0, "eyre": 0, "format_err": 0,
}

// rustGroup is an open bracket: of a macro invocation (macro is its name)
// or a plain one.
type rustGroup struct {
	macro  string
	arg    int  // index of the current argument, counted by top-level commas
	fresh  bool // nothing lexed yet in the current argument
	format bool // the format string has been lexed
}

// rustLexer tokenizes Rust.
type rustLexer struct {
	*lexer
	groups []rustGroup
}

// lexRust tokenizes Rust source: line comments (doc comments included),
// nested block comments, string literals with Rust's escapes and line
// continuations, raw strings (r"…", r#"…"# with any number of #), byte and
// C strings (b"…", br#"…"#, c"…", treated like strings), char and byte
// literals, lifetimes and labels ('a without a closing quote), and `+`.
// The arguments of concat! are joined into one literal; the format string
// of format!, write! and the printing and logging macros has its holes
// ({}, {0}, {name:?}) replaced by Placeholder and {{ and }} decoded. A
// literal that is a direct argument of a macro records the macro's name.
func lexRust(src []byte) *lexer {
	r := &rustLexer{lexer: newLexer(src)}
	i := 0
	if len(src) > 1 && src[0] == '#' && src[1] == '!' && !(len(src) > 2 && src[2] == '[') {
		i = r.lineComment(0, 2)
	}
	for i < len(src) {
		i = r.token(i)
	}
	return r.lexer
}

// top returns the innermost open bracket, or nil at top level.
func (r *rustLexer) top() *rustGroup {
	if len(r.groups) == 0 {
		return nil
	}
	return &r.groups[len(r.groups)-1]
}

// token lexes one token (or a run of blanks, or a comment) at i and returns
// the offset after it.
func (r *rustLexer) token(i int) int {
	src := r.src
	c := src[i]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		return i + 1
	case c == '/' && i+1 < len(src) && src[i+1] == '/':
		return r.lineComment(i, i+2)
	case c == '/' && i+1 < len(src) && src[i+1] == '*':
		return r.starComment(i, true)
	}
	g := r.top()
	fresh := g != nil && g.fresh
	if g != nil {
		g.fresh = false
	}
	switch {
	case c == '"':
		return r.str(i, i, -1, false, fresh)
	case c == '\'':
		end := rustChar(src, i)
		r.add(tokOther, i, end)
		return end
	case isIdentStart(c):
		j := i + 1
		for j < len(src) && isIdentChar(src[j]) {
			j++
		}
		if j < len(src) {
			switch word := src[i:j]; string(word) {
			case "r", "br", "cr":
				k := j
				for k < len(src) && src[k] == '#' {
					k++
				}
				if k < len(src) && src[k] == '"' {
					return r.str(i, k, k-j, string(word) == "br", fresh)
				}
				if string(word) == "r" && k == j+1 && k < len(src) && isIdentStart(src[k]) {
					// A raw identifier, r#type.
					for k < len(src) && isIdentChar(src[k]) {
						k++
					}
					r.add(tokIdent, i, k)
					return k
				}
			case "b", "c":
				if src[j] == '"' {
					return r.str(i, j, -1, string(word) == "b", fresh)
				}
				if string(word) == "b" && src[j] == '\'' {
					end := rustChar(src, j)
					r.add(tokOther, i, end)
					return end
				}
			}
		}
		r.add(tokIdent, i, j)
		// A macro invocation: name!(…), name![…], name!{…}.
		k := rustBlanks(src, j)
		if k < len(src) && src[k] == '!' && (k+1 >= len(src) || src[k+1] != '=') {
			m := rustBlanks(src, k+1)
			if m < len(src) && (src[m] == '(' || src[m] == '[' || src[m] == '{') {
				r.add(tokOther, k, m+1)
				r.groups = append(r.groups, rustGroup{macro: string(src[i:j]), fresh: true})
				return m + 1
			}
		}
		return j
	case isDigit(c):
		return r.number(i, false)
	case c == '(' || c == '[' || c == '{':
		r.groups = append(r.groups, rustGroup{fresh: true})
		r.add(tokOther, i, i+1)
		return i + 1
	case c == ')' || c == ']' || c == '}':
		if len(r.groups) > 0 {
			r.groups = r.groups[:len(r.groups)-1]
		}
		r.add(tokOther, i, i+1)
		return i + 1
	case c == ',':
		if g != nil {
			g.arg++
			g.fresh = true
			if g.macro == "concat" {
				r.add(tokPlus, i, i+1)
				return i + 1
			}
		}
		r.add(tokOther, i, i+1)
		return i + 1
	case c == '+':
		return r.operator(i, tokPlus, "=")
	case c == '.':
		return r.operator(i, tokDot, ".")
	case c == ':' && i+1 < len(src) && src[i+1] == ':':
		r.add(tokDot, i, i+2)
		return i + 2
	case c == ';':
		r.add(tokBreak, i, i+1)
		return i + 1
	}
	r.add(tokOther, i, i+1)
	return i + 1
}

// rustBlanks skips blanks and line breaks from i.
func rustBlanks(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

// rustChar skips the char literal, lifetime or label at src[i] (a single
// quote) and returns the offset after it. A quote followed by one
// character and a closing quote, or by an escape, is a char literal
// ('a', '\n', '\u{e9}', and the escaped quote); anything else is a
// lifetime or label ('a, 'static), which has no closing quote.
func rustChar(src []byte, i int) int {
	if i+1 >= len(src) {
		return i + 1
	}
	if src[i+1] == '\\' {
		// An escape: the closing quote follows within a few bytes on the
		// same line (\u{10FFFF} is the longest).
		for j := i + 3; j < len(src) && j < i+14; j++ {
			if src[j] == '\'' {
				return j + 1
			}
			if src[j] == '\n' {
				break
			}
		}
		return i + 1
	}
	_, n := utf8.DecodeRune(src[i+1:])
	if k := i + 1 + n; k < len(src) && src[k] == '\'' && src[i+1] != '\n' {
		return k + 1
	}
	j := i + 1
	for j < len(src) && isIdentChar(src[j]) {
		j++
	}
	return j
}

// str lexes a string literal whose prefix starts at start and whose
// opening quote is at q. hashes is the number of # of a raw string, or -1
// for a string with escapes. byteStr marks b"…" and br"…", whose \x
// escapes are bytes. fresh reports that the literal opens an argument of
// the innermost bracket.
func (r *rustLexer) str(start, q, hashes int, byteStr, fresh bool) int {
	src := r.src
	macro := ""
	format := false
	if g := r.top(); g != nil && g.macro != "" {
		macro = g.macro
		if k, ok := rustFormatArg[macro]; ok && fresh && !g.format && g.arg >= k {
			format = true
			g.format = true
		}
	}
	b := newBuilder()
	j := q + 1
	for {
		if j >= len(src) {
			return j // unterminated: the rest of the file
		}
		c := src[j]
		switch {
		case c == '"':
			if hashes <= 0 {
				l := b.literal(start, j+1)
				l.Macro = macro
				r.addString(l)
				return j + 1
			}
			k := j + 1
			for k < len(src) && k-j-1 < hashes && src[k] == '#' {
				k++
			}
			if k-j-1 == hashes {
				l := b.literal(start, k)
				l.Macro = macro
				r.addString(l)
				return k
			}
			b.verbatim(src, j, k)
			j = k
		case c == '\\' && hashes < 0:
			j = rustEscape(&b, src, j, byteStr)
		case c == '\r' && j+1 < len(src) && src[j+1] == '\n':
			// The compiler reads CRLF line breaks as LF.
			b.skip()
			j++
		case format && c == '{':
			if j+1 < len(src) && src[j+1] == '{' {
				b.decoded("{", j)
				j += 2
				break
			}
			k := j + 1
			for k < len(src) && src[k] != '}' && src[k] != '{' && src[k] != '"' && src[k] != '\\' && src[k] != '\n' {
				k++
			}
			if k < len(src) && src[k] == '}' {
				b.decoded(Placeholder, j)
				j = k + 1
				break
			}
			b.verbatim(src, j, j+1)
			j++
		case format && c == '}':
			if j+1 < len(src) && src[j+1] == '}' {
				b.decoded("}", j)
				j += 2
				break
			}
			b.verbatim(src, j, j+1)
			j++
		default:
			k := j + 1
			for k < len(src) && src[k] != '"' && src[k] != '\\' && src[k] != '\r' && src[k] != '{' && src[k] != '}' {
				k++
			}
			b.verbatim(src, j, k)
			j = k
		}
	}
}

// rustEscape decodes the escape at src[i] (a backslash) and returns the
// offset after it. A backslash before a line break skips the break and
// the blanks after it.
func rustEscape(b *builder, src []byte, i int, byteStr bool) int {
	if i+1 >= len(src) {
		b.verbatim(src, i, i+1)
		return i + 1
	}
	switch c := src[i+1]; c {
	case '\n', '\r':
		b.skip()
		return rustBlanks(src, i+1)
	case 'n', 'r', 't', '0', '\\', '\'', '"':
		v, _ := simpleEscape(c)
		b.decoded(v, i)
	case 'x':
		v, n := hexRun(src, i+2, 2)
		if n != 2 {
			return selfEscape(b, src, i)
		}
		if byteStr {
			b.decodedByte(v, i)
		} else {
			b.decodedRune(v, i)
		}
		return i + 4
	case 'u':
		if i+2 >= len(src) || src[i+2] != '{' {
			return selfEscape(b, src, i)
		}
		var v rune
		j := i + 3
		digits := 0
		for j < len(src) && (isHex(src[j]) || src[j] == '_') && digits <= 6 {
			if src[j] != '_' {
				v = v*16 + hexVal(src[j])
				digits++
			}
			j++
		}
		if digits == 0 || digits > 6 || j >= len(src) || src[j] != '}' {
			return selfEscape(b, src, i)
		}
		b.decodedRune(v, i)
		return j + 1
	default:
		return selfEscape(b, src, i)
	}
	return i + 2
}
