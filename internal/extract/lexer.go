package extract

import "strings"

// The pieces of a code loop that the language lexers share.

// byteAt returns src[i], or 0 past the end of src.
func byteAt(src []byte, i int) byte {
	if i < len(src) {
		return src[i]
	}
	return 0
}

// numberEnd returns the offset after the number that starts at src[i]: a
// run of identifier characters (digits, suffixes, hex letters, exponents)
// and of dots followed by a digit. With anyDot set, every dot continues
// the number (Python's and JavaScript's 1.).
func numberEnd(src []byte, i int, anyDot bool) int {
	j := i + 1
	for j < len(src) && (isIdentChar(src[j]) || src[j] == '.' && (anyDot || j+1 < len(src) && isDigit(src[j+1]))) {
		j++
	}
	return j
}

// number adds the number that starts at src[i] (see numberEnd) as a
// token and returns the offset after it.
func (lx *lexer) number(i int, anyDot bool) int {
	j := numberEnd(lx.src, i, anyDot)
	lx.add(tokOther, i, j)
	return j
}

// lineComment adds the comment that runs from src[i] to the end of the
// line, whose text starts at text, and returns the offset of the line
// break.
func (lx *lexer) lineComment(i, text int) int {
	end := lineEnd(lx.src, i)
	lx.comment(i, end, text, end)
	return end
}

// starComment adds the /* */ comment at src[i] (nested ones too with
// nested set) and returns the offset after it.
func (lx *lexer) starComment(i int, nested bool) int {
	end, textEnd := blockCommentEnd(lx.src, i+2, nested)
	lx.comment(i, end, i+2, textEnd)
	return end
}

// blockCommentEnd finds the end of a block comment whose body starts at i.
// It returns the offset after the closing marker and the offset of the
// marker itself (both len(src) when unterminated). With nested set, inner
// block comments nest (Kotlin).
func blockCommentEnd(src []byte, i int, nested bool) (end, textEnd int) {
	depth := 1
	for i+1 < len(src) {
		if src[i] == '*' && src[i+1] == '/' {
			depth--
			if depth == 0 {
				return i + 2, i
			}
			i += 2
			continue
		}
		if nested && src[i] == '/' && src[i+1] == '*' {
			depth++
			i += 2
			continue
		}
		i++
	}
	return len(src), len(src)
}

// punct adds the byte at src[i], which starts no longer token, as a token
// of its own, counting the braces open in depth. With stop set, an
// unmatched closing brace ends the code being lexed (an interpolation, a
// template substitution): punct then adds nothing and reports false.
func (lx *lexer) punct(i int, depth *int, stop bool) bool {
	switch lx.src[i] {
	case '{':
		*depth++
	case '}':
		if *depth > 0 {
			*depth--
		} else if stop {
			return false
		}
	}
	lx.add(tokOther, i, i+1)
	return true
}

// operator adds the operator at src[i] and returns the offset after it:
// with one of seconds after it, both bytes as one other token (+=, ++,
// ..), else the byte alone as a token of kind.
func (lx *lexer) operator(i int, kind tokKind, seconds string) int {
	if i+1 < len(lx.src) && strings.IndexByte(seconds, lx.src[i+1]) >= 0 {
		lx.add(tokOther, i, i+2)
		return i + 2
	}
	lx.add(kind, i, i+1)
	return i + 1
}

// interpolation adds to a string's value what an interpolation scanner
// found at src[at] and returns the offset after it: end is at when there
// is no interpolation there (the byte is kept as text), and past len(src)
// when it is unterminated (then ok is false: the string ends the file).
// Otherwise src[at:end] stands for Placeholder.
func (b *builder) interpolation(src []byte, at, end int) (next int, ok bool) {
	switch {
	case end == at:
		b.verbatim(src, at, at+1)
		return at + 1, true
	case end > len(src):
		return len(src), false
	}
	b.decoded(Placeholder, at)
	return end, true
}
