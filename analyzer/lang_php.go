package analyzer

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// This file holds what scan knows of PHP: Laravel's database configuration,
// PDO's emulated prepares, and which literals are not SQL. Its lexer and
// recognisers are in internal/extract/php.go.

// laravelSets are the keys of a Laravel pgsql connection (config/database.php)
// that Laravel's PostgresConnector turns into a session-level SET on each
// new connection; session-set lists each as setting Laravel.<key>, with the
// parameter and the statement.
var laravelSets = map[string]bool{
	"search_path": true, "schema": true, "isolation_level": true, "timezone": true, "synchronous_commit": true,
}

// laravelConfig checks the connection arrays of a Laravel database
// configuration: in an array that holds 'driver' => 'pgsql', the keys of
// laravelSets are session-set findings at their own line, with the value
// given as a literal or as env()'s default.
func (s *settingsCheck) laravelConfig(src []byte, lits []extract.Literal, comments []extract.Comment) {
	if !strings.Contains(string(src), "pgsql") {
		return
	}
	skip := make([][2]int, 0, len(lits)+len(comments))
	for _, l := range lits {
		skip = append(skip, [2]int{l.Start, l.End})
	}
	for _, c := range comments {
		skip = append(skip, [2]int{c.Start, c.End})
	}
	// code marks the bytes outside literals and comments.
	code := make([]bool, len(src))
	for i := range code {
		code[i] = true
	}
	for _, r := range skip {
		for k := max(r[0], 0); k < r[1] && k < len(src); k++ {
			code[k] = false
		}
	}
	// arrow reports whether the literal at i is an array key: => follows.
	arrow := func(end int) (int, bool) {
		j := end
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r' || src[j] == '\n') {
			j++
		}
		return j + 2, j+1 < len(src) && src[j] == '=' && src[j+1] == '>'
	}
	// enclosing returns the offset of the bracket that opens the array
	// holding offset i: [ or array(.
	enclosing := func(i int) int { return phpEnclosing(src, code, i) }
	// valueOf returns the literal index that is the value after => at j:
	// a literal, or env('NAME', 'default')'s default.
	valueOf := func(j, from int) (int, bool) {
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r' || src[j] == '\n') {
			j++
		}
		for k := from; k < len(lits); k++ {
			if lits[k].Start == j {
				return k, true
			}
			if lits[k].Start > j {
				break
			}
		}
		if strings.HasPrefix(string(src[j:min(len(src), j+4)]), "env(") {
			n := 0
			for k := from; k < len(lits) && lits[k].Start < j+200; k++ {
				if lits[k].Start <= j {
					continue
				}
				if enclosing(lits[k].Start) != j+3 {
					break
				}
				n++
				if n == 2 {
					return k, true
				}
			}
		}
		return -1, false
	}
	// pgsqlArrays are the arrays (by opening offset) with 'driver' =>
	// 'pgsql'.
	pgsqlArrays := map[int]bool{}
	for i := range lits {
		if lits[i].Value != "driver" {
			continue
		}
		if j, ok := arrow(lits[i].End); ok {
			if k, ok := valueOf(j, i+1); ok && lits[k].Value == "pgsql" {
				pgsqlArrays[enclosing(lits[i].Start)] = true
			}
		}
	}
	if len(pgsqlArrays) == 0 {
		return
	}
	// Laravel reads search_path, else schema: one SET per array.
	hasSearchPath := map[int]bool{}
	for i := range lits {
		if _, ok := arrow(lits[i].End); ok && lits[i].Value == "search_path" {
			hasSearchPath[enclosing(lits[i].Start)] = true
		}
	}
	for i := range lits {
		if !laravelSets[lits[i].Value] {
			continue
		}
		j, ok := arrow(lits[i].End)
		arr := enclosing(lits[i].Start)
		if !ok || !pgsqlArrays[arr] || lits[i].Value == "schema" && hasSearchPath[arr] {
			continue
		}
		key := lits[i].Value
		lit, value := &lits[i], "…"
		if k, ok := valueOf(j, i+1); ok {
			lit, value = &lits[k], lits[k].Value
		}
		p := param{lit: lit, key: key, value: value, start: 0, end: len(lit.Value), valueAt: func(i int) int { return i }, text: fmt.Sprintf("'%s' => '%s'", key, value)}
		s.setting(p, "Laravel."+key, rules.SettingUse{Key: key, Value: value})
	}
}

