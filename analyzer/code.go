package analyzer

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// codeSQL is the SQL text of one string literal of application code.
type codeSQL struct {
	lit *extract.Literal
	// sql is the literal's value with driver placeholders normalised; m
	// maps its offsets back to the value.
	sql []byte
	m   offsetMap
}

// source maps an offset in c.sql to a source offset in the file.
func (c *codeSQL) source(off int) int { return c.lit.SourceOffset(c.m.back(off)) }

// sourceEnd maps an end offset (one past the last byte).
func (c *codeSQL) sourceEnd(off int) int {
	if off <= 0 {
		return c.source(0)
	}
	return c.lit.SourceOffset(c.m.back(off-1)) + 1
}

// text returns a statement's text as the literal spells it, with
// interpolations shown as "…".
func (c *codeSQL) text(st *sqlparse.Statement) string {
	v := c.lit.Value
	a, b := c.m.back(st.Start), c.m.back(st.End)
	if st.Body != "" || a < 0 || b > len(v) || a > b {
		return strings.ReplaceAll(st.Text, extract.Placeholder, "…")
	}
	return strings.ReplaceAll(v[a:b], extract.Placeholder, "…")
}

// sqlStart lists the words a string must start with to be taken for SQL.
// Everything else (messages, keys, names) is not parsed at all.
var sqlStart = map[string]bool{
	"select": true, "insert": true, "update": true, "delete": true, "with": true, "merge": true,
	"set": true, "reset": true, "listen": true, "unlisten": true, "notify": true,
	"create": true, "alter": true, "drop": true, "truncate": true, "comment": true, "grant": true, "revoke": true,
	"begin": true, "start": true, "commit": true, "end": true, "rollback": true, "abort": true,
	"savepoint": true, "release": true, "prepare": true, "execute": true, "deallocate": true,
	"declare": true, "close": true, "fetch": true, "move": true, "discard": true, "load": true,
	"lock": true, "copy": true, "explain": true, "do": true, "call": true, "vacuum": true,
	"analyze": true, "refresh": true, "values": true, "table": true, "show": true, "reindex": true, "cluster": true,
}

// looksLikeSQL reports whether a literal starts with a SQL command word
// (after blanks, comments and opening parentheses).
func looksLikeSQL(v string) bool {
	i := 0
	for i < len(v) {
		c := v[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(':
			i++
		case strings.HasPrefix(v[i:], "--"):
			for i < len(v) && v[i] != '\n' {
				i++
			}
		case strings.HasPrefix(v[i:], "/*"):
			if k := strings.Index(v[i+2:], "*/"); k >= 0 {
				i += k + 4
			} else {
				return false
			}
		default:
			j := i
			for j < len(v) && (v[j] >= 'a' && v[j] <= 'z' || v[j] >= 'A' && v[j] <= 'Z') {
				j++
			}
			return j > i && sqlStart[strings.ToLower(v[i:j])]
		}
	}
	return false
}

// callee returns the lower-case name of the function whose argument list
// the literal at start opens, e.g. "execute" for cur.execute("…") and
// "log.printf" for log.Printf("…"); "" when the literal is not a call's
// first argument.
func callee(src []byte, start int) string {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	isName := func(c byte) bool {
		return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	i := start - 1
	for i >= 0 && isSpace(src[i]) {
		i--
	}
	if i >= 0 && src[i] == '(' {
		i--
		for i >= 0 && isSpace(src[i]) {
			i--
		}
	} else if i < 0 || !isName(src[i]) {
		return "" // not a call argument (assignment, list, concatenation)
	}
	// Without parentheses (Ruby, Elixir: puts "…") the name ends here too.
	end := i + 1
	for i >= 0 && isName(src[i]) {
		i--
	}
	return strings.ToLower(string(src[i+1 : end]))
}

// notSQLCalls are functions whose string arguments are messages for
// people, not statements: a "LISTEN carefully" printed or logged is prose.
var notSQLCalls = map[string]bool{
	"print": true, "println": true, "printf": true, "puts": true, "p": true, "pp": true,
	"log": true, "debug": true, "info": true, "warn": true, "warning": true, "error": true,
	"errorf": true, "fatal": true, "fatalf": true, "panic": true, "panicf": true, "raise": true,
	"new": true, "assert": true, "alert": true, "t.log": true, "t.logf": true, "t.error": true,
	"t.fatal": true, "describe": true, "it": true, "test": true, "context": true,
}

// notSQLCall reports whether a literal passed to function name is a
// message rather than SQL: printing, logging, errors, test names.
func notSQLCall(name string) bool {
	if name == "" {
		return false
	}
	last := name
	if k := strings.LastIndexByte(name, '.'); k >= 0 {
		last = name[k+1:]
	}
	if notSQLCalls[name] || notSQLCalls[last] {
		return true
	}
	for _, p := range []string{"log", "console.", "logger.", "fmt.", "errors."} {
		if strings.HasPrefix(name, p) && !strings.HasSuffix(name, "sprintf") {
			return true
		}
	}
	return false
}

// AnalyzeCode analyzes the SQL in the string literals of one application
// source file. Literals that are not SQL, or do not parse once driver
// placeholders are normalised, are skipped silently. Literals are taken in
// file order, so BEGIN … COMMIT sent as separate strings is followed.
func (c *Config) AnalyzeCode(name string, src []byte, lang extract.Language) (Result, error) {
	lits, comments, err := extract.Literals(lang, src)
	if err != nil {
		return Result{}, err
	}
	var checks []*rules.Rule
	for _, r := range c.rules() {
		if r.Check != nil {
			checks = append(checks, r)
		}
	}
	interesting := rules.InterestingFuncs(checks)
	lines := sqlparse.NewLineIndex(src)
	fb := &findingBuilder{name: name, src: src, lines: lines, code: map[*sqlparse.Statement]*codeSQL{}}
	pass := rules.NewPass(nil, c.target(), nil, fb.add)
	runGroup := func(g *rules.Group) {
		pass.Group = g
		for _, r := range checks {
			pass.Rule = r
			pass.Run()
		}
	}
	tx := &txTracker{run: runGroup}
	var res Result
	for i := range lits {
		lit := &lits[i]
		if !looksLikeSQL(lit.Value) || notSQLCall(callee(src, lit.Start)) {
			continue
		}
		norm, m := normalizePlaceholders(lit.Value)
		cs := &codeSQL{lit: lit, sql: []byte(norm), m: m}
		for _, ch := range sqlparse.Split(cs.sql).Chunks {
			for _, st := range sqlparse.ParseChunk(cs.sql, ch) {
				if st.Err != nil {
					continue // not SQL after all: no parse-error noise from code
				}
				st := st
				fb.code[&st] = cs
				res.Statements++
				tx.add(rules.NewStmt(&st, interesting))
				if isRoutine(st.Node) {
					var body []*rules.Stmt
					for _, b := range sqlparse.Bodies(cs.sql, &st, bodyFilter) {
						b := b
						fb.code[&b] = cs
						body = append(body, rules.NewStmt(&b, interesting))
					}
					if len(body) > 0 {
						runBody(body, runGroup)
					}
				}
			}
		}
	}
	tx.flush()
	cms := make([]comment, len(comments))
	for i, cm := range comments {
		cms[i] = comment{cm.Start, cm.End, cm.Text}
	}
	res.Findings, res.Suppressed = applyDirectives(c, name, src, lines, cms, fb.findings)
	return res, nil
}
