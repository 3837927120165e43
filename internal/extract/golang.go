package extract

import (
	"bytes"
	"go/scanner"
	"go/token"
	"strconv"
)

// lexGo tokenizes Go source with go/scanner. Interpreted strings are decoded
// escape by escape with strconv.UnquoteChar (the primitive behind
// strconv.Unquote) so that every escape starts its own segment; raw strings
// are copied with carriage returns removed, as the language specifies.
func lexGo(src []byte) *lexer {
	lx := newLexer(src)
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		off := file.Offset(pos)
		switch tok {
		case token.COMMENT:
			lx.goComment(off)
		case token.STRING:
			if l, ok := goString(src, off, lit); ok {
				lx.addString(l)
			} else {
				lx.add(tokOther, off, off+len(lit))
			}
		case token.ADD:
			lx.add(tokPlus, off, off+1)
		case token.IDENT:
			lx.add(tokIdent, off, off+len(lit))
		case token.PERIOD:
			lx.add(tokDot, off, off+1)
		case token.SEMICOLON:
			lx.add(tokBreak, off, off+1)
		default:
			lx.add(tokOther, off, off+1)
		}
	}
	return lx
}

func (lx *lexer) goComment(off int) {
	src := lx.src
	if off+1 >= len(src) {
		return
	}
	if src[off+1] == '/' {
		end := lineEnd(src, off)
		lx.comment(off, end, off+2, end)
		return
	}
	end := bytes.Index(src[off+2:], []byte("*/"))
	if end < 0 {
		lx.comment(off, len(src), off+2, len(src))
		return
	}
	end += off + 2
	lx.comment(off, end+2, off+2, end)
}

// goString decodes the string literal starting at src[off], whose text as
// returned by the scanner is lit. It reports false for an unterminated or
// malformed literal.
func goString(src []byte, off int, lit string) (Literal, bool) {
	b := newBuilder()
	if src[off] == '`' {
		i := off + 1
		for i < len(src) && src[i] != '`' {
			j := i
			for j < len(src) && src[j] != '`' && src[j] != '\r' {
				j++
			}
			b.verbatim(src, i, j)
			if j < len(src) && src[j] == '\r' {
				b.skip()
				j++
			}
			i = j
		}
		if i >= len(src) {
			return Literal{}, false
		}
		return b.literal(off, i+1), true
	}
	i := off + 1
	for {
		if i >= len(src) || src[i] == '\n' {
			return Literal{}, false
		}
		c := src[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\\' && src[j] != '\n' {
				j++
			}
			b.verbatim(src, i, j)
			i = j
			continue
		}
		// The scanner's text of an interpreted string is the source text.
		k := i - off
		if k >= len(lit) {
			return Literal{}, false
		}
		rest := lit[k:]
		r, multibyte, tail, err := strconv.UnquoteChar(rest, '"')
		if err != nil {
			return Literal{}, false
		}
		n := len(rest) - len(tail)
		if multibyte {
			b.decodedRune(r, i)
		} else {
			b.decodedByte(r, i)
		}
		i += n
	}
	return b.literal(off, i+1), true
}
