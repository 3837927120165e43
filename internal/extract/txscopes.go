package extract

import (
	"bytes"
	"regexp"
	"strings"
)

// This file finds the transactions that application code opens through a
// driver's or a framework's API: code whose statements run in one
// transaction although no literal says BEGIN. Statements of one such span
// see each other as statements of one BEGIN … COMMIT do (a currval() after
// the INSERT that set it, in the same transaction, is safe behind a
// transaction pooler).
//
//   - A transaction held in a variable, in rollback.go's forms, that the
//     code commits: from the call that begins it to its first commit (in
//     Go, the statements passed to its methods there).
//   - A parameter or receiver typed as a transaction: Go's func f(tx
//     pgx.Tx) (also *sql.Tx, *sqlx.Tx, bun.Tx, *pg.Tx, and the callback of
//     pgx.BeginFunc), whose statements are those passed to its methods;
//     Kotlin's fun JdbcTransaction.f() (any receiver type whose name ends
//     in Transaction), whose body runs in the caller's transaction.
//   - A block run in one transaction: Kotlin's transaction { … } (Exposed's
//     newSuspendedTransaction and inTopLevelTransaction, ktorm's
//     useTransaction, Spring's transactionTemplate.execute { … }), the
//     callback given to such a call in Java, JavaScript and TypeScript
//     (knex's and Sequelize's transaction(trx => …), Prisma's
//     $transaction(async tx => …), pg-promise's tx(t => …), Jdbi's
//     inTransaction(h -> …)), Python's with ….transaction(): / with
//     transaction.atomic(): / with ….begin():, and Ruby's and Elixir's
//     transaction do … end / Repo.transaction(fn -> … end).
//   - The implicit transactions of DB-API 2.0 drivers (psycopg 2 and 3,
//     pg8000, PyGreSQL's pgdb), whose connections begin a transaction at
//     the first statement and keep it until commit() or rollback(): in a
//     file that imports such a driver and never turns autocommit on, the
//     statements of a function between two such calls, and those of the
//     module's own code (a script) when it executes SQL. After a call
//     handed the transaction's connection or cursor, the rest of the
//     piece is marked HandedOff (the callee's INSERT may have run in it).
//     In a function that
//     runs its SQL through a cursor or connection it was given (a
//     parameter, self included, or what it derives from one), the piece
//     before the first commit() continues the caller's transaction
//     (Span.Inherited), unless the file imports a framework whose
//     connections autocommit (Django, SQLAlchemy, peewee, …: the cursor
//     may be one of its). A Python file that imports no such driver but
//     calls .execute( or .executemany( as DB-API code does (not awaited,
//     no autocommit, no such framework) gets the pieces of its functions
//     (not async ones) that read a sequence (currval, lastval) only,
//     marked Ungrouped: they tell
//     sequence-session which statements ran before in the transaction,
//     and do not group the statements for the other rules.
//   - A list of statements passed whole to one call in Python
//     (pylists.go): spans marked Ungrouped, one Tx number per list.
//   - A method marked @Transactional (Spring, Jakarta), or every method of
//     a class so marked, and a Python function decorated with
//     @transaction.atomic.
//
// Transactions that always roll back are RolledBackSpans's; where both
// hold an offset, the rolled-back one wins.

// TransactionSpans returns the source ranges of a file whose statements
// run inside one transaction that the code opens through an API (see
// above). Spans that share a Tx number above 0 belong to one transaction
// (the calls of one Go transaction's methods). lits and comments are
// what Literals returned for src.
func TransactionSpans(lang Language, name string, src []byte, lits []Literal, comments []Comment) []Span {
	lower := bytes.ToLower(src)
	found := false
	for _, w := range []string{"transaction", "begin", "tx", "atomic", "autocommit", "psycopg", "pgdb", "pg8000", "currval", "lastval"} {
		found = found || bytes.Contains(lower, []byte(w))
	}
	if !found {
		return nil
	}
	code := CodeMask(src, lits, comments)
	tx := 0
	var spans []Span
	eachTxVar(lang, isTestFile(name, src), src, code, func(t txVar) {
		if !t.commits {
			return
		}
		end := firstCommit(src, code, t)
		tx++
		if lang == Go {
			spans = append(spans, receiverCalls(src, code, Span{Start: t.at, End: end}, t.v, tx)...)
		} else {
			spans = append(spans, Span{Start: t.at, End: end, Tx: tx})
		}
	})
	switch lang {
	case Go:
		for _, p := range goTxParams(src, code) {
			tx++
			spans = append(spans, receiverCalls(src, code, p.body, p.v, tx)...)
		}
	case Kotlin, Java:
		spans = append(spans, kotlinTxReceivers(src, code)...)
		spans = append(spans, callbackTxBlocks(lang, src, code)...)
		spans = append(spans, transactionalMethods(lang, src, code)...)
	case JavaScript:
		spans = append(spans, callbackTxBlocks(lang, src, code)...)
	case Python:
		spans = append(spans, pythonTxBlocks(src, code)...)
		spans = append(spans, dbapiImplicit(src, code, &tx)...)
		spans = append(spans, pythonStatementLists(src, code, lits, &tx)...)
	case Ruby, Elixir:
		for _, m := range txBlock.FindAllSubmatchIndex(src, -1) {
			if !code[m[0]+indentOf(src[m[0]:])] || !code[bytes.Index(src[m[0]:m[1]], []byte("transaction"))+m[0]] {
				continue
			}
			spans = append(spans, Span{Start: m[0], End: blockEndByIndent(src, m[0], m[3]-m[2])})
		}
	}
	return spans
}

