// Package sqlparse is pgpoolcheck's only caller of the PostgreSQL parser
// (libpg_query through pg_query_go, which needs cgo). It splits SQL text into
// statements with exact byte offsets, parses each one on its own so that one
// bad statement does not hide the rest of a file, maps offsets to line and
// column, and extracts the statements inside PL/pgSQL, DO and LANGUAGE sql
// bodies.
package sqlparse

import (
	"errors"
	"unsafe"

	pg "github.com/pganalyze/pg_query_go/v5"
	"github.com/pganalyze/pg_query_go/v5/parser"
)

// Statement is one statement of a source text, parsed or not.
type Statement struct {
	// Start and End are the byte offsets in the source of the statement's
	// first token and of the end of its last token.
	Start, End int
	// Base is the source offset of Text[0]; locations in Node are relative
	// to Text, so a node location loc is at source offset Base+loc.
	Base int
	// Text is what the parser saw: the source bytes from Base to End with
	// psql meta-commands blanked out (and psql variables neutralised when
	// that was needed to parse).
	Text string
	// Node is the parse tree of the statement; nil when Err is set.
	Node *pg.Node
	// Err is set when the statement does not parse.
	Err *ParseError
	// Inexact is set when node locations in Node do not map to source
	// offsets through Base (statements rebuilt from a PL/pgSQL body); a
	// finding is then reported at Start.
	Inexact bool
	// Body names the routine whose body holds the statement ("function
	// f", "procedure p", "DO block"); empty for top-level statements.
	Body string
}

// ParseError is a statement that PostgreSQL's parser rejects.
type ParseError struct {
	Message string
	// Offset is the source byte offset the parser pointed at.
	Offset int
}

func (e *ParseError) Error() string { return e.Message }

// Source returns the statement's own source bytes.
func (s *Statement) Source(src []byte) string { return string(src[s.Start:s.End]) }

// ParseChunk parses one chunk of src as found by Split. Usually it yields one
// statement; a chunk the splitter could not divide may yield several. The
// statements' Text may share memory with src: src must not be modified
// while they are in use.
func ParseChunk(src []byte, c Chunk) []Statement {
	text := chunkText(src, c, false)
	res, err := pg.Parse(text)
	if err != nil && len(c.Vars) > 0 {
		alt := chunkText(src, c, true)
		if r2, err2 := pg.Parse(alt); err2 == nil {
			text, res, err = alt, r2, nil
		}
	}
	if err != nil {
		pe := &ParseError{Message: err.Error(), Offset: c.Start}
		var perr *parser.Error
		if errors.As(err, &perr) {
			pe.Message = perr.Message
			if perr.Cursorpos > 0 {
				pe.Offset = c.Start + perr.Cursorpos - 1
			}
		}
		if pe.Offset > c.End {
			pe.Offset = c.End
		}
		return []Statement{{Start: c.Start, End: c.End, Base: c.Start, Text: text, Err: pe}}
	}
	out := make([]Statement, 0, len(res.Stmts))
	for _, raw := range res.Stmts {
		start := c.Start + int(raw.StmtLocation)
		end := c.End
		if raw.StmtLen > 0 {
			end = c.Start + int(raw.StmtLocation+raw.StmtLen)
		}
		start = skipSpaceAndComments(src, start, end)
		out = append(out, Statement{Start: start, End: end, Base: c.Start, Text: text, Node: raw.Stmt})
	}
	return out
}

// chunkText returns the bytes of c with meta-commands blanked. With vars,
// psql variable references are made parseable: ":name" becomes " name"
// (an identifier), ":'name'" a string and ":\"name\"" a quoted identifier.
// Offsets never move.
func chunkText(src []byte, c Chunk, vars bool) string {
	if len(c.Meta) == 0 && !vars {
		if c.End == c.Start {
			return ""
		}
		// The source is never modified while it is scanned, so the
		// statement text can share its bytes instead of copying them.
		return unsafe.String(&src[c.Start], c.End-c.Start)
	}
	b := []byte(string(src[c.Start:c.End]))
	for _, m := range c.Meta {
		for i := m.Start; i < m.End && i < c.End; i++ {
			b[i-c.Start] = ' '
		}
	}
	if vars {
		for _, v := range c.Vars {
			b[v.Start-c.Start] = ' '
		}
	}
	return string(b)
}

// skipSpaceAndComments moves from i past whitespace and comments, not past
// limit.
func skipSpaceAndComments(src []byte, i, limit int) int {
	for i < limit {
		switch {
		case isSpace(src[i]):
			i++
		case src[i] == '-' && i+1 < limit && src[i+1] == '-':
			i = lineEnd(src, i)
		case src[i] == '/' && i+1 < limit && src[i+1] == '*':
			i = skipBlockComment(src, i)
		default:
			return i
		}
	}
	if i > limit {
		return limit
	}
	return i
}

// Parse parses a whole text, for callers that have a statement already
// isolated (function bodies, statements from captures).
func Parse(text string) (*pg.ParseResult, error) { return pg.Parse(text) }

// Fingerprint returns pg_query's fingerprint of text: the same for
// statements that differ only in constants, whitespace and comments.
func Fingerprint(text string) (string, error) { return pg.Fingerprint(text) }

// Normalize replaces constants in text by $n placeholders.
func Normalize(text string) (string, error) { return pg.Normalize(text) }
