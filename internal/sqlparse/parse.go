// Package sqlparse is pgpoolcheck's only caller of the PostgreSQL parser
// (libpg_query through pg_query_go, which needs cgo). It splits SQL text into
// statements with exact byte offsets, parses each one on its own so that one
// bad statement does not hide the rest of a file, maps offsets to line and
// column, and extracts the statements inside PL/pgSQL, DO and LANGUAGE sql
// bodies.
package sqlparse

import (
	"bytes"
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
	text := chunkText(src, c, keepVars)
	res, err := pg.Parse(text)
	if err != nil {
		// psql variables stand for text the parser cannot know: try the
		// readings that fit where they usually stand; then template and
		// driver placeholders ({name}, {{ .X }}, %(name)s, %s, ?).
		var modes []varMode
		if len(c.Vars) > 0 {
			modes = append(modes, varIdent, varBlank, varGlue, varZero, varString)
		}
		modes = append(modes, templates)
		for _, m := range modes {
			alt := chunkText(src, c, m)
			if alt == text {
				continue
			}
			if r2, err2 := pg.Parse(alt); err2 == nil {
				text, res, err = alt, r2, nil
				break
			}
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

// varMode says how chunkText rewrites psql variables and placeholders.
type varMode int

const (
	keepVars  varMode = iota
	varIdent          // :name → " name" (an identifier), :'name' a string, :"name" an identifier
	varBlank          // the whole reference → spaces (:PREFIX SELECT …)
	varGlue           // :name → "_name" (glued to an identifier: pk_:oid)
	varZero           // → "0" (RESTART :n)
	varString         // → "''" (LOCATION :dir)
	templates         // varIdent, plus {name}, {{ … }}, %(name)s, %s and ? as identifiers
)

// chunkText returns the bytes of c with meta-commands blanked and, by
// mode, psql variables and placeholders rewritten. Extension-script
// markers (@extschema@, @extowner@, @extschema:name@) always become an
// identifier. Offsets never move.
func chunkText(src []byte, c Chunk, mode varMode) string {
	raw := src[c.Start:c.End]
	ext := bytes.Contains(raw, []byte("@ext"))
	if len(c.Meta) == 0 && mode == keepVars && !ext {
		if c.End == c.Start {
			return ""
		}
		// The source is never modified while it is scanned, so the
		// statement text can share its bytes instead of copying them.
		return unsafe.String(&src[c.Start], c.End-c.Start)
	}
	b := []byte(string(raw))
	for _, m := range c.Meta {
		for i := m.Start; i < m.End && i < c.End; i++ {
			b[i-c.Start] = ' '
		}
	}
	if ext {
		replaceExtMarkers(b)
	}
	for _, v := range c.Vars {
		r := b[v.Start-c.Start : v.End-c.Start]
		switch mode {
		case varIdent, templates:
			r[0] = ' '
		case varBlank:
			for i := range r {
				r[i] = ' '
			}
		case varGlue:
			r[0] = '_'
		case varZero:
			for i := range r {
				r[i] = ' '
			}
			r[0] = '0'
		case varString:
			for i := range r {
				r[i] = ' '
			}
			r[0], r[1] = '\'', '\''
		}
	}
	if mode == templates {
		blankPlaceholders(b)
	}
	return string(b)
}

// replaceExtMarkers turns @extschema@, @extowner@ and @extschema:name@
// into identifiers of the same length.
func replaceExtMarkers(b []byte) {
	for i := 0; i+4 < len(b); i++ {
		if b[i] != '@' || !bytes.HasPrefix(b[i+1:], []byte("ext")) {
			continue
		}
		j := i + 1
		for j < len(b) && (isIdentCont(b[j]) || b[j] == ':') && b[j] != '$' {
			j++
		}
		if j < len(b) && b[j] == '@' {
			for k := i; k <= j; k++ {
				if b[k] == '@' || b[k] == ':' {
					b[k] = '_'
				}
			}
			i = j
		}
	}
}

// blankPlaceholders turns template and driver placeholders outside quotes
// and comments into identifiers made of underscores, of the same length.
func blankPlaceholders(b []byte) {
	fill := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			b[k] = '_'
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\'' || c == '"':
			i = skipQuoted(b, i, c, false)
		case c == '-' && i+1 < len(b) && b[i+1] == '-':
			i = lineEnd(b, i)
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i = skipBlockComment(b, i)
		case c == '$':
			if t := dollarTag(b, i); t > 0 {
				i = skipDollar(b, i, t)
			} else {
				i++
			}
		case c == '{':
			j := i + 1
			for j < len(b) && b[j] != '}' && b[j] != ';' && b[j] != '\n' {
				j++
			}
			for j+1 < len(b) && b[j+1] == '}' {
				j++
			}
			if j < len(b) && b[j] == '}' {
				fill(i, j+1)
				i = j + 1
			} else {
				i++
			}
		case c == '%' && i+1 < len(b) && (b[i+1] == 's' || b[i+1] == 'd'):
			fill(i, i+2)
			i += 2
		case c == '%' && i+1 < len(b) && b[i+1] == '(':
			j := i + 2
			for j < len(b) && b[j] != ')' && b[j] != '\n' {
				j++
			}
			if j+1 < len(b) && b[j] == ')' && (b[j+1] == 's' || b[j+1] == 'd') {
				fill(i, j+2)
				i = j + 2
			} else {
				i++
			}
		case c == '?' && !(i+1 < len(b) && (b[i+1] == '|' || b[i+1] == '&')):
			fill(i, i+1)
			i++
		default:
			i++
		}
	}
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
