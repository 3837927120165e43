package analyzer

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

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
	// Without parentheses (Ruby, Elixir: puts "…"; PHP: echo "…") the name
	// ends here too.
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
	// Test names (tap, ava, postgres.js: t('listen reconnects', …)) and
	// expectations (expect(err.message).toBe('listen failed')).
	"t": true, "tobe": true, "toequal": true, "tostrictequal": true, "tomatch": true, "tocontain": true,
	"tothrow": true, "tothrowerror": true, "rejects": true, "throws": true, "fail": true,
	// UI labels in system tests.
	"click_button": true, "click_on": true, "click_link": true,
	// Expected text (chai's expect(sql).to.equal('…'), assert.equal).
	"equal": true, "eql": true, "deepequal": true, "strictequal": true,
	// PHP's output, logging and exit messages (echo "…", error_log('…')).
	"echo": true, "error_log": true, "trigger_error": true, "die": true, "exit": true,
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
	if strings.HasPrefix(last, "assert") || strings.HasPrefix(last, "refute") {
		// assertEquals("message", …), assert_equal "expected", …: a
		// message or the expected text, not a statement sent.
		return true
	}
	for _, p := range []string{"log", "console.", "logger.", "fmt.", "errors."} {
		if strings.HasPrefix(name, p) && !strings.HasSuffix(name, "sprintf") {
			return true
		}
	}
	return false
}

// notSQLMacros are Rust macros whose arguments are messages or expected
// values, not statements: printing, logging (log and tracing), panics and
// errors (anyhow, eyre), assertions. A literal anywhere in their argument
// list counts, since tracing takes fields before the message
// (warn!(%id, "LISTEN failed")).
var notSQLMacros = map[string]bool{
	"print": true, "println": true, "eprint": true, "eprintln": true, "dbg": true,
	"log": true, "trace": true, "debug": true, "info": true, "warn": true, "error": true, "event": true,
	"trace_span": true, "debug_span": true, "info_span": true, "warn_span": true, "error_span": true, "span": true,
	"panic": true, "todo": true, "unimplemented": true, "unreachable": true, "compile_error": true,
	"anyhow": true, "bail": true, "ensure": true, "eyre": true, "format_err": true,
	"assert": true, "assert_eq": true, "assert_ne": true, "debug_assert": true,
	"debug_assert_eq": true, "debug_assert_ne": true, "assert_matches": true,
}

// maxTxGap is how many lines may separate two literals of one transaction
// begun by a BEGIN literal; farther apart, the transaction is taken to have
// been ended by the driver's API (tx.Commit(), conn.rollback()).
const maxTxGap = 30

// looksLikeProse reports whether a literal that starts with a command word
// is a sentence for people: the word is capitalised as in prose ("Discard
// all", "Listen address", "Set up the queue") and no other letter is upper
// case. SQL spells command words in upper or lower case.
func looksLikeProse(v string) bool {
	if titleCaseLabel(v) {
		return true
	}
	v = strings.TrimLeft(v, " \t\r\n(")
	j := 0
	for j < len(v) && (v[j] >= 'a' && v[j] <= 'z' || v[j] >= 'A' && v[j] <= 'Z') {
		j++
	}
	if j < 2 || !(v[0] >= 'A' && v[0] <= 'Z') || strings.ToLower(v[1:j]) != v[1:j] {
		return false
	}
	// "Select pg_backend_pid()" is odd but SQL: parentheses, operators
	// and quotes are not prose.
	return strings.ToLower(v[j:]) == v[j:] && !strings.ContainsAny(v[j:], "()=;*'\"$")
}

// titleCaseLabel reports whether v is a label of two to four words in
// Title Case and nothing else ("Discard All", "Reset Password"): button
// and menu text that happens to parse as SQL, which code writes in upper
// or lower case.
func titleCaseLabel(v string) bool {
	words := strings.Fields(v)
	if len(words) < 2 || len(words) > 4 {
		return false
	}
	for _, w := range words {
		if w[0] < 'A' || w[0] > 'Z' || len(w) < 2 {
			return false
		}
		for i := 1; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return false
			}
		}
	}
	return true
}

