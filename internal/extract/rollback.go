package extract

import (
	"bytes"
	"regexp"
	"strings"
)

// This file finds transactions that application code always rolls back:
// test helpers that begin a transaction, run their statements in it and
// roll it back when the test ends, so that nothing they did reaches the
// database or the server connection.
//
//   - A transaction held in a variable (Go's tx, _ := conn.Begin(ctx),
//     SQLAlchemy's trans = conn.begin(), sqlx's let mut tx =
//     pool.begin().await?, knex's const trx = await knex.transaction(),
//     Npgsql's using var tx = conn.BeginTransaction()), or a connection
//     put into a transaction (JDBC's conn.setAutoCommit(false), PDO's
//     $pdo->beginTransaction()), that is rolled back (tx.Rollback(ctx),
//     deferred or in t.Cleanup, trans.rollback(), $pdo->rollBack()) and
//     never committed in the function that began it. Where dropping or
//     disposing the transaction rolls it back (sqlx, Npgsql) no explicit
//     rollback is needed. A transaction kept in a field ($this->pdo,
//     self.conn, this.conn: begun in setUp, rolled back in tearDown) is
//     judged over the whole file.
//   - In Go the statements are those passed to the transaction's own
//     methods (tx.Exec(ctx, "…")): database/sql runs db.Exec on another
//     connection of the pool, outside the transaction. Elsewhere they are
//     the statements from the begin to the end of the function.
//   - Blocks that always roll back: psycopg's with
//     conn.transaction(force_rollback=True):, Sequel's
//     transaction(rollback: :always) do … end, and a Ruby or Elixir
//     transaction block whose body ends in raise ActiveRecord::Rollback,
//     raise Sequel::Rollback or Repo.rollback(…) at its own level.

var (
	// beginCall matches the methods that begin a transaction.
	beginCall    = regexp.MustCompile(`^(Begin|BeginTx|Beginx|BeginTxx|MustBegin|begin|BeginTransaction|BeginTransactionAsync|beginTransaction|transaction|setAutoCommit)$`)
	commitCall   = regexp.MustCompile(`^(?i:commit|commitasync)$`)
	rollbackCall = regexp.MustCompile(`^(?i:rollback|rollbackasync)$`)
	// assignedTo matches the code before a begin call that assigns its
	// result: "tx, err := ", "let mut tx = ", "using var tx = await ",
	// "NpgsqlTransaction tx = ", "$tx = ", "trans = ", "const trx = await ".
	assignedTo = regexp.MustCompile(`((?:\$this->|this\.|self\.|@)?[A-Za-z_$][A-Za-z0-9_]*)\s*(?:,\s*[A-Za-z_]\w*\s*)?(?::=|=)\s*(?:await\s+|try\s+|\(\s*await\s+)?$`)
)

// txVarRolledBack returns the spans of the statements run in transactions
// held in a variable and always rolled back (see above). Spans of one
// transaction share their Tx number. In Go, a variable given the first
// result of a call of a test helper (helpers, as "go:" + name: a function
// that begins such a transaction and returns it, riverdbtest.TestTx(…))
// counts too.
func txVarRolledBack(lang Language, name string, src []byte, code []bool, helpers map[string]bool) []Span {
	test := isTestFile(name, src)
	var spans []Span
	tx := 0
	if lang == Go && test {
		for _, h := range goHelperCalls(src, code, helpers) {
			scope := enclosingScope(lang, src, code, h.at)
			scope.Start = h.at
			if commits, _ := txCalls(src, code, scope, h.v); commits {
				continue
			}
			tx++
			spans = append(spans, receiverCalls(src, code, scope, h.v, tx)...)
		}
	}
	eachTxVar(lang, test, src, code, func(t txVar) {
		if t.commits || !t.rollbacks && lang != Rust && lang != CSharp {
			return
		}
		tx++
		if lang == Go {
			spans = append(spans, receiverCalls(src, code, t.scope, t.v, tx)...)
		} else {
			spans = append(spans, Span{Start: t.scope.Start, End: t.scope.End, Tx: tx})
		}
	})
	return spans
}