// codeIndex returns the offsets in src of word w where it stands in
// code as a whole name (not part of a longer one).
func codeIndex(src []byte, code []bool, w string) []int {
	var out []int
	s := string(src)
	for from := 0; ; {
		k := strings.Index(s[from:], w)
		if k < 0 {
			return out
		}
		k += from
		from = k + len(w)
		if !code[k] || k > 0 && isWordByte(src[k-1]) || from < len(src) && isWordByte(src[from]) {
			continue
		}
		out = append(out, k)
	}
}

// phpBoolAfter reads the boolean that follows a PDO attribute constant
// ending at i, as an array entry (=> true) or setAttribute's second
// argument (, false): true, false, 1 or 0.
func phpBoolAfter(src []byte, i int) (value, ok bool) {
	j := i
	blank := func() {
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r' || src[j] == '\n') {
			j++
		}
	}
	blank()
	switch {
	case strings.HasPrefix(string(src[j:min(len(src), j+2)]), "=>"):
		j += 2
	case j < len(src) && src[j] == ',':
		j++
	default:
		return false, false
	}
	blank()
	rest := strings.ToLower(string(src[j:min(len(src), j+5)]))
	word := func(w string) bool {
		return strings.HasPrefix(rest, w) && (j+len(w) >= len(src) || !isWordByte(src[j+len(w)]))
	}
	switch {
	case word("true"), word("1"):
		return true, true
	case word("false"), word("0"):
		return false, true
	}
	return false, false
}

// codeParam is a param for a range of code that is no literal (a
// constant, a function name).
func codeParam(src []byte, start, end int, key, text string) param {
	lit := &extract.Literal{Value: string(src[start:end]), Start: start, End: end,
		Segments: []extract.Segment{{Value: 0, Source: start}}}
	return param{lit: lit, key: key, start: 0, end: end - start, valueAt: func(i int) int { return i }, text: text}
}