// expectationMarks are the calls of test frameworks whose arguments are
// expected values (the SQL a test expects a builder or a mock to produce),
// or counts of statements seen, not statements sent.
var expectationMarks = []string{
	"must_equal", "must_include", "must_match", "wont_equal", "wont_include", // minitest
	"assert_equal", "assert_includes", "assert_match", "assertEqual", "assertIn", "assertEquals", "assertThat", "assertSQL",
	"expect(", ".to eq", ".to include", ".to match", ".should ==", ".should eq", "toEqual(", "toBe(", "toContain(", "toMatch(",
	"assert.Equal", "require.Equal", "assert.Contains", "require.Contains",
	"assert_called", "assert_has_calls", "assert_any_call", "assert_awaited", "assert_has_awaits", "assert_any_await", // unittest.mock
	"ShouldBe(", "ShouldContain(", "ShouldNotContain(", ".Should()", "Assert.Equal(", "Assert.Contains(", "Assert.AreEqual(", "Assert.That(", // .NET
	"$this->assert", "self::assert", "static::assert", // PHPUnit: $this->assertSame([…], $fake->queries)
}

// assertionLine is the start of a line that calls an assertion helper of
// a test (Ruby's and Python's assert_no_index "…", "…", refute_match):
// its string arguments are expected or analysed text.
var assertionLine = regexp.MustCompile(`^\s*(?:assert|refute)_\w+[\s(]`)

// maxAssignTail is how many bytes before a literal logVariable looks at,
// and maxMarkTail how many before a literal or an enclosing bracket the
// expectation marks are looked for in: a long line (generated code, SQL
// joined on one line) is not scanned whole for each literal on it.
const (
	maxAssignTail = 120
	maxMarkTail   = 400
)

// logVariable is an assignment to a variable that holds a message or the
// text shown in a log: log_sql = "EXECUTE #{name}".
var logVariable = regexp.MustCompile(`(?i)\b(?:log\w*|\w*_log|\w*msg|\w*message)\s*=\s*$`)

// sqlSenders are the last names of calls that send their first argument
// as SQL: a literal given to one inside an expectation
// (assertEqual(await con.fetchval("EXECUTE q"), 1)) is still a statement.
var sqlSenders = map[string]bool{
	"exec": true, "execute": true, "executemany": true, "execute_sql": true, "executescript": true,
	"fetch": true, "fetchval": true, "fetchrow": true, "fetchone": true, "fetchall": true,
	"query": true, "queryrow": true, "run": true, "async_exec": true, "send_query": true, "exec_params": true,
	"select_all": true, "select_value": true, "select_one": true, "raw": true, "sql": true,
}

// sendsSQL reports whether a call (callee's name) sends its first argument
// as SQL.
func sendsSQL(fn string) bool {
	if k := strings.LastIndexByte(fn, '.'); k >= 0 {
		fn = fn[k+1:]
	}
	return sqlSenders[fn]
}

// expectedText reports whether the literal at start is an expected value
// of a test expectation: a mark on its line before it, or on the line of
// a bracket that encloses it (up to three, within 2000 bytes: an array of
// expected statements spread over lines), or whether it is assigned to a
// log message variable.
func expectedText(src []byte, start int) bool {
	lineStart := bytes.LastIndexByte(src[:start], '\n') + 1
	before := src[lineStart:start]
	// The assignment ends the text before the literal: only its last
	// bytes can match, and a long line scanned whole is slow.
	if tail := before[max(0, len(before)-maxAssignTail):]; bytes.IndexByte(tail, '=') >= 0 && logVariable.Match(tail) {
		return true
	}
	marked := func(b []byte) bool {
		b = b[max(0, len(b)-maxMarkTail):] // a mark stands just before what it expects
		for _, m := range expectationMarks {
			if bytes.Contains(b, []byte(m)) {
				return true
			}
		}
		return false
	}
	if marked(before) || assertionLine.Match(before) {
		return true
	}
	depth, openers := 0, 0
	for k := start - 1; k >= 0 && k >= start-2000 && openers < 3; k-- {
		switch src[k] {
		case ')', ']', '}':
			depth++
		case '(', '[', '{':
			if depth > 0 {
				depth--
				continue
			}
			openers++
			ls := bytes.LastIndexByte(src[:k], '\n') + 1
			if marked(src[ls:k]) {
				return true
			}
		}
	}
	return false
}