// txVar is a transaction held in a variable (or a connection put into a
// transaction): the variable, where the call that begins it starts, the
// code from there to the end of the function (the whole file for a
// field), and whether that code commits it and rolls it back.
type txVar struct {
	v                  string
	at                 int
	scope              Span
	commits, rollbacks bool
}

// eachTxVar calls fn for each transaction held in a variable (see above)
// of a file in lang (none in Ruby and Elixir, whose transactions are
// blocks); test says whether the file holds tests.
func eachTxVar(lang Language, test bool, src []byte, code []bool, fn func(txVar)) {
	if lang == Ruby || lang == Elixir {
		return
	}
	isIdent := func(c byte) bool { return c == '_' || c == '$' || isIdentChar(c) }
	for i := 0; i < len(src); i++ {
		if !code[i] || !isIdent(src[i]) || i > 0 && isIdent(src[i-1]) {
			continue
		}
		j := i
		for j < len(src) && isIdent(src[j]) {
			j++
		}
		method := string(src[i:j])
		k := j
		for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		if !beginCall.MatchString(method) || k >= len(src) || src[k] != '(' || !code[k] {
			i = j - 1
			continue
		}
		recv, rs := receiverBefore(src, i)
		if recv == "" {
			i = j - 1
			continue
		}
		switch method {
		case "setAutoCommit":
			// Only conn.setAutoCommit(false) begins a transaction.
			if !bytes.HasPrefix(bytes.TrimLeft(src[k+1:], " \t"), []byte("false")) {
				i = j - 1
				continue
			}
		case "transaction":
			if lang != JavaScript {
				i = j - 1
				continue
			}
		case "begin":
			if lang == Go || lang == CSharp || lang == Java || lang == Kotlin {
				i = j - 1
				continue
			}
		}
		v := recv
		if method != "setAutoCommit" && method != "beginTransaction" || lang == JavaScript {
			lineStart := bytes.LastIndexByte(src[:rs], '\n') + 1
			m := assignedTo.FindSubmatch(src[lineStart:rs])
			if m == nil {
				if method != "beginTransaction" {
					i = j - 1
					continue
				}
			} else {
				v = string(m[1])
			}
		}
		member := strings.HasPrefix(v, "$this->") || strings.HasPrefix(v, "this.") || strings.HasPrefix(v, "self.") || strings.HasPrefix(v, "@")
		scope := Span{Start: 0, End: len(src)}
		if !member {
			scope = enclosingScope(lang, src, code, i)
			scope.Start = i
		}
		commits, rollbacks := txCalls(src, code, scope, v)
		if !commits && !rollbacks && !member && test {
			// A connection kept in a field without this.: begun in a
			// test's set-up method, rolled back in its tear-down.
			whole := Span{Start: 0, End: len(src)}
			if c, r := txCalls(src, code, whole, v); r && !c {
				scope, rollbacks = whole, true
			}
		}
		fn(txVar{v: v, at: i, scope: scope, commits: commits, rollbacks: rollbacks})
		i = j - 1
	}
}

// methodStart returns where the method name before the '(' at open starts.
func methodStart(src []byte, open int) int {
	k := open
	for k > 0 && (src[k-1] == '_' || isIdentChar(src[k-1])) {
		k--
	}
	return k
}

// returns reports whether a Go body returns an expression naming v.
func returns(body []byte, v string) bool {
	re := regexp.MustCompile(`\breturn\b[^\n]*\b` + regexp.QuoteMeta(v) + `\b`)
	return re.Match(body)
}