// phpPrepares checks the PHP driver APIs that keep named server-side
// prepared statements:
//   - pg_prepare and pg_send_prepare with a statement name that is not
//     "" (the unnamed statement);
//   - pdo_pgsql, which runs PDO::prepare() and PDO::query() as named
//     statements (pdo_stmt_…) prepared on their first execute, unless
//     PDO::ATTR_EMULATE_PREPARES or PDO::PGSQL_ATTR_DISABLE_PREPARES is
//     true. In a file that names pgsql: an explicit
//     ATTR_EMULATE_PREPARES => false, a new PDO("pgsql:…") and a Laravel
//     connection array with 'driver' => 'pgsql' in a database.php, when
//     the file turns neither attribute on.
func (s *settingsCheck) phpPrepares(src []byte, lits []extract.Literal, comments []extract.Comment) {
	if !strings.Contains(string(src), "pg_prepare") && !strings.Contains(string(src), "pg_send_prepare") &&
		!strings.Contains(string(src), "pgsql") {
		return
	}
	code := extract.CodeMask(src, lits, comments)
	litAt := map[int]int{}
	for i := range lits {
		litAt[lits[i].Start] = i
	}
	skipBlank := func(j int) int {
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r' || src[j] == '\n') {
			j++
		}
		return j
	}
	for _, fn := range []string{"pg_prepare", "pg_send_prepare"} {
		for _, k := range codeIndex(src, code, fn) {
			j := skipBlank(k + len(fn))
			if j >= len(src) || src[j] != '(' || k > 0 && (src[k-1] == '>' || src[k-1] == ':') {
				continue // not a call of the function (a method of that name)
			}
			// The statement name is the second argument: skip the
			// connection to the first comma at depth 0.
			depth := 0
			m := j + 1
			for ; m < len(src); m++ {
				if !code[m] {
					continue
				}
				c := src[m]
				if c == '(' || c == '[' {
					depth++
				} else if c == ')' || c == ']' {
					if depth == 0 {
						break
					}
					depth--
				} else if c == ',' && depth == 0 {
					break
				}
			}
			if m >= len(src) || src[m] != ',' {
				continue
			}
			n := skipBlank(m + 1)
			p := codeParam(src, k, k+len(fn), fn, fn+"(…)")
			name := "…"
			if li, ok := litAt[n]; ok {
				if lits[li].Value == "" {
					continue // the unnamed statement: replaced by the next one
				}
				name = lits[li].Value
				p = param{lit: &lits[li], key: fn, value: name, start: 0, end: len(name), valueAt: func(i int) int { return i }, text: fmt.Sprintf("%s(…, %q, …)", fn, name)}
			}
			s.setting(p, "PHP.pg_prepare", rules.SettingUse{Key: fn, Value: name})
		}
	}
	if !strings.Contains(string(src), "pgsql") {
		return
	}
	// The attributes: PDO::ATTR_EMULATE_PREPARES (also Pdo\Pgsql's and
	// the driver-specific PDO::PGSQL_ATTR_DISABLE_PREPARES).
	turnedOff := false // a true emulate or disable-prepares anywhere in the file
	var explicit []int
	for _, name := range []string{"ATTR_EMULATE_PREPARES", "PGSQL_ATTR_DISABLE_PREPARES", "ATTR_DISABLE_PREPARES"} {
		for _, k := range codeIndex(src, code, name) {
			v, ok := phpBoolAfter(src, k+len(name))
			if !ok {
				continue
			}
			if v {
				turnedOff = true
			} else if name == "ATTR_EMULATE_PREPARES" {
				explicit = append(explicit, k)
			}
		}
	}
	if turnedOff {
		return
	}
	for _, k := range explicit {
		from := k
		for from > 0 && (isWordByte(src[from-1]) || src[from-1] == ':' || src[from-1] == '\\') {
			from--
		}
		constant := string(src[from : k+len("ATTR_EMULATE_PREPARES")])
		s.setting(codeParam(src, from, k+len("ATTR_EMULATE_PREPARES"), "ATTR_EMULATE_PREPARES", constant+" => false"),
			"PDO.ATTR_EMULATE_PREPARES", rules.SettingUse{Key: constant})
	}
	if len(explicit) > 0 {
		return
	}
	for i := range lits {
		l := &lits[i]
		switch {
		case strings.HasPrefix(l.Value, "pgsql:") && strings.Contains(l.Value, "=") && newPDO(src, l.Start):
			// new PDO("pgsql:host=…"): a DSN literal.
			s.setting(param{lit: l, key: "dsn", value: l.Value, start: 0, end: len("pgsql:"), valueAt: func(i int) int { return i }, text: rules.Clip(l.Value, 60)},
				"PDO.dsn", rules.SettingUse{})
		case laravelDatabaseFile(s.name) && l.Value == "pgsql" && i > 0 && lits[i-1].Value == "driver" && arrowBetween(src, lits[i-1].End, l.Start) &&
			!laravelPooled(src, code, lits, phpEnclosing(src, code, lits[i-1].Start)):
			s.setting(param{lit: l, key: "driver", value: l.Value, start: 0, end: len(l.Value), valueAt: func(i int) int { return i }, text: "'driver' => 'pgsql'"},
				"Laravel.pgsql", rules.SettingUse{})
		}
	}
}

// arrowBetween reports whether only blanks and => lie between a and b.
func arrowBetween(src []byte, a, b int) bool {
	if a < 0 || b > len(src) || a > b {
		return false
	}
	return strings.TrimSpace(string(src[a:b])) == "=>"
}

