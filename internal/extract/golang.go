package extract

import (
	"bytes"
	"go/scanner"
	"go/token"
	"regexp"
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

// goHelperCall is a variable given the first result of a call of a test
// transaction helper, and where the call is.
type goHelperCall struct {
	v  string
	at int
}

// goHelperAssign is "tx, … := pkg.Name(" or "tx := Name(".
var goHelperAssign = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*(?:,\s*[A-Za-z_]\w*\s*)*:?=\s*(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\s*\(`)

// goHelperCalls returns the variables that receive a transaction from a
// call of one of helpers.
func goHelperCalls(src []byte, code []bool, helpers map[string]bool) []goHelperCall {
	if len(helpers) == 0 {
		return nil
	}
	var out []goHelperCall
	for _, m := range goHelperAssign.FindAllSubmatchIndex(src, -1) {
		if !code[m[0]] || !helpers["go:"+string(src[m[4]:m[5]])] {
			continue
		}
		out = append(out, goHelperCall{v: string(src[m[2]:m[3]]), at: m[0]})
	}
	return out
}

// goFuncHeader is the start of a Go function: func Name( or func (r T) Name(.
var goFuncHeader = regexp.MustCompile(`(?m)^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[\[(]`)

// goTestHelpers returns the Go functions of src that begin a transaction,
// roll it back (in t.Cleanup, deferred, …) and never commit it, and return
// it (wrapped or not): test helpers that hand out a transaction that is
// always rolled back.
func goTestHelpers(src []byte) []string {
	code := codeWith(Go, src, "Rollback")
	if code == nil {
		return nil
	}
	var names []string
	for _, m := range goFuncHeader.FindAllSubmatchIndex(src, -1) {
		open := bytes.IndexByte(src[m[1]:], '{')
		if open < 0 {
			continue
		}
		body := enclosingScope(Go, src, code, m[1]+open+1)
		if body.Start != m[1]+open {
			continue
		}
		for _, sp := range txVarRolledBack(Go, "helper_test.go", src[:body.End], code[:body.End], nil) {
			if sp.Start < body.Start {
				continue
			}
			// The variable the spans belong to: the receiver before the
			// call's argument list.
			v, _ := receiverBefore(src, methodStart(src, sp.Start))
			if v != "" && returns(src[body.Start:body.End], v) {
				names = append(names, string(src[m[2]:m[3]]))
				break
			}
		}
	}
	return names
}

// goTxParam is a Go function parameter typed as a transaction, and the
// body of the function.
type goTxParam struct {
	v    string
	body Span
}

var (
	// goTxParamRE is a parameter typed as a transaction: tx pgx.Tx, tx
	// *sql.Tx, tx *sqlx.Tx, tx bun.Tx, tx *pg.Tx.
	goTxParamRE = regexp.MustCompile(`\b([A-Za-z_]\w*)\s+(?:\*sql\.Tx|\*sqlx\.Tx|pgx\.Tx|bun\.Tx|\*pg\.Tx)\b`)
	// goFuncBefore is the text of a function header before its parameter
	// list: func, func Name, func (r *T) Name, func Name[T any].
	goFuncBefore = regexp.MustCompile(`\bfunc\s*(?:\([^()]*\)\s*)?(?:[A-Za-z_]\w*)?\s*(?:\[[^\[\]]*\])?\s*$`)
)

// goTxParams returns the parameters of Go functions (and function
// literals) typed as transactions.
func goTxParams(src []byte, code []bool) []goTxParam {
	var out []goTxParam
	for _, m := range goTxParamRE.FindAllSubmatchIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		// The parenthesis that opens the parameter list holding it.
		open, depth := -1, 0
		for k := m[0] - 1; k >= 0 && k > m[0]-2000; k-- {
			if !code[k] {
				continue
			}
			c := src[k]
			if c == ')' {
				depth++
			} else if c == '(' {
				if depth == 0 {
					open = k
					break
				}
				depth--
			} else if c == '{' || c == '}' || c == ';' {
				break
			}
		}
		if open < 0 || !goFuncBefore.Match(src[max(0, open-200):open]) {
			continue
		}
		closeAt := CloseParen(src, code, open)
		if closeAt < 0 {
			continue
		}
		// The body: the first brace after the results, on the same line
		// (gofmt puts it there). A parenthesis closed first ends the
		// parameter list of another function: this one is a function
		// type (fn func(tx pgx.Tx) error), as is a header that ends the
		// line.
		b, depth := -1, 0
	scan:
		for k := closeAt; k < len(src); k++ {
			if !code[k] {
				continue
			}
			switch src[k] {
			case '(':
				depth++
			case ')':
				if depth--; depth < 0 {
					break scan
				}
			case '{':
				if depth == 0 {
					b = k
					break scan
				}
			case '\n', ',', ';', '=':
				if depth == 0 {
					break scan
				}
			}
		}
		if b < 0 {
			continue
		}
		body := braceSpan(src, code, b)
		out = append(out, goTxParam{v: string(src[m[2]:m[3]]), body: body})
	}
	return out
}
