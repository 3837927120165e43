package extract

import (
	"bytes"
	"sort"
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
