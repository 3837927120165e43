package analyzer

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
)

// laravelSets are the keys of a Laravel pgsql connection (config/database.php)
// that Laravel's PostgresConnector turns into a session-level SET on each
// new connection: the parameter, and the statement it runs.
var laravelSets = map[string]struct{ param, stmt string }{
	"search_path":        {"search_path", "set search_path to …"},
	"schema":             {"search_path", "set search_path to …"},
	"isolation_level":    {"default_transaction_isolation", "set session characteristics as transaction isolation level …"},
	"timezone":           {"TimeZone", "set time zone '…'"},
	"synchronous_commit": {"synchronous_commit", "set synchronous_commit to '…'"},
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
	enclosing := func(i int) int {
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
		set, ok := laravelSets[lits[i].Value]
		if !ok {
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
		s.sessionSet(p, set.param, fmt.Sprintf("'%s' => '%s' in a pgsql connection makes Laravel run %s on each new connection", key, clip(value, 60), set.stmt),
			fmt.Sprintf("set %s per role or database (ALTER ROLE … SET %s = …) and remove '%s' from the connection's configuration", set.param, set.param, key))
	}
}