// firstCommit returns where the first commit of t's transaction after its
// begin ends (the end of the method's name), or the end of its scope.
func firstCommit(src []byte, code []bool, t txVar) int {
	for _, m := range methodsOn(src, code, Span{Start: t.at, End: t.scope.End}, t.v) {
		name := string(src[m.Start:m.End])
		if commitCall.MatchString(name) {
			return m.End
		}
		if strings.EqualFold(name, "setAutoCommit") &&
			bytes.HasPrefix(bytes.TrimLeft(src[min(m.End+1, len(src)):], " \t"), []byte("true")) {
			return m.End
		}
	}
	return t.scope.End
}

// braceSpan returns the span of the braces that open at open.
func braceSpan(src []byte, code []bool, open int) Span {
	end := closeBracket(src, code, open, '{', '}')
	if end < 0 {
		end = len(src)
	}
	return Span{Start: open, End: end}
}

// bodyAfter returns the offset of the brace that opens the block after
// offset i: the first code '{' outside parentheses, or -1 when a ';', a
// '}' or an '=' (a Kotlin expression body) comes first.
func bodyAfter(src []byte, code []bool, i int) int {
	depth := 0
	for k := i; k < len(src); k++ {
		if !code[k] {
			continue
		}
		switch src[k] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '{':
			if depth == 0 {
				return k
			}
		case ';', '}':
			if depth <= 0 {
				return -1
			}
		case '=':
			if depth == 0 && (k+1 >= len(src) || src[k+1] != '=') && (k == 0 || src[k-1] != '=' && src[k-1] != '!' && src[k-1] != '<' && src[k-1] != '>') {
				return -1
			}
		}
	}
	return -1
}

var (
	// txBlockCalls name the calls that run a block or a callback in one
	// transaction.
	txBlockCalls = map[string]bool{
		"transaction": true, "newSuspendedTransaction": true, "suspendTransaction": true,
		"suspendedTransactionAsync": true, "inTopLevelTransaction": true, "inTransaction": true,
		"inTransactionUnchecked": true, "useTransaction": true, "withTransaction": true,
		"transactionResult": true, "transactionAsync": true, "$transaction": true, "tx": true,
		"execute": true, "executeWithoutResult": true,
	}
	// txTemplate is the receiver of Spring's TransactionTemplate.
	txTemplate = regexp.MustCompile(`(?i)(?:^|\.)(?:transactionTemplate|txTemplate|\w*TransactionTemplate\w*)$`)
)