// commandTags are the command tags PostgreSQL returns in CommandComplete
// (JDBC's getCommandStatus, libpq's PQcmdStatus) that also parse as
// statements.
var commandTags = map[string]bool{
	"DISCARD ALL": true, "DISCARD TEMP": true, "DISCARD PLANS": true, "DISCARD SEQUENCES": true,
	"DEALLOCATE ALL": true, "RESET ALL": true,
}

// commandTag reports whether a literal is a command tag compared with a
// statement's result or named as a constant beside such code, not a
// statement sent: it is exactly a tag and either stands in a comparison
// (.equals, equalsIgnoreCase, startsWith, ==, !=, case) or the file reads
// command tags (getCommandStatus, CommandComplete, commandTag, cmdStatus).
func commandTag(src []byte, lit *extract.Literal) bool {
	if !commandTags[strings.ToUpper(lit.Value)] {
		return false
	}
	for _, w := range []string{"getCommandStatus", "CommandComplete", "commandTag", "CommandTag", "cmdStatus", "command_tag", "PQcmdStatus"} {
		if bytes.Contains(src, []byte(w)) {
			return true
		}
	}
	before := bytes.TrimRight(src[max(0, lit.Start-24):lit.Start], " \t(")
	after := bytes.TrimLeft(src[min(lit.End, len(src)):min(lit.End+24, len(src))], " \t")
	for _, op := range []string{"==", "!=", "case", "equals", "equalsIgnoreCase", "startsWith", "Equals"} {
		if bytes.HasSuffix(before, []byte(op)) {
			return true
		}
	}
	return bytes.HasPrefix(after, []byte(".equals")) || bytes.HasPrefix(after, []byte("==")) || bytes.HasPrefix(after, []byte("!=")) ||
		bytes.HasPrefix(after, []byte(".Equals")) || bytes.HasPrefix(after, []byte(":")) && bytes.HasSuffix(bytes.TrimRight(before, " \t"), []byte("case"))
}

// continuesExpression reports whether the literal at start, with value v,
// is the right operand of a concatenation that continues a statement
// begun earlier ("ALTER DATABASE " + name() + " SET …", or sql += " SET …"
// after sql = "UPDATE t"), in text the extractor did not join: the literal
// alone is a fragment, not a statement. The leading blank that separates
// it from the text before tells a fragment from a script appended to a
// variable (sql <> """…""").
func continuesExpression(src []byte, start int, v string) bool {
	if v == "" || v[0] != ' ' && v[0] != '\t' {
		return false
	}
	i := start - 1
	for i >= 0 && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i--
	}
	if i < 0 {
		return false
	}
	switch src[i] {
	case '+':
		return i == 0 || src[i-1] != '+' // not x++ "…" (never valid anyway)
	case '>':
		return i > 0 && src[i-1] == '<' // Elixir <>
	case '.':
		return true // PHP's ., Lua-style ..
	case '=':
		return i > 0 && (src[i-1] == '+' || src[i-1] == '.') // sql += "…", $sql .= "…"
	}
	return false
}

// templateHole is a hole of a template the code fills in later: {} or
// {name} (str.format, psycopg's sql.SQL), %s or %(name)s.
var templateHole = regexp.MustCompile(`\{\w*\}|%s|%\(\w+\)s`)