// isTestFile reports whether a file holds tests: its name says so, or it
// uses a test framework's set-up and tear-down hooks.
func isTestFile(name string, src []byte) bool {
	n := strings.ToLower(name)
	if strings.Contains(n, "test") || strings.Contains(n, "spec") {
		return true
	}
	for _, w := range []string{"@Test", "@BeforeEach", "@Before\n", "[Fact]", "[Test]", "[SetUp]", "function setUp(", "def setUp(", "t *testing.T"} {
		if bytes.Contains(src, []byte(w)) {
			return true
		}
	}
	return false
}

// receiverBefore returns the receiver of the method call whose name starts
// at i ("conn" in conn.Begin, "$this->pdo" in $this->pdo->beginTransaction,
// "s.db" in s.db.BeginTx) and where it starts, or "" when the name is not
// called on a receiver.
func receiverBefore(src []byte, i int) (string, int) {
	k := i
	switch {
	case k >= 1 && src[k-1] == '.':
		k--
	case k >= 2 && src[k-2] == '-' && src[k-1] == '>':
		k -= 2
	default:
		return "", 0
	}
	end := k
	for k > 0 {
		c := src[k-1]
		switch {
		case c == '_' || c == '$' || c == '.' || c == '@' || isIdentChar(c):
			k--
		case c == '>' && k >= 2 && src[k-2] == '-':
			k -= 2
		case c == ')':
			// A call in the chain: driver.GetExecutor().Begin(ctx).
			depth := 0
			for k > 0 {
				k--
				if src[k] == ')' {
					depth++
				} else if src[k] == '(' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
		default:
			return string(src[k:end]), k
		}
	}
	return string(src[k:end]), k
}

// enclosingScope returns the function or block around offset i: the
// innermost braces, or in Python the lines indented below the def the
// offset is in.
func enclosingScope(lang Language, src []byte, code []bool, i int) Span {
	if lang == Python {
		return pythonScope(src, i)
	}
	depth := 0
	start := 0
	for k := i - 1; k >= 0; k-- {
		if !code[k] {
			continue
		}
		if src[k] == '}' {
			depth++
		} else if src[k] == '{' {
			if depth == 0 {
				start = k
				break
			}
			depth--
		}
	}
	return braceSpan(src, code, start)
}

// indentOf returns the width of the leading blanks of a line.
func indentOf(line []byte) int {
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	return n
}

// blockEndByIndent returns the offset where the block opened by the line
// at lineStart (indented by ind) ends: the start of the first later
// non-blank line indented by ind or less, or the end of src.
func blockEndByIndent(src []byte, lineStart, ind int) int {
	nl := bytes.IndexByte(src[lineStart:], '\n')
	if nl < 0 {
		return len(src)
	}
	for ls := lineStart + nl + 1; ls < len(src); {
		e := bytes.IndexByte(src[ls:], '\n')
		end := len(src)
		if e >= 0 {
			end = ls + e
		}
		line := src[ls:end]
		if len(bytes.TrimSpace(line)) > 0 && indentOf(line) <= ind {
			return ls
		}
		ls = end + 1
	}
	return len(src)
}

// txCalls reports whether code in scope calls a commit method, and a
// rollback method, on v (v.Commit(, v.commit(, v->commit(,
// v.setAutoCommit(…)).
func txCalls(src []byte, code []bool, scope Span, v string) (commits, rollbacks bool) {
	for _, m := range methodsOn(src, code, scope, v) {
		name := string(src[m.Start:m.End])
		switch {
		case strings.EqualFold(name, "setAutoCommit"):
			// setAutoCommit(true) commits; (false) begins.
			if bytes.HasPrefix(bytes.TrimLeft(src[min(m.End+1, len(src)):], " \t"), []byte("true")) {
				commits = true
			}
		case commitCall.MatchString(name):
			commits = true
		case rollbackCall.MatchString(name):
			rollbacks = true
		}
	}
	return commits, rollbacks
}

// methodsOn returns the spans of the names of the methods called on v in
// scope.
func methodsOn(src []byte, code []bool, scope Span, v string) []Span {
	var out []Span
	vb := []byte(v)
	for k := scope.Start; k < scope.End; {
		at := bytes.Index(src[k:scope.End], vb)
		if at < 0 {
			break
		}
		p := k + at
		k = p + 1
		if !code[p] || p > 0 && (isIdentChar(src[p-1]) || src[p-1] == '_' || src[p-1] == '.' || src[p-1] == '$') {
			continue
		}
		q := p + len(vb)
		switch {
		case q < len(src) && src[q] == '.':
			q++
		case q+1 < len(src) && src[q] == '-' && src[q+1] == '>':
			q += 2
		default:
			continue
		}
		e := q
		for e < len(src) && (src[e] == '_' || isIdentChar(src[e])) {
			e++
		}
		if e > q {
			out = append(out, Span{Start: q, End: e})
		}
	}
	return out
}

// receiverCalls returns the argument lists of the calls of v's methods in
// scope, numbered tx.
func receiverCalls(src []byte, code []bool, scope Span, v string, tx int) []Span {
	var out []Span
	for _, m := range methodsOn(src, code, scope, v) {
		k := m.End
		if k >= len(src) || src[k] != '(' {
			continue
		}
		if e := CloseParen(src, code, k); e >= 0 {
			out = append(out, Span{Start: k, End: e, Tx: tx})
		}
	}
	return out
}

var (
	// pyForceRollback is psycopg's with conn.transaction(force_rollback=True):.
	pyForceRollback = regexp.MustCompile(`(?m)^([ \t]*)(?:async\s+)?with\s+[^\n]*\.transaction\([^\n]*force_rollback\s*=\s*True[^\n]*:[ \t]*$`)
	// rbAlways is Sequel's transaction(rollback: :always) do.
	rbAlways = regexp.MustCompile(`(?m)^([ \t]*)[^\n]*\btransaction\([^\n]*rollback:\s*:always[^\n]*\bdo\b[^\n]*$`)
	// txBlock is a Ruby or Elixir transaction block: transaction do, or
	// Repo.transaction(fn -> in Elixir.
	txBlock = regexp.MustCompile(`(?m)^([ \t]*)[^\n]*\btransaction\b[^\n]*(?:\bdo\b|fn\s*->)[^\n]*$`)
	// rbRaise is a statement that rolls a transaction block back.
	rbRaise = regexp.MustCompile(`^(raise\s+(::)?(ActiveRecord|Sequel)::Rollback(\.new)?|[A-Z]\w*(\.\w+)*\.rollback(\([^()]*\))?)$`)
)

// blockRolledBack returns the spans of the blocks that always roll back
// (psycopg force_rollback, Sequel rollback: :always, a Ruby or Elixir
// transaction block that ends by rolling back).
func blockRolledBack(lang Language, src []byte, code []bool) []Span {
	var spans []Span
	add := func(re *regexp.Regexp, rollsBack func(body []byte, ind int) bool) {
		for _, m := range re.FindAllSubmatchIndex(src, -1) {
			if !code[m[0]+indentOf(src[m[0]:])] {
				continue
			}
			ind := m[3] - m[2]
			end := blockEndByIndent(src, m[0], ind)
			if rollsBack == nil || rollsBack(src[m[1]:end], ind) {
				spans = append(spans, Span{Start: m[0], End: end})
			}
		}
	}
	switch lang {
	case Python:
		add(pyForceRollback, nil)
	case Ruby, Elixir:
		if lang == Ruby {
			add(rbAlways, nil)
		}
		add(txBlock, func(body []byte, ind int) bool {
			// The last statement at the block's own level rolls back.
			lines := bytes.Split(body, []byte("\n"))
			var last []byte
			bodyInd := -1
			for _, l := range lines {
				t := bytes.TrimSpace(l)
				if len(t) == 0 {
					continue
				}
				d := indentOf(l)
				if d <= ind {
					break
				}
				if bodyInd < 0 {
					bodyInd = d
				}
				if d == bodyInd {
					last = t
				}
			}
			return last != nil && rbRaise.Match(last)
		})
	}
	return spans
}
