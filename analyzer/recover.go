package analyzer

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// A statement of application code that does not parse once its
// interpolations are identifiers is often still SQL: an interpolation
// stands where a keyword goes (WITH j AS #{materialized} (…)), or the
// literal is the head of a statement that code completes
// (sb.append("CREATE TEMP TABLE ").append(name), "SET search_path TO " +
// schema in a builder). recoverChunk reads such a chunk in two steps:
//
//  1. without the interpolations: each one in turn, then all of them, is
//     blanked (an interpolation holding a keyword, or nothing);
//  2. otherwise by its words: a SET or RESET of a PostgreSQL parameter,
//     LISTEN, CREATE TEMP TABLE or PREPARE at its start, and the calls of
//     the functions that change session state anywhere in it (advisory
//     locks, set_config), are each parsed on their own, completed with a
//     value where the text stops, and reported where they stand.
//
// Offsets never move: blanks replace interpolations byte for byte, and a
// statement read from words keeps the source offsets of its words.

// maxBlanked bounds the interpolations blanked one at a time.
const maxBlanked = 8

// recoverChunk returns the statements of a chunk that does not parse, or
// nil. after is the source code that follows the literal, where a builder
// goes on (.append(" ON COMMIT DROP")).
func recoverChunk(sql []byte, ch sqlparse.Chunk, after []byte) []sqlparse.Statement {
	if sts := withoutInterpolations(sql, ch); sts != nil {
		return sts
	}
	return byWords(sql, ch, after)
}

// withoutInterpolations parses ch with its interpolations blanked, one at
// a time and then all together; nil when no reading parses.
func withoutInterpolations(sql []byte, ch sqlparse.Chunk) []sqlparse.Statement {
	ph := []byte(extract.Placeholder)
	var at []int
	for k := ch.Start; k < ch.End; {
		i := bytes.Index(sql[k:ch.End], ph)
		if i < 0 {
			break
		}
		at = append(at, k+i)
		k += i + len(ph)
	}
	if len(at) == 0 {
		return nil
	}
	try := func(blank []int) []sqlparse.Statement {
		alt := bytes.Clone(sql)
		for _, a := range blank {
			for k := a; k < a+len(ph); k++ {
				alt[k] = ' '
			}
		}
		sts := sqlparse.ParseChunk(alt, ch)
		if len(sts) == 0 || sts[0].Err != nil {
			return nil
		}
		return sts
	}
	if len(at) <= maxBlanked {
		for _, a := range at {
			if sts := try([]int{a}); sts != nil {
				return sts
			}
		}
	}
	if len(at) > 1 {
		return try(at)
	}
	return nil
}

var (
	// headSet is SET [SESSION] name TO|= at the start of a statement.
	headSet = regexp.MustCompile(`(?i)^\s*(SET\s+(?:SESSION\s+)?)([a-z_][a-z0-9_.$]*)\s*(?:TO\b|=)`)
	// headReset is RESET name.
	headReset = regexp.MustCompile(`(?i)^\s*RESET\s+([a-z_][a-z0-9_.$]*)`)
	// headListen is LISTEN channel, or LISTEN and a space a builder
	// completes (not the word alone).
	headListen = regexp.MustCompile(`(?i)^\s*LISTEN(?:\s+[a-z_"][a-z0-9_$"]*|\s*$)`)
	// headTemp is CREATE [GLOBAL|LOCAL] TEMP[ORARY] TABLE|VIEW|SEQUENCE.
	headTemp = regexp.MustCompile(`(?i)^\s*CREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP|TEMPORARY)\s+(TABLE|VIEW|SEQUENCE)\b`)
	// headPrepare is PREPARE name.
	headPrepare = regexp.MustCompile(`(?i)^\s*PREPARE\s+([a-z_][a-z0-9_$]*)\s*(?:\(|AS\b)`)
	// onCommitDrop marks a temporary table dropped at commit.
	onCommitDrop = regexp.MustCompile(`(?i)\bON\s+COMMIT\s+DROP\b`)
	// stateCall is a call of a function that changes session state.
	stateCall = regexp.MustCompile(`(?i)\b(?:pg_catalog\s*\.\s*)?(pg_(?:try_)?advisory_(?:lock|lock_shared|unlock|unlock_shared|unlock_all)|set_config)\s*\(`)
)