// parseCodeChunk parses one statement of a literal. An interpolation on a
// line of its own before it (${ids.map(…).join("\n")}) usually stands for
// statements built at run time: when the chunk does not parse with it, the
// statement after it is parsed alone.
//
// A chunk that still does not parse is read as recoverChunk reads it;
// recovered is then set.
func parseCodeChunk(sql []byte, ch sqlparse.Chunk, after []byte) (sts []sqlparse.Statement, recovered bool) {
	sts = sqlparse.ParseChunk(sql, ch)
	if len(sts) != 1 || sts[0].Err == nil || len(ch.Meta) > 0 || len(ch.Vars) > 0 {
		return sts, false
	}
	rest := sql[ch.Start:ch.End]
	if bytes.HasPrefix(rest, []byte(extract.Placeholder)) {
		i := len(extract.Placeholder)
		newline := false
		for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t' || rest[i] == '\r' || rest[i] == '\n') {
			newline = newline || rest[i] == '\n'
			i++
		}
		if newline && i < len(rest) {
			if alone := sqlparse.ParseChunk(sql, sqlparse.Chunk{Start: ch.Start + i, End: ch.End}); len(alone) != 1 || alone[0].Err == nil {
				return alone, false
			}
		}
	}
	// Only a statement cut short (the parser stops at the end of the
	// chunk) or one with interpolations or template holes is read so: a
	// whole statement of another dialect (AUTOINCREMENT) is not.
	atEnd := sts[0].Err.Offset >= ch.End
	text := sql[ch.Start:ch.End]
	holes := bytes.Contains(text, []byte(extract.Placeholder)) || templateHole.Match(text)
	if !atEnd && !holes {
		return sts, false
	}
	if r := recoverChunk(sql, ch, after); len(r) > 0 {
		return r, true
	}
	return sts, false
}

// otherDialect reports whether a statement from code is not PostgreSQL's:
// Oracle's EXECUTE IMMEDIATE, or a SET or RESET of a name that is no
// PostgreSQL parameter (MySQL's session variables, or English text that
// parses as one: "Reset Password"). PostgreSQL refuses such a SET, so it
// makes no session state.
func otherDialect(n *pg.Node) bool {
	if e := n.GetExecuteStmt(); e != nil {
		return strings.EqualFold(e.Name, "immediate")
	}
	if v := n.GetVariableSetStmt(); v != nil {
		switch v.Kind {
		case pg.VariableSetKind_VAR_SET_VALUE, pg.VariableSetKind_VAR_SET_DEFAULT,
			pg.VariableSetKind_VAR_SET_CURRENT, pg.VariableSetKind_VAR_RESET:
			// A name with an interpolation in it is chosen at run time
			// (SET #{name} = …): taken as a parameter.
			return v.Name != "" && !rules.KnownParameter(v.Name) && !strings.Contains(v.Name, extract.Placeholder)
		}
	}
	return false
}

// echoesDSL reports whether an EXECUTE statement is a migration DSL's log
// line rather than SQL: Ecto and Rails migrations print "execute ddl" or
// "execute #{inspect(sql)}" for their execute/1 command, while SQL-level
// EXECUTE is rare in Ruby and Elixir, whose drivers prepare statements in
// the protocol.
func echoesDSL(lang extract.Language, src []byte, lit *extract.Literal, n *pg.Node) bool {
	e := n.GetExecuteStmt()
	if e == nil {
		return false
	}
	text := src[lit.Start:lit.End]
	if bytes.Contains(text, []byte("inspect(")) || bytes.Contains(text, []byte(".inspect")) {
		return true // inspect() formats values for people
	}
	if lang != extract.Ruby && lang != extract.Elixir || len(e.Params) > 0 {
		return false
	}
	v := strings.TrimLeft(lit.Value, " \t\r\n")
	return strings.HasPrefix(v, "execute ")
}

// otherDialectCalls reports whether a statement calls a function the way
// only another database does: MariaDB's LASTVAL(seq) takes the sequence,
// PostgreSQL's lastval() takes nothing (and fails with an argument).
func otherDialectCalls(st *rules.Stmt) bool {
	for _, c := range st.CallsNamed("lastval") {
		if len(c.Args) > 0 {
			return true
		}
	}
	return false
}

