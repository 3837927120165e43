package extract

import (
	"bytes"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// SessionCall is a call of a driver API that keeps state on the server
// connection without the SQL being in the application's code: a
// transaction-mode pooler hands that connection to other clients.
type SessionCall struct {
	// Start and End are the source range of the method name.
	Start, End int
	// API names the type and the method ("PgListener.listen",
	// "PgAdvisoryLock.acquire", "Migrator.run", "PgListener.connect").
	API string
	// Receiver is the expression the method is called on, as written
	// without "self." ("listener", "MIGRATOR"), or the call that made it
	// ("sqlx::migrate!()", "PgAdvisoryLock::new(…)").
	Receiver string
}

// sqlxMethods are the methods of sqlx's types that act on the server
// session: PgListener's LISTEN, PgAdvisoryLock's pg_advisory_lock, and the
// migrator's run, which takes a session-level advisory lock unless
// set_locking(false) turned that off.
var sqlxMethods = map[string][]string{
	"PgListener":     {"listen", "listen_all"},
	"PgAdvisoryLock": {"acquire", "try_acquire"},
	"Migrator":       {"run"},
}

// sqlxCtors are the associated functions that make a value of the type.
var sqlxCtors = map[string][]string{
	"PgListener":     {"connect", "connect_with"},
	"PgAdvisoryLock": {"new", "with_key"},
	"Migrator":       {"new"},
}

// SessionCalls returns the calls in src, a file of language lang, of
// driver APIs that keep session state. For Rust, in a file that names
// sqlx, they are: listen and listen_all on a PgListener, acquire and
// try_acquire on a PgAdvisoryLock, and run on a Migrator (sqlx::migrate!()
// or Migrator::new) whose locking the file does not turn off with
// set_locking(false); a PgListener::connect or connect_with counts when
// the file calls no listen method. A value is known by its type: made by
// one of the type's constructors (let l = PgListener::connect(…), or a
// method called on the constructor's result directly) or declared with it
// (l: &mut PgListener, static MIGRATOR: Migrator = …). Other languages
// have none.
func SessionCalls(lang Language, src []byte) []SessionCall {
	if lang != Rust || !bytes.Contains(src, []byte("sqlx")) ||
		!bytes.Contains(src, []byte("PgListener")) && !bytes.Contains(src, []byte("PgAdvisoryLock")) &&
			!bytes.Contains(src, []byte("migrate!")) && !bytes.Contains(src, []byte("Migrator")) {
		return nil
	}
	return rustSessionCalls(src, rustCodeTokens(src))
}

// rtok is one Rust code token: 'i' for an identifier or keyword, ':' for
// the path separator ::, 'c' for a single colon, and any other byte of
// punctuation for itself.
type rtok = csTok

// rustCodeTokens lists the code tokens of src, outside comments, string
// literals and char literals.
func rustCodeTokens(src []byte) []rtok {
	lx := lexRust(src)
	type span struct{ start, end int }
	skips := make([]span, 0, len(lx.pieces)+len(lx.comments))
	for _, p := range lx.pieces {
		skips = append(skips, span{p.Start, p.End})
	}
	for _, c := range lx.comments {
		skips = append(skips, span{c.Start, c.End})
	}
	sort.Slice(skips, func(a, b int) bool { return skips[a].start < skips[b].start })
	var out []rtok
	next := 0
	for i := 0; i < len(src); {
		for next < len(skips) && skips[next].end <= i {
			next++
		}
		if next < len(skips) && skips[next].start <= i {
			i = skips[next].end
			continue
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '\'':
			i = rustChar(src, i)
		case isIdentChar(c) && !(c >= '0' && c <= '9'):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			out = append(out, rtok{'i', i, j})
			i = j
		case c == ':' && i+1 < len(src) && src[i+1] == ':':
			out = append(out, rtok{':', i, i + 2})
			i += 2
		case c == ':':
			out = append(out, rtok{'c', i, i + 1})
			i++
		default:
			out = append(out, rtok{c, i, i + 1})
			i++
		}
	}
	return out
}

func rustSessionCalls(src []byte, t []rtok) []SessionCall {
	is := func(k int, kind byte) bool { return k >= 0 && k < len(t) && t[k].kind == kind }
	text := func(k int) string { return string(src[t[k].start:t[k].end]) }
	word := func(k int, w string) bool { return is(k, 'i') && text(k) == w }
	// match returns the index of the bracket that closes the one at k.
	match := func(k int) int { return matchTok(t, k) }
	// receiver returns the field path that ends at identifier k
	// (self.listener → "listener") and the index of its first token.
	receiver := func(k int) (string, int) { return dottedPath(src, t, k, "self.") }
	// boundTo returns the name a value made at token k is bound to:
	// let [mut] NAME [: T] = …, NAME = …, self.NAME = …, or "".
	boundTo := func(k int) string {
		if !is(k-1, '=') || is(k-2, '=') || is(k-2, '!') || is(k-2, '<') || is(k-2, '>') {
			return ""
		}
		if is(k-2, 'i') {
			r, from := receiver(k - 2)
			if word(from-1, "let") || word(from-1, "mut") || !is(from-1, 'c') {
				return r
			}
		}
		// A type annotation: walk back to the name before the colon.
		for m := k - 2; m >= 0 && m > k-12; m-- {
			if is(m, ';') || is(m, '{') || is(m, '}') {
				break
			}
			if is(m, 'c') && is(m-1, 'i') {
				return text(m - 1)
			}
		}
		return ""
	}
	// typeAt returns the sqlx type whose name is at k, if any.
	typeAt := func(k int) string {
		if !is(k, 'i') {
			return ""
		}
		if _, ok := sqlxMethods[text(k)]; ok {
			return text(k)
		}
		return ""
	}
	// macroMigrate reports whether k is the migrate of migrate!( or
	// sqlx::migrate!(.
	macroMigrate := func(k int) bool {
		return word(k, "migrate") && is(k+1, '!') && (is(k+2, '(') || is(k+2, '[')) && !is(k-1, '.')
	}
	vars := map[string]string{} // name → type
	unlocked := map[string]bool{}
	// chainStart lists, for each index of the '.' that follows a
	// constructor call, the type and the text it stands for.
	type made struct{ typ, text string }
	chains := map[int]made{}
	isFalse := func(open int) bool {
		return is(open, '(') && word(open+1, "false") && is(open+2, ')')
	}
	for k := range t {
		// A declaration: NAME: [&] [mut] [path::]TYPE.
		if typ := typeAt(k); typ != "" && !is(k+1, ':') {
			m := k
			for is(m-1, ':') && is(m-2, 'i') {
				m -= 2
			}
			for is(m-1, '&') || word(m-1, "mut") || is(m-1, '\'') {
				m--
			}
			if is(m-1, 'c') && is(m-2, 'i') {
				vars[text(m-2)] = typ
			}
		}
		var typ, made0 string
		var open, from int
		switch {
		case typeAt(k) != "" && is(k+1, ':') && is(k+2, 'i') && is(k+3, '('):
			if ctors := sqlxCtors[text(k)]; !slices.Contains(ctors, text(k+2)) {
				continue
			}
			typ, open = text(k), k+3
			from = k
			for is(from-1, ':') && is(from-2, 'i') {
				from -= 2
			}
			made0 = text(k) + "::" + text(k+2) + "(…)"
		case macroMigrate(k):
			typ, open = "Migrator", k+2
			from = k
			if is(k-1, ':') && word(k-2, "sqlx") {
				from = k - 2
			}
			made0 = string(src[t[from].start:t[k].end]) + "!()"
		default:
			continue
		}
		end := match(open)
		if v := boundTo(from); v != "" {
			vars[v] = typ
		} else if is(from-1, '(') && word(from-2, "new") && is(from-3, ':') &&
			(word(from-4, "Arc") || word(from-4, "Rc") || word(from-4, "Box")) {
			// let lock = Arc::new(PgAdvisoryLock::new(…)): the value
			// behind a shared pointer, whose methods are called through it.
			if v := boundTo(from - 4); v != "" {
				vars[v] = typ
			}
		}
		// Skip .await and ? after the constructor.
		m := end + 1
		for {
			if is(m, '.') && word(m+1, "await") {
				m += 2
				continue
			}
			if is(m, '?') {
				m++
				continue
			}
			break
		}
		if is(m, '.') {
			chains[m] = made{typ, made0}
		}
	}
	for k := range t {
		if word(k, "set_locking") && is(k-1, '.') && is(k-2, 'i') && isFalse(k+1) {
			r, _ := receiver(k - 2)
			unlocked[r] = true
		}
	}
	var calls []SessionCall
	listened := false
	var connects []SessionCall
	for k := range t {
		if !is(k, 'i') || !is(k-1, '.') || !is(k+1, '(') {
			continue
		}
		var typ, recv string
		if c, ok := chains[k-1]; ok {
			typ, recv = c.typ, c.text
			// Follow a chain of calls on the value: set_locking(false)
			// turns the migrator's lock off for the run after it.
			m := k
			off := false
			for is(m, 'i') && is(m+1, '(') && typ == "Migrator" && text(m) != "run" {
				if text(m) == "set_locking" && isFalse(m+1) {
					off = true
				}
				e := match(m + 1)
				if !is(e+1, '.') {
					break
				}
				m = e + 2
			}
			if typ == "Migrator" {
				if off || !word(m, "run") {
					continue
				}
				k = m
			}
		} else if is(k-2, 'i') {
			r, _ := receiver(k - 2)
			typ, recv = vars[r], r
			if typ == "" || typ == "Migrator" && unlocked[r] {
				continue
			}
		} else {
			continue
		}
		method := text(k)
		if !slices.Contains(sqlxMethods[typ], method) {
			continue
		}
		if typ == "PgListener" {
			listened = true
		}
		calls = append(calls, SessionCall{Start: t[k].start, End: t[k].end, API: typ + "." + method, Receiver: recv})
	}
	if !listened {
		for k := range t {
			if word(k, "PgListener") && is(k+1, ':') && is(k+2, 'i') && is(k+3, '(') && slices.Contains(sqlxCtors["PgListener"], text(k+2)) {
				connects = append(connects, SessionCall{Start: t[k+2].start, End: t[k+2].end, API: "PgListener." + text(k+2), Receiver: "PgListener"})
			}
		}
		calls = append(calls, connects...)
		sort.Slice(calls, func(a, b int) bool { return calls[a].Start < calls[b].Start })
	}
	return calls
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