// callbackTxBlocks returns the blocks and callbacks run in one
// transaction in Kotlin, Java, JavaScript and TypeScript: the trailing
// lambda of a Kotlin call, or the argument list of a call that holds a
// lambda (->, =>, function).
func callbackTxBlocks(lang Language, src []byte, code []bool) []Span {
	var spans []Span
	isWord := func(c byte) bool { return c == '_' || c == '$' || isIdentChar(c) }
	for i := 0; i < len(src); i++ {
		if !code[i] || !isWord(src[i]) || i > 0 && isWord(src[i-1]) {
			continue
		}
		j := i
		for j < len(src) && isWord(src[j]) {
			j++
		}
		at, name := i, string(src[i:j])
		i = j - 1
		if !txBlockCalls[name] {
			continue
		}
		k := j
		for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		if k >= len(src) || src[k] != '(' && src[k] != '{' {
			continue
		}
		before := bytes.TrimRight(src[max(0, at-16):at], " \t")
		if bytes.HasSuffix(before, []byte("fun")) || bytes.HasSuffix(before, []byte("function")) ||
			bytes.HasSuffix(before, []byte("def")) {
			continue // a definition, not a call
		}
		switch name {
		case "execute", "executeWithoutResult":
			if r, _ := receiverBefore(src, at); !txTemplate.MatchString(r) {
				continue
			}
		case "tx":
			if lang != JavaScript {
				continue
			}
			if r, _ := receiverBefore(src, at); r == "" {
				continue // pg-promise's db.tx(…)
			}
		case "transaction":
			if r, _ := receiverBefore(src, at); lang == Java && r == "" {
				continue
			}
		}
		if src[k] == '(' {
			e := CloseParen(src, code, k)
			if e < 0 {
				continue
			}
			args := src[k:e]
			lambda := bytes.Contains(args, []byte("->")) || bytes.Contains(args, []byte("=>")) ||
				bytes.Contains(args, []byte("function")) || bytes.Contains(args, []byte("::"))
			if lambda && lang != Kotlin {
				spans = append(spans, Span{Start: k, End: e})
				continue
			}
			if lang != Kotlin {
				continue
			}
			k = e
			for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
		}
		if lang == Kotlin && k < len(src) && src[k] == '{' && code[k] {
			spans = append(spans, braceSpan(src, code, k))
		}
	}
	return spans
}

// transactionalRE is the @Transactional annotation (not
// @TransactionalEventListener), with its arguments.
var transactionalRE = regexp.MustCompile(`@(?:[\w.]*\.)?Transactional\b(?:\s*\([^()]*\))?`)

// transactionalMethods returns the bodies of the methods marked
// @Transactional, and of every method of a class so marked.
func transactionalMethods(lang Language, src []byte, code []bool) []Span {
	var spans []Span
	for _, m := range transactionalRE.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		b := -1
		for k := m[1]; k < len(src); k++ {
			if code[k] && (src[k] == '{' || src[k] == ';') {
				if src[k] == '{' {
					b = k
				}
				break
			}
		}
		if b < 0 {
			continue
		}
		header := outsideParens(codeText(src, code, m[1], b))
		if declaresType(header) {
			cls := braceSpan(src, code, b)
			spans = append(spans, methodBodies(lang, src, code, cls)...)
			continue
		}
		if isMethodHeader(lang, header) {
			spans = append(spans, braceSpan(src, code, b))
		}
	}
	return spans
}

// typeWord matches the keyword of a type declaration.
var typeWord = regexp.MustCompile(`\b(class|interface|object|enum|record)\b`)

// declaresType reports whether a declaration header declares a type.
func declaresType(header string) bool { return typeWord.MatchString(header) }

// methodBodies returns the bodies of the methods declared directly in a
// class body (cls: the span of its braces).
func methodBodies(lang Language, src []byte, code []bool, cls Span) []Span {
	var spans []Span
	depth := 0
	last := cls.Start + 1 // where the current member's header starts
	for k := cls.Start; k < cls.End; k++ {
		if !code[k] {
			continue
		}
		switch src[k] {
		case '{':
			depth++
			if depth == 2 && isMethodHeader(lang, outsideParens(codeText(src, code, last, k))) {
				spans = append(spans, braceSpan(src, code, k))
			}
		case '}':
			depth--
			if depth == 1 {
				last = k + 1
			}
		case ';':
			if depth == 1 {
				last = k + 1
			}
		}
	}
	return spans
}

// isMethodHeader reports whether a member's header (its code, with what
// parentheses hold left out) declares a method with a body: Kotlin's fun
// …, Java's … name() [throws …], and not a type, a field's initializer or
// an anonymous class.
func isMethodHeader(lang Language, h string) bool {
	if declaresType(h) || strings.Contains(h, "=") || strings.Contains(h, "new ") {
		return false
	}
	if lang == Kotlin {
		return strings.Contains(h, "fun ")
	}
	h = strings.TrimSpace(h)
	if i := strings.Index(h, " throws "); i >= 0 {
		h = strings.TrimSpace(h[:i])
	}
	return strings.HasSuffix(h, "()")
}

// codeText returns the code bytes of src[a:b], with what is not code left
// out.
func codeText(src []byte, code []bool, a, b int) string {
	var sb strings.Builder
	for k := a; k < b; k++ {
		if code[k] {
			sb.WriteByte(src[k])
		}
	}
	return sb.String()
}

// outsideParens returns s with what its parentheses hold left out
// ("f(a = 1)" becomes "f()").
func outsideParens(s string) string {
	var sb strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if depth == 0 {
				sb.WriteByte('(')
			}
			depth++
			continue
		case ')':
			depth--
			if depth == 0 {
				sb.WriteByte(')')
			}
			continue
		}
		if depth == 0 {
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}