// matchOperand reports whether the literal at start is the pattern of a
// match (output =~ "execute ddl" in Ruby and Elixir tests): text looked
// for in output, not a statement sent.
func matchOperand(src []byte, start int) bool {
	i := start - 1
	for i >= 0 && (src[i] == ' ' || src[i] == '\t') {
		i--
	}
	return i > 0 && src[i] == '~' && (src[i-1] == '=' || src[i-1] == '!')
}

// otherDatabases are names that mark a file of a multi-database project
// as written for another database (a MySQL adapter's SET
// foreign_key_checks is not sent to PostgreSQL).
var otherDatabases = []string{"mysql", "mariadb", "sqlite", "mssql", "sqlserver", "oracle", "clickhouse", "snowflake", "spanner", "firebird", "cassandra", "mongodb", "duckdb", "bigquery"}

// otherDatabaseFile reports whether a file's name, or one of the three
// directories that hold it, names another database and none names
// PostgreSQL (lib/dialects/mysql/query.js, adapters/sqlite3_adapter.rb).
func otherDatabaseFile(name string) bool {
	raw := name
	name = strings.ToLower(strings.ReplaceAll(name, "\\", "/"))
	parts := strings.Split(name, "/")
	if len(parts) > 4 {
		parts = parts[len(parts)-4:] // not the directories above the project
	}
	tail := strings.Join(parts, "/")
	if strings.Contains(tail, "postgres") || strings.Contains(tail, "pg") {
		return false
	}
	for _, db := range otherDatabases {
		if strings.Contains(tail, db) {
			return true
		}
	}
	// Short names are words of their own: a directory so named, or a
	// file whose name starts with one before a capital (H2Dialect.java),
	// not "h2" inside "oauth2".
	orig := strings.Split(strings.ReplaceAll(raw, "\\", "/"), "/")
	orig = orig[len(orig)-len(parts):]
	for i, p := range parts {
		for _, db := range otherDatabaseWords {
			if p == db {
				return true
			}
			if i == len(parts)-1 && strings.HasPrefix(p, db) && len(p) > len(db) {
				if c := orig[i][len(db)]; c >= 'A' && c <= 'Z' || c == '_' || c == '.' {
					return true
				}
			}
		}
	}
	return false
}

// otherDatabaseWords are names of other databases too short, or too
// common inside words, to look for as otherDatabases are.
var otherDatabaseWords = []string{"h2", "hsqldb", "derby", "db2", "informix", "sybase", "hana", "sqlanywhere", "interbase", "nuodb", "voltdb"}

// inRanges reports whether off lies in one of rs.
func inRanges(rs [][2]int, off int) bool {
	for _, r := range rs {
		if r[0] <= off && off < r[1] {
			return true
		}
	}
	return false
}

// spanAt returns the index of the innermost span that holds off (the one
// that starts last), or -1.
func spanAt(spans []extract.Span, off int) int {
	k := -1
	for i, s := range spans {
		if s.Start <= off && off < s.End && (k < 0 || s.Start > spans[k].Start) {
			k = i
		}
	}
	return k
}

// controlsTx reports whether one of a literal's statements begins or ends
// a transaction: such a literal is followed as BEGIN … COMMIT literals
// are, not taken into the transaction of the code around it.
func controlsTx(stmts []sqlparse.Statement) bool {
	for _, st := range stmts {
		if st.Node == nil {
			continue
		}
		if ts := st.Node.GetTransactionStmt(); ts != nil {
			switch ts.Kind {
			case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START,
				pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK,
				pg.TransactionStmtKind_TRANS_STMT_PREPARE:
				return true
			}
		}
	}
	return false
}

// implicitTransaction reports whether the statements of one literal run as
// one implicit transaction: there are several, and none begins or ends a
// transaction (a query string sent at once runs in one transaction unless
// it says otherwise).
func implicitTransaction(group []*rules.Stmt) bool {
	if len(group) < 2 {
		return false
	}
	for _, st := range group {
		if begins, ends, _ := txKind(st); begins || ends {
			return false
		}
	}
	return true
}

