package extract

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
)

// MethodCall is a call of a named method on a receiver in Java or Kotlin
// code (recv.name(args), recv?.name(args)), or a Kotlin property
// assignment through a receiver (recv.name = value).
type MethodCall struct {
	Name string
	// Receiver is the receiver's last identifier (conn for
	// this.conn.setSchema(…)), or "" when the receiver is the result of a
	// call or an index (getConnection().setSchema(…)).
	Receiver string
	// NameStart is the offset of the method name, End the offset after the
	// closing parenthesis (or after the assigned value).
	NameStart, End int
	// Args are the arguments, or the assigned value.
	Args []CallArg
	// Assign marks a Kotlin property assignment.
	Assign bool
}

// CallArg is one argument of a call.
type CallArg struct {
	// Start and End are its source range, without surrounding blanks.
	Start, End int
	// Lit indexes the literal that is the whole argument, or is -1.
	Lit int
}

// JavaCalls returns the calls of the methods in names made through a
// receiver, in source order. lits and comments are what Literals returned
// for src: calls inside them are not code. A method name without a
// receiver (a declaration, or a call on this inside the class itself) is
// not reported, and neither is a method reference (recv::name).
func JavaCalls(src []byte, lits []Literal, comments []Comment, names map[string]bool) []MethodCall {
	skips := make([][2]int, 0, len(lits)+len(comments))
	for _, l := range lits {
		skips = append(skips, [2]int{l.Start, l.End})
	}
	for _, c := range comments {
		skips = append(skips, [2]int{c.Start, c.End})
	}
	sc := newSkipper(skips)
	var out []MethodCall
	for i := 0; i < len(src); {
		if e := sc.at(i); e > i {
			i = e
			continue
		}
		c := src[i]
		switch {
		case c == '\'':
			i = javaChar(src, i)
		case isIdentStart(c) || c == '$':
			j := i + 1
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '$') {
				j++
			}
			if names[string(src[i:j])] {
				if call, ok := methodCall(src, lits, sc, i, j); ok {
					out = append(out, call)
				}
			}
			i = j
		default:
			i++
		}
	}
	return out
}

// skipper says whether an offset lies in a literal or a comment.
type skipper struct {
	skips [][2]int // sorted, merged ranges
}