// newPDO reports whether the literal at start is the first argument of
// new PDO(…) (or new \PDO(…)).
func newPDO(src []byte, start int) bool {
	if callee(src, start) != "pdo" {
		return false
	}
	i := start - 1
	for i >= 0 && src[i] != '(' {
		i--
	}
	i--
	for i >= 0 && (src[i] == ' ' || src[i] == '\t') {
		i--
	}
	i -= len("PDO") - 1
	if i < 0 {
		return false
	}
	i--
	if i >= 0 && src[i] == '\\' {
		i--
	}
	return i >= 3 && string(src[i-3:i+1]) == "new "
}

// laravelDatabaseFile reports whether a PHP file is Laravel's database
// configuration (config/database.php).
func laravelDatabaseFile(name string) bool {
	return strings.EqualFold(filepath.Base(name), "database.php")
}

// phpEnclosing returns the offset of the bracket that opens the array or
// argument list holding offset i ([ or "("), or -1; code marks the bytes
// outside literals and comments.
func phpEnclosing(src []byte, code []bool, i int) int {
	depth := 0
	for k := i - 1; k >= 0; k-- {
		if !code[k] {
			continue
		}
		switch src[k] {
		case ']', ')':
			depth++
		case '[', '(':
			if depth == 0 {
				return k
			}
			depth--
		}
	}
	return -1
}

// laravelPooled reports whether the Laravel connection array that opens at
// arr declares itself pooled: 'pooled' => true or a 'direct' endpoint
// given as an array, for which Laravel turns ATTR_EMULATE_PREPARES on
// itself ('pooled' => env('DB_POOLED', false) and 'direct' =>
// array_filter([…]) leave it off unless the environment says otherwise).
func laravelPooled(src []byte, code []bool, lits []extract.Literal, arr int) bool {
	for i := range lits {
		l := &lits[i]
		if l.Value != "pooled" && l.Value != "direct" || phpEnclosing(src, code, l.Start) != arr {
			continue
		}
		j := l.End
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r' || src[j] == '\n') {
			j++
		}
		if j+1 >= len(src) || src[j] != '=' || src[j+1] != '>' {
			continue
		}
		if l.Value == "direct" {
			// A literal array is never empty here; array_filter([…env…])
			// is empty unless the environment names a direct host.
			k := j + 2
			for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\r' || src[k] == '\n') {
				k++
			}
			if k < len(src) && src[k] == '[' || strings.HasPrefix(string(src[k:min(len(src), k+6)]), "array(") {
				return true
			}
			continue
		}
		if v, ok := phpBoolAfter(src, l.End); ok && v {
			return true
		}
	}
	return false
}

// phpNotSQLCall reports whether a PHP literal passed to function name (as
// callee returns it) is text a test matches rather than a statement sent:
// the argument of a mock's with(…) (PHPUnit's and Mockery's expected
// arguments: $pdo->expects('prepare')->with('set search_path …')).
func phpNotSQLCall(name string) bool {
	return name == "with" || name == "withargs"
}

// phpFunction matches a PHP function declaration and captures its name.
var phpFunction = regexp.MustCompile(`\bfunction\s+&?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// phpDataProviders returns the source ranges of the PHPUnit data
// providers of a file (methods named provide… or …Provider, from their
// declaration to the next function's): the rows they return are a test's
// input and expected text, not statements sent.
func phpDataProviders(src []byte) [][2]int {
	if !strings.Contains(string(src), "rovide") {
		return nil
	}
	locs := phpFunction.FindAllSubmatchIndex(src, -1)
	var out [][2]int
	for i, m := range locs {
		name := strings.ToLower(string(src[m[2]:m[3]]))
		if !strings.HasPrefix(name, "provide") && !strings.HasSuffix(name, "provider") {
			continue
		}
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, [2]int{m[0], end})
	}
	return out
}