// AnalyzeCode analyzes the SQL in the string literals of one application
// source file. Literals that are not SQL, or do not parse once driver
// placeholders are normalised, are skipped silently. Literals are taken in
// file order, so BEGIN … COMMIT sent as separate strings is followed.
// Connection strings in the literals, and JDBC calls in Java and Kotlin,
// are checked too (settings.go).
func (c *Config) AnalyzeCode(name string, src []byte, lang extract.Language) (Result, error) {
	lits, comments, err := extract.Literals(lang, src)
	if err != nil {
		return Result{}, err
	}
	checks := c.checks()
	interesting := rules.InterestingFuncs(checks)
	lines := sqlparse.NewLineIndex(src)
	fb := &findingBuilder{name: name, src: src, lines: lines, code: map[*sqlparse.Statement]*codeSQL{},
		calls: c.calls, prepass: c.prepass}
	filter := c.bodyFilter()
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
	settings := c.codeSettings(name, src, lang, lines, lits, comments)
	if otherDatabaseFile(name) {
		lits = nil // SQL for another database: not sent to PostgreSQL
	}
	var providers [][2]int
	if lang == extract.PHP {
		providers = phpDataProviders(src)
	}
	lastLine := 0 // line of the last literal that gave a statement
	// Statements in a transaction the driver never commits (diesel's
	// test transactions, test helpers that roll back) form one
	// rolled-back group per span, or per transaction of spans.
	rolledBack := extract.RolledBackSpans(lang, name, src, c.testHelpers)
	rbGroups := make([]*rules.Group, len(rolledBack))
	rbTx := map[int]int{} // a transaction's number: its first span
	for k := len(rolledBack) - 1; k >= 0; k-- {
		if tx := rolledBack[k].Tx; tx > 0 {
			rbTx[tx] = k
		}
	}
	// Statements in a transaction that the code opens through an API
	// (a transaction variable, a transaction block or callback, a
	// function run inside the caller's transaction) form one explicit
	// group per span, or per transaction of spans.
	var inTx []extract.Span
	if len(lits) > 0 {
		inTx = extract.TransactionSpans(lang, name, src, lits, comments)
	}
	// Statements in a span that continues the caller's transaction (a
	// Python function given its DB-API cursor), or follows a call that
	// was handed the transaction's connection, are marked so. Ungrouped
	// spans group nothing: each statement in one is given the statements
	// before it in the span, or in the spans of its Tx number (for
	// sequence-session).
	var callerTx, ungrouped []extract.Span
	grouping := inTx[:0]
	for _, s := range inTx {
		if s.Inherited || s.HandedOff {
			callerTx = append(callerTx, s)
		}
		if s.HandedOff {
			continue // marks statements, groups none
		}
		if s.Ungrouped {
			ungrouped = append(ungrouped, s)
		} else {
			grouping = append(grouping, s)
		}
	}
	inTx = grouping
	ungroupedStmts := make([][]*rules.Stmt, len(ungrouped))
	ungroupedFirst := map[int]int{} // a transaction's number: its first ungrouped span
	for k := len(ungrouped) - 1; k >= 0; k-- {
		if tx := ungrouped[k].Tx; tx > 0 {
			ungroupedFirst[tx] = k
		}
	}
	inCallerTx := false // the current literal runs in its caller's transaction
	txBefore := -1      // the ungrouped span the current literal is in
	// mark gives a statement of the current literal what the spans
	// around it say.
	mark := func(stmt *rules.Stmt) {
		stmt.InCallerTx = inCallerTx
		if txBefore >= 0 {
			stmt.TxBefore = slices.Clip(ungroupedStmts[txBefore])
			ungroupedStmts[txBefore] = append(ungroupedStmts[txBefore], stmt)
		}
	}
	txGroups := make([]*rules.Group, len(inTx))
	txFirst := map[int]int{} // a transaction's number: its first span
	for k := len(inTx) - 1; k >= 0; k-- {
		if tx := inTx[k].Tx; tx > 0 {
			txFirst[tx] = k
		}
	}
	identity := identityQueries(src, lits, comments)
	// routines checks the bodies of the routines that statements of a
	// literal define.
	routines := func(cs *codeSQL, group []*rules.Stmt) {
		for _, stmt := range group {
			if !isRoutine(stmt.Node) {
				continue
			}
			var body []*rules.Stmt
			for _, b := range sqlparse.Bodies(cs.sql, stmt.Statement, filter) {
				b := b
				fb.code[&b] = cs
				body = append(body, rules.NewStmt(&b, interesting))
			}
			fb.body(fb.define(stmt), body, routineName(stmt), runGroup)
		}
	}
	// take turns the statements of a literal run in a transaction of
	// the code (not followed by the literal transaction tracker) into the
	// rules' statements and counts them; with calls it reports the
	// routine calls they make (a rolled-back transaction's leave nothing).
	take := func(cs *codeSQL, stmts []sqlparse.Statement, calls bool) []*rules.Stmt {
		var group []*rules.Stmt
		for i := range stmts {
			st := &stmts[i]
			stmt := rules.NewStmt(st, interesting)
			if otherDialectCalls(stmt) {
				continue
			}
			mark(stmt)
			fb.code[st] = cs
			res.Statements++
			group = append(group, stmt)
			if calls {
				fb.callFindings(stmt, "")
			}
		}
		return group
	}
	for i := range lits {
		lit := &lits[i]
		fn := callee(src, lit.Start)
		if lang == extract.CSharp && fn == "new" && csharpCommandNew(src, lit.Start) {
			fn = "npgsqlcommand" // NpgsqlCommand cmd = new("…"): a target-typed command
		}
		value := lit.Value
		if lang == extract.Kotlin {
			if margin, ok := extract.TrimMargin(src, lit.End); ok {
				value = extract.BlankMargins(value, margin) // """…""".trimMargin(): read without the margins
			}
		}
		if !looksLikeSQL(value) || looksLikeProse(value) || continuesExpression(src, lit.Start, value) ||
			commandTag(src, lit) || expectedText(src, lit.Start) && !sendsSQL(fn) ||
			matchOperand(src, lit.Start) || notSQLCall(fn) || notSQLMacros[lit.Macro] ||
			lang == extract.Rust && rustNotSQLCall(callee(src, lit.Start)) ||
			lang == extract.CSharp && csharpNotSQLCall(callee(src, lit.Start)) ||
			lang == extract.PHP && (phpNotSQLCall(callee(src, lit.Start)) || inRanges(providers, lit.Start)) {
			continue
		}
		norm, m := normalizePlaceholders(value)
		cs := &codeSQL{lit: lit, sql: []byte(norm), m: m}
		var stmts []sqlparse.Statement
		clean := true // every statement of the literal parses
		for _, ch := range sqlparse.Split(cs.sql).Chunks {
			sts, recovered := parseCodeChunk(cs.sql, ch, builderRest(src, lit.End))
			if recovered {
				clean = false // read in part: no BEGIN … END of its own
			}
			for _, st := range sts {
				if st.Err != nil || otherDialect(st.Node) || echoesDSL(lang, src, lit, st.Node) {
					clean = false // not SQL after all: no parse-error noise from code
					continue
				}
				stmts = append(stmts, st)
			}
		}
		if len(stmts) == 0 {
			continue
		}
		inCallerTx = spanAt(callerTx, lit.Start) >= 0
		txBefore = spanAt(ungrouped, lit.Start)
		if txBefore >= 0 && ungrouped[txBefore].Tx > 0 {
			txBefore = ungroupedFirst[ungrouped[txBefore].Tx]
		}
		if k := spanAt(rolledBack, lit.Start); k >= 0 {
			if tx := rolledBack[k].Tx; tx > 0 {
				k = rbTx[tx] // the first span of its transaction
			}
			if rbGroups[k] == nil {
				rbGroups[k] = &rules.Group{Explicit: true, RollsBack: true}
			}
			rbGroups[k].Stmts = append(rbGroups[k].Stmts, take(cs, stmts, false)...)
			continue
		}
		if inRanges(identity, lit.Start) && !controlsTx(stmts) {
			// A framework's identity query: it runs in the transaction
			// of the framework's INSERT, right after it.
			group := take(cs, stmts, true)
			if len(group) > 0 {
				runGroup(&rules.Group{Stmts: group, Explicit: true, AfterInsert: true})
			}
			routines(cs, group)
			continue
		}
		if k := spanAt(inTx, lit.Start); k >= 0 && !controlsTx(stmts) {
			if tx := inTx[k].Tx; tx > 0 {
				k = txFirst[tx] // the first span of its transaction
			}
			if txGroups[k] == nil {
				txGroups[k] = &rules.Group{Explicit: true}
			}
			group := take(cs, stmts, true)
			txGroups[k].Stmts = append(txGroups[k].Stmts, group...)
			routines(cs, group)
			continue
		}
		line := lines.Position(lit.Start).Line
		if tx.cur != nil && line-lastLine > maxTxGap {
			// Far from the transaction's last statement: the
			// transaction was ended by the driver's API (tx.Commit()),
			// not by a literal.
			tx.flush()
		}
		lastLine = line
		var group []*rules.Stmt
		for i := range stmts {
			st := &stmts[i]
			stmt := rules.NewStmt(st, interesting)
			if otherDialectCalls(stmt) {
				continue
			}
			begins, ends, _ := txKind(stmt)
			if (begins || ends) && !clean {
				// BEGIN … END of another database's procedural block
				// (Oracle, SQL Server), half of which does not parse:
				// not a transaction.
				continue
			}
			mark(stmt)
			fb.code[st] = cs
			res.Statements++
			group = append(group, stmt)
		}
		inTx := group
		if implicitTransaction(group) && tx.cur == nil {
			// Several statements in one string, none of which begins
			// or ends a transaction: sent as one query, they run in one
			// implicit transaction on one server connection.
			tx.flushPending()
			for _, stmt := range group {
				fb.callFindings(stmt, "")
			}
			runGroup(&rules.Group{Stmts: group, Explicit: true})
			inTx = nil
		}
		for _, stmt := range inTx {
			begins, ends, _ := txKind(stmt)
			switch {
			case begins && tx.cur != nil:
				// A second BEGIN: the open transaction was ended by
				// the driver's API, not by a literal.
				tx.flush()
			case ends && tx.cur == nil:
				// A COMMIT or ROLLBACK without a BEGIN literal ends
				// a transaction begun by the driver's API: it does
				// not take in the statements before it, which ran
				// in other functions, tests or transactions.
				tx.flushPending()
				tx.sawBegin = true
			}
			tx.add(stmt)
			fb.callFindings(stmt, "")
		}
		routines(cs, group)
	}
	tx.flush()
	for _, g := range txGroups {
		if g != nil && len(g.Stmts) > 0 {
			runGroup(g)
		}
	}
	for _, g := range rbGroups {
		if g != nil && len(g.Stmts) > 0 {
			runGroup(g)
		}
	}
	if !otherDatabaseFile(name) {
		fb.findings = append(fb.findings, c.subscriptionFindings(name, lang, src, lines)...)
		fb.findings = append(fb.findings, c.sessionCallFindings(name, lang, src, lines)...)
		if lang == extract.Ruby {
			fb.findings = append(fb.findings, c.sequelAdvisoryFindings(name, src, lines)...)
		}
	}
	fb.findings = append(fb.findings, settings...)
	cms := make([]comment, len(comments))
	for i, cm := range comments {
		cms[i] = comment{cm.Start, cm.End, cm.Text}
	}
	for i := range fb.findings {
		// Messages name what the parser saw: show interpolations and
		// printf verbs as in the statement text, not by their stand-in.
		fb.findings[i].Message = strings.ReplaceAll(fb.findings[i].Message, extract.Placeholder, "…")
	}
	res.Findings, res.Suppressed = applyDirectives(c, name, src, lines, cms, fb.findings)
	if c.prepass {
		collectBodyFindings(res.Findings)
		res.defs = fb.defs
	}
	return res, nil
}