func newSkipper(ranges [][2]int) *skipper {
	sort.Slice(ranges, func(a, b int) bool { return ranges[a][0] < ranges[b][0] })
	merged := ranges[:0]
	for _, r := range ranges {
		if n := len(merged); n > 0 && r[0] < merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return &skipper{skips: merged}
}

// at returns the end of the literal or comment that holds offset i, or i.
func (s *skipper) at(i int) int {
	k := sort.Search(len(s.skips), func(k int) bool { return s.skips[k][0] > i }) - 1
	if k >= 0 && s.skips[k][1] > i {
		return s.skips[k][1]
	}
	return i
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// methodCall reads the call whose method name is src[i:j].
func methodCall(src []byte, lits []Literal, sc *skipper, i, j int) (MethodCall, bool) {
	k := i - 1
	for k >= 0 && isSpaceByte(src[k]) {
		k--
	}
	if k < 1 || src[k] != '.' || src[k-1] == '.' {
		return MethodCall{}, false
	}
	k--
	if src[k] == '?' {
		k-- // Kotlin's safe call
	}
	for k >= 0 && isSpaceByte(src[k]) {
		k--
	}
	if k < 0 {
		return MethodCall{}, false
	}
	call := MethodCall{Name: string(src[i:j]), NameStart: i}
	switch {
	case isIdentChar(src[k]) || src[k] == '$':
		e := k + 1
		for k >= 0 && (isIdentChar(src[k]) || src[k] == '$') {
			k--
		}
		call.Receiver = string(src[k+1 : e])
	case src[k] == ')' || src[k] == ']':
	default:
		return MethodCall{}, false
	}
	p := j
	for p < len(src) && isSpaceByte(src[p]) {
		p++
	}
	if p >= len(src) {
		return MethodCall{}, false
	}
	if src[p] == '=' && (p+1 >= len(src) || src[p+1] != '=') {
		// A property assignment: the value runs to the end of the line,
		// a ';' or a comment.
		s := p + 1
		for s < len(src) && (src[s] == ' ' || src[s] == '\t') {
			s++
		}
		e := s
		for e < len(src) && src[e] != '\n' && src[e] != ';' {
			if x := sc.at(e); x > e {
				if src[e] == '/' {
					break // a comment ends the value
				}
				e = x
				continue
			}
			e++
		}
		for e > s && isSpaceByte(src[e-1]) {
			e--
		}
		if e == s {
			return MethodCall{}, false
		}
		call.Assign = true
		call.End = e
		call.Args = []CallArg{arg(lits, s, e)}
		return call, true
	}
	if src[p] != '(' {
		return MethodCall{}, false
	}
	depth := 0
	argStart := p + 1
	for q := p + 1; q < len(src); {
		if x := sc.at(q); x > q {
			q = x
			continue
		}
		switch src[q] {
		case '\'':
			q = javaChar(src, q)
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				if src[q] != ')' {
					return MethodCall{}, false
				}
				if a := trimmedArg(src, lits, argStart, q); a.End > a.Start || len(call.Args) > 0 {
					call.Args = append(call.Args, a)
				}
				call.End = q + 1
				return call, true
			}
			depth--
		case ',':
			if depth == 0 {
				call.Args = append(call.Args, trimmedArg(src, lits, argStart, q))
				argStart = q + 1
			}
		}
		q++
	}
	return MethodCall{}, false // unterminated
}

func trimmedArg(src []byte, lits []Literal, s, e int) CallArg {
	for s < e && isSpaceByte(src[s]) {
		s++
	}
	for e > s && isSpaceByte(src[e-1]) {
		e--
	}
	return arg(lits, s, e)
}

// arg makes the argument at [s, e), finding the literal that is all of it.
func arg(lits []Literal, s, e int) CallArg {
	n := sort.Search(len(lits), func(k int) bool { return lits[k].Start >= s })
	if n < len(lits) && lits[n].Start == s && lits[n].End == e {
		return CallArg{Start: s, End: e, Lit: n}
	}
	return CallArg{Start: s, End: e, Lit: -1}
}

// DeclaredType returns the type a Java or Kotlin file declares for the
// variable, field or parameter name: Table t, final Table t = …, var t =
// new Table(…), t: Table, val t = Table(…). The declaration nearest
// before offset at wins, else the first after it (a field declared below
// its use). The type is given by its last name, without type arguments;
// "" when the file declares none that can be read.
func DeclaredType(lang Language, src []byte, lits []Literal, comments []Comment, name string, at int) string {
	if name == "" {
		return ""
	}
	code := CodeMask(src, lits, comments)
	q := regexp.QuoteMeta(name)
	res := []*regexp.Regexp{
		// Table t =, Table t;, List<Table> t), Table[] t,
		regexp.MustCompile(`\b([A-Z][\w.]*)\s*(?:<[^;{}()=]*>)?\s*(?:\[\s*\])?\s+` + q + `\s*[=;,)]`),
		// var t = new Table(
		regexp.MustCompile(`\bvar\s+` + q + `\s*=\s*new\s+([A-Z][\w.]*)`),
	}
	if lang == Kotlin {
		res = []*regexp.Regexp{
			// t: Table, val t: Table?
			regexp.MustCompile(`\b` + q + `\s*:\s*([A-Z][\w.]*)`),
			// val t = Table(
			regexp.MustCompile(`\b(?:val|var)\s+` + q + `\s*=\s*([A-Z][\w.]*)\s*[(<]`),
		}
	}
	best, bestAt := "", -1
	for _, re := range res {
		for _, m := range re.FindAllSubmatchIndex(src, -1) {
			if !code[m[0]] || !code[m[2]] {
				continue
			}
			// Prefer the last declaration before at, then the first after.
			better := bestAt < 0 ||
				m[0] < at && (bestAt >= at || m[0] > bestAt) ||
				m[0] >= at && bestAt >= at && m[0] < bestAt
			if better {
				t := string(src[m[2]:m[3]])
				if k := strings.LastIndexByte(t, '.'); k >= 0 {
					t = t[k+1:]
				}
				best, bestAt = t, m[0]
			}
		}
	}
	return best
}

// kotlinTxReceiver is a Kotlin function whose receiver is a transaction:
// fun JdbcTransaction.name(, fun <T> Transaction.name(.
var kotlinTxReceiver = regexp.MustCompile(`\bfun\s+(?:<[^>]*>\s*)?(?:[\w.]*\.)?\w*Transaction\.\w+\s*\(`)

// kotlinTxReceivers returns the bodies of the Kotlin functions whose
// receiver is a transaction.
func kotlinTxReceivers(src []byte, code []bool) []Span {
	var spans []Span
	for _, m := range kotlinTxReceiver.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		e := CloseParen(src, code, m[1]-1)
		if e < 0 {
			continue
		}
		if b := bodyAfter(src, code, e); b >= 0 {
			spans = append(spans, braceSpan(src, code, b))
		}
	}
	return spans
}

// jvmTestAnnotation marks a JUnit (or kotlin.test) test method.
var jvmTestAnnotation = regexp.MustCompile(`@(?:Test|ParameterizedTest|RepeatedTest)\b`)

// jvmServerCalls are words in the names of the calls by which a Java or
// Kotlin test reaches a server: connecting, pools and data sources,
// running statements, transactions, migrations.
var jvmServerCalls = []string{"connect", "exec", "query", "statement", "transaction", "send", "open", "datasource",
	"pool", "session", "handle", "migrat", "flyway", "liquibase", "database", "start", "run", "await"}

// JVMOfflineTests returns the bodies of the Java and Kotlin test methods
// (@Test, @ParameterizedTest, @RepeatedTest) of a file that never reach a
// server: no call they make has a name with a word of jvmServerCalls. The
// connection strings such a test builds are only parsed and compared.
func JVMOfflineTests(src []byte, lits []Literal, comments []Comment) []Span {
	if !bytes.Contains(src, []byte("Test")) {
		return nil
	}
	code := CodeMask(src, lits, comments)
	var spans []Span
	for _, m := range jvmTestAnnotation.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		b := bodyAfter(src, code, m[1])
		if b < 0 {
			continue
		}
		body := braceSpan(src, code, b)
		offline := true
		for k := body.Start; k < body.End && offline; k++ {
			if !code[k] || src[k] != '(' {
				continue
			}
			e := k
			for e > body.Start && (src[e-1] == ' ' || src[e-1] == '\t') {
				e--
			}
			s := e
			for s > body.Start && (src[s-1] == '_' || isIdentChar(src[s-1])) {
				s--
			}
			name := strings.ToLower(string(src[s:e]))
			for _, w := range jvmServerCalls {
				if strings.Contains(name, w) {
					offline = false
					break
				}
			}
		}
		if offline {
			spans = append(spans, body)
		}
	}
	return spans
}
