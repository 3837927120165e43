package extract

import (
	"bytes"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Span is a source range [Start, End).
type Span struct {
	Start, End int
	// Tx numbers the transaction of a rolled-back span when several
	// spans belong to one (the calls of one Go transaction's methods);
	// 0 is a transaction of its own.
	Tx int
	// Inherited marks a span that continues a transaction its caller
	// opened (a Python function of a DB-API file that runs its SQL
	// through a cursor or connection it was given, up to its first
	// commit): what the caller ran before the call, with no commit
	// between, is in the same transaction.
	Inherited bool
	// Ungrouped marks a span whose statements are not grouped into one
	// transaction for every rule (the driver is not known for sure): it
	// only tells sequence-session which statements ran before each in the
	// same transaction (rules.Stmt.TxBefore), and whether the caller's
	// did (Inherited).
	Ungrouped bool
	// HandedOff marks the rest of a DB-API transaction after a call that
	// was handed its connection or cursor: what the callee ran there (an
	// INSERT that advanced a sequence) is in the transaction of the
	// span's statements. It groups nothing; it marks statements as
	// Inherited does.
	HandedOff bool
}

// RolledBackSpans returns the source ranges of a file whose statements run
// inside a transaction that the driver never commits. For Rust these are
// diesel's test transactions:
//   - after conn.begin_test_transaction(), the rest of the block that
//     calls it (the transaction is rolled back when the connection is
//     dropped, and diesel refuses to commit it);
//   - the argument of conn.test_transaction(…), a closure run inside a
//     transaction that is rolled back when it returns;
//   - after a call of a test helper (TestTransactionHelpers: a function
//     that hands out a connection already inside a test transaction),
//     the rest of the calling block. The helpers of the file count, and in
//     test code (a file under a tests directory or with #[test] or
//     #[cfg(test)]) those of others, given as helpers, too.
//
// For C# they are the scopes of a System.Transactions TransactionScope
// that never calls Complete(): the ambient transaction is rolled back when
// the scope is disposed (using (new TransactionScope()) { … }, or using var
// scope = new TransactionScope(); to the end of the block).
//
// In every language, transactions that test helpers roll back and never
// commit count too (rollback.go).
func RolledBackSpans(lang Language, name string, src []byte, helpers map[string]bool) []Span {
	spans := codeRolledBack(lang, name, src, helpers)
	switch lang {
	case CSharp:
		return append(spans, csharpRolledBack(src)...)
	case Rust:
		return append(spans, dieselRolledBack(name, src, helpers)...)
	}
	return spans
}

// codeRolledBack returns the spans of rollback.go.
func codeRolledBack(lang Language, name string, src []byte, helpers map[string]bool) []Span {
	if !bytes.Contains(bytes.ToLower(src), []byte("rollback")) && !bytes.Contains(src, []byte("egin")) &&
		!(lang == Go && len(helpers) > 0) {
		return nil
	}
	lits, comments, err := Literals(lang, src)
	if err != nil {
		return nil
	}
	code := CodeMask(src, lits, comments)
	if lang == Go {
		own := map[string]bool{}
		for h := range helpers {
			own[h] = true
		}
		for _, h := range goTestHelpers(src) {
			own["go:"+h] = true
		}
		helpers = own
	}
	return append(txVarRolledBack(lang, name, src, code, helpers), blockRolledBack(lang, src, code)...)
}

// dieselRolledBack returns the spans of diesel's test transactions.
func dieselRolledBack(name string, src []byte, helpers map[string]bool) []Span {
	testCode := bytes.Contains(src, []byte("test]")) || bytes.Contains(src, []byte("#[cfg(test)]")) ||
		strings.HasPrefix(filepath.ToSlash(name), "tests/") || strings.Contains(filepath.ToSlash(name), "/tests/")
	if !bytes.Contains(src, []byte("test_transaction")) && (!testCode || len(helpers) == 0) {
		return nil
	}
	t := rustCodeTokens(src)
	own := rustTestHelpers(src, t)
	if testCode {
		defined := rustFunctions(src, t)
		for h := range helpers {
			if !defined[h] {
				own[h] = true // a function of the file's own of that name wins
			}
		}
	}
	return rustRolledBack(src, t, own)
}

// TestTransactionHelpers returns the names of the functions of a file
// (Rust) whose body calls begin_test_transaction and that return a value:
// test helpers that hand out a connection inside a test transaction.
func TestTransactionHelpers(lang Language, src []byte) []string {
	if lang == Go {
		var names []string
		for _, h := range goTestHelpers(src) {
			names = append(names, "go:"+h)
		}
		sort.Strings(names)
		return names
	}
	if lang != Rust || !bytes.Contains(src, []byte("begin_test_transaction")) {
		return nil
	}
	var names []string
	for h := range rustTestHelpers(src, rustCodeTokens(src)) {
		names = append(names, h)
	}
	sort.Strings(names)
	return names
}

// rustTestHelpers returns the functions of a file that begin a test
// transaction and return something: fn NAME(…) -> T { …
// .begin_test_transaction() … }.
func rustTestHelpers(src []byte, t []rtok) map[string]bool {
	is := func(k int, kind byte) bool { return k >= 0 && k < len(t) && t[k].kind == kind }
	word := func(k int, w string) bool { return is(k, 'i') && string(src[t[k].start:t[k].end]) == w }
	helpers := map[string]bool{}
	for k := range t {
		if !word(k, "fn") || !is(k+1, 'i') || !is(k+2, '(') {
			continue
		}
		m := matchTok(t, k+2)
		if !is(m+1, '-') || !is(m+2, '>') {
			continue
		}
		for m < len(t) && !is(m, '{') && !is(m, ';') {
			m++
		}
		if !is(m, '{') {
			continue
		}
		end := matchTok(t, m)
		for b := m; b < end; b++ {
			if word(b, "begin_test_transaction") && is(b-1, '.') && is(b+1, '(') {
				helpers[string(src[t[k+1].start:t[k+1].end])] = true
				break
			}
		}
	}
	return helpers
}

// rustFunctions returns the names of the functions a file defines.
func rustFunctions(src []byte, t []rtok) map[string]bool {
	fns := map[string]bool{}
	for k := 0; k+1 < len(t); k++ {
		if t[k].kind == 'i' && string(src[t[k].start:t[k].end]) == "fn" && t[k+1].kind == 'i' {
			fns[string(src[t[k+1].start:t[k+1].end])] = true
		}
	}
	return fns
}

// matchTok returns the index of the bracket token that closes the one at
// k, or the last token.
func matchTok(t []rtok, k int) int {
	open := t[k].kind
	shut := map[byte]byte{'(': ')', '[': ']', '{': '}'}[open]
	depth := 0
	for m := k; m < len(t); m++ {
		switch t[m].kind {
		case open:
			depth++
		case shut:
			depth--
			if depth == 0 {
				return m
			}
		}
	}
	return len(t) - 1
}

func rustRolledBack(src []byte, t []rtok, helpers map[string]bool) []Span {
	is := func(k int, kind byte) bool { return k >= 0 && k < len(t) && t[k].kind == kind }
	text := func(k int) string { return string(src[t[k].start:t[k].end]) }
	word := func(k int, w string) bool { return is(k, 'i') && text(k) == w }
	match := func(k int) int { return matchTok(t, k) }
	// blockEnd returns the index of the brace that closes the block
	// holding token k.
	blockEnd := func(k int) int {
		depth := 0
		for m := k; m < len(t); m++ {
			switch t[m].kind {
			case '{':
				depth++
			case '}':
				if depth == 0 {
					return m
				}
				depth--
			}
		}
		return len(t) - 1
	}
	// argsOpen returns the index of the parenthesis that opens the
	// argument list of the call named at k, after an optional turbofish
	// (test_transaction::<_, Error, _>(…)), or -1.
	argsOpen := func(k int) int {
		m := k + 1
		if is(m, ':') && is(m+1, '<') {
			depth := 0
			for m++; m < len(t); m++ {
				if is(m, '<') {
					depth++
				} else if is(m, '>') {
					depth--
					if depth == 0 {
						m++
						break
					}
				} else if is(m, ';') || is(m, '{') || is(m, '}') {
					return -1
				}
			}
		}
		if is(m, '(') {
			return m
		}
		return -1
	}
	var spans []Span
	for k := range t {
		if !is(k, 'i') {
			continue
		}
		switch name := text(k); {
		case name == "begin_test_transaction" && is(k-1, '.') && is(k+1, '('):
			spans = append(spans, Span{Start: t[k].start, End: t[blockEnd(k)].end})
		case name == "test_transaction" && is(k-1, '.'):
			if open := argsOpen(k); open >= 0 {
				spans = append(spans, Span{Start: t[open].start, End: t[match(open)].end})
			}
		case helpers[name] && is(k+1, '(') && !word(k-1, "fn") && !is(k-1, '.'):
			spans = append(spans, Span{Start: t[k].start, End: t[blockEnd(k)].end})
		}
	}
	return spans
}

// OptionPair is one (name, value) pair given to sqlx's
// PgConnectOptions::options: the source offsets at which the two string
// literals start.
type OptionPair struct{ Key, Value int }

// RustConnectOptions returns the pairs of string literals passed as
// ("name", "value") tuples to an .options(…) call in a Rust file that
// names PgConnectOptions: sqlx sends them as -c name=value in the
// options startup parameter.
func RustConnectOptions(src []byte) []OptionPair {
	if !bytes.Contains(src, []byte("PgConnectOptions")) || !bytes.Contains(src, []byte("options")) {
		return nil
	}
	t := rustCodeTokens(src)
	is := func(k int, kind byte) bool { return k >= 0 && k < len(t) && t[k].kind == kind }
	// Literals are not tokens: a literal lies between two tokens.
	lits, _, err := Literals(Rust, src)
	if err != nil {
		return nil
	}
	litAfter := func(off int) (int, int, bool) { // the literal starting first at or after off
		k := sort.Search(len(lits), func(i int) bool { return lits[i].Start >= off })
		if k == len(lits) {
			return 0, 0, false
		}
		return lits[k].Start, lits[k].End, true
	}
	text := func(k int) string { return string(src[t[k].start:t[k].end]) }
	// Names bound to connect options: a let statement or a parameter
	// that names the type, or a let whose value starts with such a name.
	vars := map[string]bool{}
	for k := range t {
		switch {
		case is(k, 'i') && text(k) == "let":
			n := k + 1
			if is(n, 'i') && text(n) == "mut" {
				n++
			}
			if !is(n, 'i') {
				continue
			}
			depth, typed := 0, false
			first := -1
			for m := n + 1; m < len(t); m++ {
				if is(m, '(') || is(m, '[') || is(m, '{') {
					depth++
				} else if is(m, ')') || is(m, ']') || is(m, '}') {
					depth--
				} else if is(m, ';') && depth <= 0 {
					break
				}
				if depth < 0 {
					break
				}
				if is(m, 'i') && text(m) == "PgConnectOptions" {
					typed = true
				}
				if first < 0 && is(m-1, '=') && !is(m-2, '=') {
					first = m
				}
			}
			if typed || first >= 0 && is(first, 'i') && vars[text(first)] {
				vars[text(n)] = true
			}
		case is(k, 'i') && text(k) == "PgConnectOptions" && is(k-1, 'c') && is(k-2, 'i'):
			vars[text(k-2)] = true // opts: PgConnectOptions
		case is(k, 'i') && text(k) == "PgConnectOptions" && is(k-1, '&') && is(k-2, 'c') && is(k-3, 'i'):
			vars[text(k-3)] = true // opts: &PgConnectOptions
		}
	}
	// rooted reports whether the method chain that ends with the '.' at
	// k starts at PgConnectOptions::… or at a name of vars.
	rooted := func(k int) bool {
		m := k - 1
		for m >= 0 {
			switch {
			case is(m, ')'):
				depth := 0
				for ; m >= 0; m-- {
					if is(m, ')') {
						depth++
					} else if is(m, '(') {
						depth--
						if depth == 0 {
							break
						}
					}
				}
				m--
			case is(m, '?'):
				m--
			case is(m, 'i') && is(m-1, '.'):
				m -= 2
			case is(m, 'i') && is(m-1, ':'):
				for is(m, 'i') && is(m-1, ':') {
					if text(m-2) == "PgConnectOptions" {
						return true
					}
					m -= 2
				}
				return text(m) == "PgConnectOptions"
			case is(m, 'i'):
				return vars[text(m)]
			default:
				return false
			}
		}
		return false
	}
	var out []OptionPair
	for k := range t {
		if !is(k, 'i') || text(k) != "options" || !is(k-1, '.') || !is(k+1, '(') || !rooted(k-1) {
			continue
		}
		end := matchTok(t, k+1)
		// Each tuple: ( "name" , "value" ): three tokens ( , ) around two
		// literals.
		for m := k + 2; m < end; m++ {
			if !is(m, '(') || !is(m+1, ',') || !is(m+2, ')') {
				continue
			}
			ks, ke, ok := litAfter(t[m].end)
			if !ok || ke > t[m+1].start || strings.TrimSpace(string(src[t[m].end:ks])) != "" {
				continue
			}
			vs, ve, ok := litAfter(t[m+1].end)
			if !ok || ve > t[m+2].start || strings.TrimSpace(string(src[t[m+1].end:vs])) != "" ||
				strings.TrimSpace(string(src[ve:t[m+2].start])) != "" || strings.TrimSpace(string(src[ke:t[m+1].start])) != "" {
				continue
			}
			out = append(out, OptionPair{ks, vs})
		}
	}
	return out
}

// csUsingRE matches the text of a statement before its new
// TransactionScope: using (, using (var s =, using var s =.
var csUsingRE = regexp.MustCompile(`^\s*using\s*(\(\s*)?((var|TransactionScope|System\.Transactions\.TransactionScope)\??\s+\w+\s*=\s*)?$`)

// csCompleteRE matches a call of Complete().
var csCompleteRE = regexp.MustCompile(`\.\s*Complete\s*\(`)

// csharpRolledBack returns the scopes of TransactionScopes that are never
// completed.
func csharpRolledBack(src []byte) []Span {
	code := codeWith(CSharp, src, "TransactionScope")
	if code == nil {
		return nil
	}
	isWord := func(c byte) bool { return c == '_' || isIdentChar(c) }
	skip := func(i int) int {
		for i < len(src) && (!code[i] || src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n') {
			i++
		}
		return i
	}
	// match returns the offset of the bracket that closes the one at i.
	match := func(i int) int {
		open := src[i]
		shut := map[byte]byte{'(': ')', '{': '}', '[': ']'}[open]
		depth := 0
		for k := i; k < len(src); k++ {
			if !code[k] {
				continue
			}
			switch src[k] {
			case open:
				depth++
			case shut:
				depth--
				if depth == 0 {
					return k
				}
			}
		}
		return len(src) - 1
	}
	// statementEnd returns the offset just after the statement at i: a
	// block, a using that holds the next statement, or up to its ';'.
	var statementEnd func(i int) int
	statementEnd = func(i int) int {
		i = skip(i)
		if i >= len(src) {
			return len(src)
		}
		if src[i] == '{' {
			return match(i) + 1
		}
		if bytes.HasPrefix(src[i:], []byte("using")) {
			if j := skip(i + 5); j < len(src) && src[j] == '(' {
				return statementEnd(match(j) + 1)
			}
		}
		depth := 0
		for k := i; k < len(src); k++ {
			if !code[k] {
				continue
			}
			switch src[k] {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			case ';':
				if depth <= 0 {
					return k + 1
				}
			}
		}
		return len(src)
	}
	// blockEnd returns the offset of the brace that closes the block
	// holding offset i.
	blockEnd := func(i int) int {
		depth := 0
		for k := i; k < len(src); k++ {
			if !code[k] {
				continue
			}
			switch src[k] {
			case '{':
				depth++
			case '}':
				if depth == 0 {
					return k
				}
				depth--
			}
		}
		return len(src)
	}
	var spans []Span
	for from := 0; ; {
		k := bytes.Index(src[from:], []byte("TransactionScope"))
		if k < 0 {
			break
		}
		k += from
		from = k + len("TransactionScope")
		if !code[k] || k > 0 && isWord(src[k-1]) && src[k-1] != '.' || from < len(src) && isWord(src[from]) {
			continue
		}
		// new [System.Transactions.]TransactionScope
		n := k
		for n > 0 && (isWord(src[n-1]) || src[n-1] == '.') {
			n--
		}
		head := strings.TrimRight(string(src[:n]), " \t\r\n")
		if !strings.HasSuffix(head, "new") {
			continue
		}
		newAt := len(head) - 3
		// The statement's start: after the last ; { or } before new.
		st := newAt
		for st > 0 && !(code[st-1] && (src[st-1] == ';' || src[st-1] == '{' || src[st-1] == '}')) {
			st--
		}
		m := csUsingRE.FindSubmatch(src[st:newAt])
		if m == nil {
			continue
		}
		var a, b int
		if len(m[1]) > 0 {
			open := bytes.IndexByte(src[st:newAt], '(') + st
			close := match(open)
			a, b = close+1, statementEnd(close+1)
		} else {
			a, b = newAt, blockEnd(newAt)
		}
		if a >= b {
			continue
		}
		completed := false
		for _, c := range csCompleteRE.FindAllIndex(src[a:b], -1) {
			if code[a+c[0]] {
				completed = true
				break
			}
		}
		if !completed {
			spans = append(spans, Span{Start: a, End: b})
		}
	}
	return spans
}

// rustConnectCalls are the calls by which a Rust test reaches a server:
// connecting, and running statements on a connection or pool.
var rustConnectCalls = map[string]bool{
	"connect": true, "connect_with": true, "connect_lazy": true, "connect_lazy_with": true,
	"establish": true, "acquire": true, "begin": true, "execute": true, "fetch": true,
	"fetch_one": true, "fetch_all": true, "fetch_optional": true, "batch_execute": true,
	"simple_query": true, "query": true, "query_one": true, "query_opt": true, "prepare": true,
	"run": true, "get_result": true, "load": true,
}

// RustOfflineTests returns the bodies of the Rust test functions of a file
// (#[test], #[tokio::test], …) that never reach a server: they call
// nothing of rustConnectCalls. The connection strings and options such a
// test builds are only parsed and compared, never sent.
func RustOfflineTests(src []byte) []Span {
	if !bytes.Contains(src, []byte("test")) {
		return nil
	}
	t := rustCodeTokens(src)
	is := func(k int, kind byte) bool { return k >= 0 && k < len(t) && t[k].kind == kind }
	text := func(k int) string { return string(src[t[k].start:t[k].end]) }
	var spans []Span
	for k := range t {
		if !is(k, 'i') || text(k) != "fn" || !is(k+1, 'i') {
			continue
		}
		// Attributes before the qualifiers: #[…] groups, the last of
		// which names test.
		a := k - 1
		for is(a, 'i') && (text(a) == "pub" || text(a) == "async" || text(a) == "unsafe" || text(a) == "const") {
			a--
		}
		isTest := false
		for is(a, ']') {
			depth, open := 0, -1
			for m := a; m >= 0; m-- {
				if is(m, ']') {
					depth++
				} else if is(m, '[') {
					depth--
					if depth == 0 {
						open = m
						break
					}
				}
			}
			if open < 1 || !is(open-1, '#') {
				break
			}
			for m := open + 1; m < a; m++ {
				if is(m, 'i') && text(m) == "test" {
					isTest = true
				}
			}
			a = open - 2
		}
		if !isTest {
			continue
		}
		b := k + 2
		for b < len(t) && !is(b, '{') && !is(b, ';') {
			b++
		}
		if !is(b, '{') {
			continue
		}
		end := matchTok(t, b)
		offline := true
		for m := b; m < end; m++ {
			if is(m, 'i') && rustConnectCalls[text(m)] && (is(m+1, '(') || is(m+1, ':') && is(m+2, '<')) {
				offline = false
				break
			}
		}
		if offline {
			spans = append(spans, Span{Start: t[b].start, End: t[end].end})
		}
	}
	return spans
}

// codeWith returns the code mask (CodeMask) of src in lang, or nil when
// src does not hold word at all or cannot be read as lang.
func codeWith(lang Language, src []byte, word string) []bool {
	if !bytes.Contains(src, []byte(word)) {
		return nil
	}
	lits, comments, err := Literals(lang, src)
	if err != nil {
		return nil
	}
	return CodeMask(src, lits, comments)
}

// CloseParen returns the offset just past the parenthesis that closes
// the one at open, counting only the bytes that are code (CodeMask), or
// -1 when it is not closed.
func CloseParen(src []byte, code []bool, open int) int {
	return closeBracket(src, code, open, '(', ')')
}

// closeBracket returns the offset just past the bracket (close) that
// closes the first opener at or after open, counting only code bytes, or
// -1 when it is not closed.
func closeBracket(src []byte, code []bool, open int, opener, close byte) int {
	depth := 0
	for e := open; e < len(src); e++ {
		if !code[e] {
			continue
		}
		switch src[e] {
		case opener:
			depth++
		case close:
			if depth--; depth == 0 {
				return e + 1
			}
		}
	}
	return -1
}

// CodeMask marks the bytes of src outside string literals and comments.
func CodeMask(src []byte, lits []Literal, comments []Comment) []bool {
	code := make([]bool, len(src))
	for i := range code {
		code[i] = true
	}
	off := func(a, b int) {
		for k := max(a, 0); k < b && k < len(src); k++ {
			code[k] = false
		}
	}
	for _, l := range lits {
		off(l.Start, l.End)
	}
	for _, c := range comments {
		off(c.Start, c.End)
	}
	return code
}
