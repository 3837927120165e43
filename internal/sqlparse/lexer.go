package sqlparse

import "strings"

// The lexer in this file splits SQL text into statements the way psql does
// when it reads a script: it knows PostgreSQL's quoting rules (standard and
// E'' strings, quoted identifiers, dollar quotes, nested block comments),
// psql's backslash meta-commands and variables, COPY … FROM STDIN data
// blocks, and BEGIN ATOMIC function bodies. It is pure Go and never fails:
// text it does not understand stays inside the current statement, so the
// real parser reports it.

// Range is a half-open byte range [Start, End) in a source text.
type Range struct {
	Start, End int
}

// Comment is one SQL comment: "-- …" (Line) or "/* … */".
type Comment struct {
	Range
	Line bool
}

// Chunk is one statement as the splitter found it.
type Chunk struct {
	// Start is the byte offset of the statement's first token; End is the
	// offset just past its last byte (the terminating ';' is not included).
	Start, End int
	// Meta lists psql meta-command ranges that sit inside [Start, End).
	Meta []Range
	// Vars lists psql variable references (:name, :'name', :"name") inside
	// [Start, End).
	Vars []Range
}

// Script is the result of splitting a text.
type Script struct {
	Chunks   []Chunk
	Comments []Comment
	// MetaCommands lists every psql meta-command line range, including
	// those between statements.
	MetaCommands []Range
	// CopyData lists COPY … FROM STDIN data blocks that were skipped.
	CopyData []Range
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentCont(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

// lower returns an ASCII lower-case copy of b (identifiers only).
func lowerASCII(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}

// skipQuoted returns the offset just past a quoted token that starts at
// src[i] == quote. backslash enables E” escapes. An unterminated token runs
// to the end of src.
func skipQuoted(src []byte, i int, quote byte, backslash bool) int {
	i++
	for i < len(src) {
		c := src[i]
		if backslash && c == '\\' {
			i += 2
			continue
		}
		if c == quote {
			if i+1 < len(src) && src[i+1] == quote {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(src)
}

// dollarTag returns the length of a dollar-quote delimiter ($tag$) at src[i],
// or 0 when src[i:] does not start one.
func dollarTag(src []byte, i int) int {
	if src[i] != '$' {
		return 0
	}
	j := i + 1
	if j < len(src) && src[j] == '$' {
		return 2
	}
	if j >= len(src) || !isIdentStart(src[j]) {
		return 0
	}
	for j < len(src) && isIdentCont(src[j]) && src[j] != '$' {
		j++
	}
	if j < len(src) && src[j] == '$' {
		return j - i + 1
	}
	return 0
}

// skipDollar returns the offset just past the dollar-quoted string whose
// opening delimiter of length n starts at i.
func skipDollar(src []byte, i, n int) int {
	tag := src[i : i+n]
	j := i + n
	for j < len(src) {
		if src[j] == '$' && j+n <= len(src) && string(src[j:j+n]) == string(tag) {
			return j + n
		}
		j++
	}
	return len(src)
}

// skipBlockComment returns the offset past a (nested) /* */ comment at i.
func skipBlockComment(src []byte, i int) int {
	depth := 0
	for i < len(src) {
		if src[i] == '/' && i+1 < len(src) && src[i+1] == '*' {
			depth++
			i += 2
			continue
		}
		if src[i] == '*' && i+1 < len(src) && src[i+1] == '/' {
			depth--
			i += 2
			if depth == 0 {
				return i
			}
			continue
		}
		i++
	}
	return len(src)
}

func lineEnd(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' && src[i] != '\r' {
		i++
	}
	return i
}

// skipNewline moves past one line terminator (\n, \r\n or \r) at i.
func skipNewline(src []byte, i int) int {
	if i < len(src) && src[i] == '\r' {
		i++
	}
	if i < len(src) && src[i] == '\n' {
		i++
	}
	return i
}

// stmtState follows the first words of the statement being read, so the
// splitter knows about BEGIN ATOMIC bodies and COPY … FROM STDIN.
type stmtState struct {
	words      int    // identifier/keyword tokens seen
	first      string // first keyword, lower case
	routine    bool   // CREATE [OR REPLACE] FUNCTION|PROCEDURE
	beginDepth int    // BEGIN … END nesting inside a routine body
	sawFrom    bool   // COPY: "FROM" seen at depth 0
	copyStdin  bool   // COPY … FROM STDIN
	second     string // second and third word, for CREATE OR REPLACE
	third      string
}

// wantsWords reports whether the next word matters to the state; when it
// does not, the caller only counts it and saves lower-casing it.
func (s *stmtState) wantsWords() bool {
	return s.words < 4 || s.routine || s.first == "copy"
}

func (s *stmtState) word(w string, parenDepth int) {
	s.words++
	switch s.words {
	case 1:
		s.first = w
	case 2:
		s.second = w
		if s.first == "create" && (w == "function" || w == "procedure") {
			s.routine = true
		}
	case 3:
		s.third = w
	case 4:
		if s.first == "create" && s.second == "or" && s.third == "replace" && (w == "function" || w == "procedure") {
			s.routine = true
		}
	}
	if s.routine {
		switch w {
		case "begin":
			s.beginDepth++
		case "case":
			if s.beginDepth > 0 {
				s.beginDepth++
			}
		case "end":
			if s.beginDepth > 0 {
				s.beginDepth--
			}
		}
	}
	if s.first == "copy" && parenDepth == 0 {
		if w == "from" {
			s.sawFrom = true
		} else if s.sawFrom && w == "stdin" {
			s.copyStdin = true
		} else if w == "to" {
			s.sawFrom = false
		}
	}
}

// Split splits src into statements. It never fails.
func Split(src []byte) *Script {
	return SplitFunc(src, nil)
}

// SplitFunc is Split that also hands each chunk to emit as soon as it is
// found, so that a caller can start parsing while the rest is split. With
// a nil emit the chunks are collected in Script.Chunks; otherwise they are
// not.
func SplitFunc(src []byte, emit func(Chunk)) *Script {
	sc := &Script{}
	var (
		cur        Chunk
		inStmt     bool
		paren      int
		st         stmtState
		lastTokEnd int
	)
	begin := func(i int) {
		if !inStmt {
			inStmt = true
			cur = Chunk{Start: i}
			paren = 0
			st = stmtState{}
		}
	}
	finish := func(end int) (copyStdin bool) {
		if inStmt {
			cur.End = end
			if emit != nil {
				emit(cur)
			} else {
				sc.Chunks = append(sc.Chunks, cur)
			}
			copyStdin = st.copyStdin
		}
		inStmt = false
		return copyStdin
	}
	// skipCopyData skips the data block that follows COPY … FROM STDIN:
	// from the line after the statement's terminator up to and including a
	// line that holds only "\.". Returns the new offset.
	//
	// A COPY that fails before reading (a test of an error, say) has no
	// data after it: when the end of the text or another COPY … FROM STDIN
	// comes before any "\.", nothing is skipped.
	skipCopyData := func(i int) int {
		// Rest of the terminator's line belongs to psql (usually empty).
		i = skipNewline(src, lineEnd(src, i))
		start := i
		for i < len(src) {
			e := lineEnd(src, i)
			line := src[i:e]
			if string(line) == `\.` {
				i = skipNewline(src, e)
				sc.CopyData = append(sc.CopyData, Range{start, i})
				return i
			}
			if isCopyFromStdin(line) {
				return start
			}
			i = skipNewline(src, e)
		}
		return start
	}

	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < n && src[i+1] == '-':
			e := lineEnd(src, i)
			sc.Comments = append(sc.Comments, Comment{Range{i, e}, true})
			i = e
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			e := skipBlockComment(src, i)
			sc.Comments = append(sc.Comments, Comment{Range{i, e}, false})
			i = e
			continue
		case c == '\\' && i+1 < n && src[i+1] == ';':
			// psql's \; separates statements that are sent together.
			sc.MetaCommands = append(sc.MetaCommands, Range{i, i + 1})
			if inStmt && paren == 0 && st.beginDepth == 0 {
				finish(lastTokEnd)
			}
			i += 2
			lastTokEnd = i
			continue
		case c == 0xEF && i == 0 && n >= 3 && src[1] == 0xBB && src[2] == 0xBF:
			i = 3 // UTF-8 byte order mark
			continue
		case c == '\\':
			// psql meta-command: the backslash and the rest of the line.
			e := lineEnd(src, i)
			r := Range{i, e}
			sc.MetaCommands = append(sc.MetaCommands, r)
			cmd := metaName(src[i+1 : e])
			if cmd == "copy" && isCopyFromStdin(src[i+1:e]) {
				// \copy … from stdin reads its data from the script too.
				if inStmt {
					finish(lastTokEnd)
				}
				i = skipCopyData(e)
				continue
			}
			if inStmt {
				if len(cmd) > 0 && (cmd[0] == 'g' || cmd == "crosstabview" || cmd == "watch") {
					// \g, \gset, \gexec, \gx, … send the buffer.
					if finish(lastTokEnd) {
						i = skipCopyData(e)
						continue
					}
				} else {
					cur.Meta = append(cur.Meta, r)
				}
			}
			i = e
			continue
		}
		if c == ';' {
			if inStmt && paren == 0 && st.beginDepth == 0 {
				if finish(lastTokEnd) {
					i = skipCopyData(i + 1)
					continue
				}
			}
			i++
			lastTokEnd = i
			continue
		}

		begin(i)
		switch {
		case c == '\'':
			i = skipQuoted(src, i, '\'', false)
		case c == '"':
			i = skipQuoted(src, i, '"', false)
		case c == '$':
			if t := dollarTag(src, i); t > 0 {
				i = skipDollar(src, i, t)
			} else {
				i++
				for i < n && src[i] >= '0' && src[i] <= '9' {
					i++
				}
			}
		case c == ':' && i+1 < n && src[i+1] == ':':
			i += 2
		case c == ':' && i+2 < n && src[i+1] == '{' && src[i+2] == '?' && (i == 0 || src[i-1] != ':'):
			// :{?name} tests whether a variable is set.
			e := i + 3
			for e < n && src[e] != '}' && src[e] != '\n' {
				e++
			}
			if e < n && src[e] == '}' {
				e++
			}
			cur.Vars = append(cur.Vars, Range{i, e})
			i = e
		case c == ':' && i+1 < n && (src[i+1] == '\'' || src[i+1] == '"') && (i == 0 || src[i-1] != ':'):
			e := skipQuoted(src, i+1, src[i+1], false)
			cur.Vars = append(cur.Vars, Range{i, e})
			i = e
		case c == ':' && i+1 < n && isIdentStart(src[i+1]) && (i == 0 || src[i-1] != ':'):
			e := i + 1
			for e < n && isIdentCont(src[e]) && src[e] != '$' {
				e++
			}
			cur.Vars = append(cur.Vars, Range{i, e})
			i = e
		case c == '(' || c == '[':
			paren++
			i++
		case c == ')' || c == ']':
			if paren > 0 {
				paren--
			}
			i++
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentCont(src[j]) {
				j++
			}
			// String prefixes: E'…', B'…', X'…', N'…', U&'…'.
			if j == i+1 && j < n && src[j] == '\'' {
				switch c {
				case 'e', 'E':
					i = skipQuoted(src, j, '\'', true)
				default:
					i = skipQuoted(src, j, '\'', false)
				}
				break
			}
			if j == i+1 && (c == 'u' || c == 'U') && j+1 < n && src[j] == '&' && (src[j+1] == '\'' || src[j+1] == '"') {
				i = skipQuoted(src, j+1, src[j+1], false)
				break
			}
			if st.wantsWords() {
				st.word(lowerASCII(src[i:j]), paren)
			} else {
				st.words++
			}
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < n && (isIdentCont(src[j]) || src[j] == '.') {
				j++
			}
			i = j
		default:
			i++
		}
		lastTokEnd = i
	}
	finish(lastTokEnd)
	return sc
}

// isCopyFromStdin reports whether a line holds a COPY (or \copy) … FROM
// STDIN command, compared case-insensitively.
func isCopyFromStdin(line []byte) bool {
	l := strings.ToLower(string(line))
	l = strings.TrimLeft(l, " \t")
	l = strings.TrimPrefix(l, "\\")
	return strings.HasPrefix(l, "copy ") && strings.Contains(l, " from stdin")
}

// metaName returns the name of a psql meta-command (text after the
// backslash up to whitespace).
func metaName(b []byte) string {
	j := 0
	for j < len(b) && !isSpace(b[j]) && b[j] != '\\' {
		j++
	}
	return string(b[:j])
}
