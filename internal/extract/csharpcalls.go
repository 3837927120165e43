package extract

import (
	"bytes"
	"regexp"
	"strings"
)

// Subscription is a place where application code receives PostgreSQL
// notifications through its driver's API rather than with SQL: the
// LISTEN it relies on was sent on a server connection that a
// transaction-mode pooler gives to other clients.
type Subscription struct {
	// Start and End are the source range of the member name.
	Start, End int
	// API names the member ("NpgsqlConnection.Wait").
	API string
	// Receiver is the expression it is called on, as written ("conn",
	// "_connection"; without "this.").
	Receiver string
}

// Subscriptions returns the places in src, a file of language lang, that
// receive notifications through a driver's API. For C# (Npgsql) they are
// handlers added to a connection's Notification event (conn.Notification
// += …, in a file that names Npgsql or on a connection it declares), and
// calls of Wait and WaitAsync on a connection the file declares as an
// NpgsqlConnection, creates with new NpgsqlConnection(…), opens from a data
// source (OpenConnection, OpenConnectionAsync, CreateConnection, in a
// file that names Npgsql) or adds a Notification handler to: Task.Wait()
// and the other Wait methods of .NET are not taken for them. Other
// languages have none.
func Subscriptions(lang Language, src []byte) []Subscription {
	if lang != CSharp || !bytes.Contains(src, []byte("Notification")) && !bytes.Contains(src, []byte("Wait")) {
		return nil
	}
	c := newCSLexer(src)
	c.record = true
	c.code(0, false)
	return c.subscriptions()
}

func (c *csLexer) subscriptions() []Subscription {
	t, src := c.ctoks, c.src
	is := func(k int, kind byte) bool { return k >= 0 && k < len(t) && t[k].kind == kind }
	text := func(k int) string { return string(src[t[k].start:t[k].end]) }
	word := func(k int, w string) bool { return is(k, 'i') && text(k) == w }
	// path returns the dotted path that ends at identifier k, and the
	// index of its first identifier.
	path := func(k int) (string, int) { return dottedPath(src, t, k, "this.") }
	// assigned returns the variable that the expression starting at
	// token k is assigned to (conn in var conn = …), or "".
	assigned := func(k int) string {
		if word(k-1, "await") {
			k--
		}
		if !is(k-1, '=') || !is(k-2, 'i') {
			return ""
		}
		p, _ := path(k - 2)
		return p
	}
	npgsql := bytes.Contains(src, []byte("Npgsql"))
	// handler reports whether token k is the Notification of
	// recv.Notification +=.
	handler := func(k int) (string, bool) {
		if !word(k, "Notification") || !is(k+1, '+') || !is(k-1, '.') || !is(k-2, 'i') {
			return "", false
		}
		recv, _ := path(k - 2)
		return recv, true
	}
	conns := map[string]bool{}
	for k := range t {
		if !is(k, 'i') {
			continue
		}
		switch w := text(k); w {
		case "NpgsqlConnection":
			_, from := path(k)
			if word(from-1, "new") {
				if v := assigned(from - 1); v != "" {
					conns[v] = true
				}
				continue
			}
			// A declaration: NpgsqlConnection conn, NpgsqlConnection? conn.
			m := k + 1
			if is(m, '?') {
				m++
			}
			if is(m, 'i') && !is(m+1, '.') && !is(m+1, '(') {
				conns[text(m)] = true
			}
		case "OpenConnection", "OpenConnectionAsync", "CreateConnection":
			if npgsql && is(k+1, '(') {
				_, from := path(k)
				if v := assigned(from); v != "" {
					conns[v] = true
				}
			}
		case "Notification":
			if recv, ok := handler(k); ok && npgsql {
				conns[recv] = true
			}
		}
	}
	var subs []Subscription
	for k := range t {
		if recv, ok := handler(k); ok && conns[recv] {
			subs = append(subs, Subscription{Start: t[k].start, End: t[k].end, API: "NpgsqlConnection.Notification", Receiver: recv})
			continue
		}
		if (word(k, "Wait") || word(k, "WaitAsync")) && is(k+1, '(') && is(k-1, '.') && is(k-2, 'i') {
			if recv, _ := path(k - 2); conns[recv] {
				subs = append(subs, Subscription{Start: t[k].start, End: t[k].end, API: "NpgsqlConnection." + text(k), Receiver: recv})
			}
		}
	}
	return subs
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