// byWords reads a chunk that does not parse by its words (step 2 above).
func byWords(sql []byte, ch sqlparse.Chunk, after []byte) []sqlparse.Statement {
	text := sql[ch.Start:ch.End]
	var out []sqlparse.Statement
	// read parses stmt, whose text is the chunk's source up to end and
	// then a completion, as the statement the chunk starts with.
	read := func(stmt string, end int) {
		res, err := sqlparse.Parse(stmt)
		if err != nil || len(res.Stmts) != 1 {
			return
		}
		out = append(out, sqlparse.Statement{Start: skipBlank(sql, ch.Start, end), End: end, Base: ch.Start,
			Text: stmt, Node: res.Stmts[0].Stmt})
	}
	switch {
	case headSet.Match(text):
		m := headSet.FindSubmatchIndex(text)
		name := string(text[m[4]:m[5]])
		if rules.KnownParameter(name) || strings.Contains(name, extract.Placeholder) {
			read(string(text[:m[1]])+" "+extract.Placeholder, ch.Start+m[1])
		}
	case headReset.Match(text):
		m := headReset.FindSubmatchIndex(text)
		if rules.KnownParameter(string(text[m[2]:m[3]])) {
			read(string(text[:m[1]]), ch.Start+m[1])
		}
	case headListen.Match(text):
		m := headListen.FindIndex(text)
		if stmt := string(text[:m[1]]); strings.EqualFold(strings.TrimSpace(stmt), "LISTEN") {
			if ch.End < len(sql) && (sql[ch.End] == ' ' || sql[ch.End] == '\t') {
				read(stmt+" "+extract.Placeholder, ch.Start+m[1]) // "LISTEN " + channel
			}
		} else {
			read(stmt, ch.Start+m[1])
		}
	case headTemp.Match(text):
		m := headTemp.FindSubmatchIndex(text)
		stmt := string(text[:m[1]]) + " " + extract.Placeholder
		switch strings.ToUpper(string(text[m[2]:m[3]])) {
		case "TABLE":
			stmt += " ()"
			if onCommitDrop.Match(text) || onCommitDrop.Match(after) {
				stmt += " ON COMMIT DROP"
			}
		case "VIEW":
			stmt += " AS SELECT 1"
		}
		read(stmt, ch.Start+m[1])
	case headPrepare.Match(text):
		m := headPrepare.FindSubmatchIndex(text)
		read(string(text[:m[3]])+" AS SELECT 1", ch.Start+m[3])
	}
	for _, m := range stateCall.FindAllIndex(text, -1) {
		open := ch.Start + m[1] - 1
		shut := closingParen(sql, open, ch.End)
		start := ch.Start + m[0]
		call := string(sql[start:open]) + "(" + extract.Placeholder + ")"
		if shut > 0 {
			call = string(sql[start : shut+1])
		}
		// The call alone, as SELECT call: its locations are those of
		// the source from start on, less the 7 bytes of "SELECT ".
		res, err := sqlparse.Parse("SELECT " + call)
		if err != nil {
			call = string(sql[start:open]) + "(" + extract.Placeholder + ")"
			if res, err = sqlparse.Parse("SELECT " + call); err != nil {
				continue
			}
		}
		end := ch.Start + m[1]
		if shut > 0 {
			end = shut + 1
		}
		out = append(out, sqlparse.Statement{Start: start, End: end, Base: start - len("SELECT "),
			Text: "SELECT " + call, Node: res.Stmts[0].Stmt})
	}
	return out
}

// maxAfter bounds the source read after a literal for the rest of a
// builder's statement.
const maxAfter = 400

// builderRest returns the code after a literal that ends at end, up to a
// blank line, a ';' or maxAfter bytes: where a builder that starts a statement
// with the literal goes on.
func builderRest(src []byte, end int) []byte {
	rest := src[min(end, len(src)):min(end+maxAfter, len(src))]
	if i := bytes.Index(rest, []byte("\n\n")); i >= 0 {
		rest = rest[:i]
	}
	if i := bytes.IndexByte(rest, ';'); i >= 0 {
		rest = rest[:i] // the end of a chain of appends
	}
	return rest
}

// closingParen returns the offset of the parenthesis that closes the one
// at open, before limit, or -1.
func closingParen(b []byte, open, limit int) int {
	depth := 0
	for k := open; k < limit; k++ {
		switch b[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return k
			}
		case '\'':
			if e := bytes.IndexByte(b[k+1:limit], '\''); e >= 0 {
				k += e + 1
			}
		}
	}
	return -1
}

// skipBlank returns the first offset from i on, before limit, that is not
// white space.
func skipBlank(b []byte, i, limit int) int {
	for i < limit && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
