package analyzer

import (
	"sort"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
)

// offsetMap maps offsets of a rewritten text back to the original: each
// entry says that rewritten offset out corresponds to original offset in;
// a copied run (n < 0) continues one to one, a replacement of n original
// bytes maps all of its bytes into those n.
type offsetMap []mapEntry

type mapEntry struct{ out, in, n int }

func (m offsetMap) back(off int) int {
	i := sort.Search(len(m), func(i int) bool { return m[i].out > off }) - 1
	if i < 0 {
		return off
	}
	e := m[i]
	d := off - e.out
	if e.n >= 0 && d >= e.n {
		d = max(e.n-1, 0)
	}
	return e.in + d
}

// normalizePlaceholders rewrites the parameter markers of database drivers
// into PostgreSQL's $1 so that the parser accepts the statement: "?"
// (JDBC, Rails, database/sql drivers; "??" is an escaped "?", and "?|" and
// "?&" are jsonb operators), "%d" (printf; "%%" is "%"), "%s", "%(name)s",
// "%v" and "%q" (Python DB-API and printf formatting, of names as well as
// values) and template expressions "{{ … }}" (also inside dollar-quoted
// bodies): these become extract.Placeholder, an identifier, ":name" (named parameters; "::" casts are left alone) and "@name"
// (.NET style). Quoted strings, quoted identifiers, dollar quotes and
// comments are left alone. It returns the new text and the map back.
func normalizePlaceholders(s string) (string, offsetMap) {
	var out []byte
	var m offsetMap
	emit := func(in, n int, repl string) {
		m = append(m, mapEntry{len(out), in, n})
		out = append(out, repl...)
	}
	copied := 0 // s[copied:i] not yet in out
	flush := func(i int) {
		if copied < i {
			m = append(m, mapEntry{len(out), copied, -1})
			out = append(out, s[copied:i]...)
		}
	}
	isIdent := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = j + 1
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := i + 2
			for j+1 < len(s) && !(s[j] == '*' && s[j+1] == '/') {
				j++
			}
			i = j + 2
		case c == '$' && i+1 < len(s) && (s[i+1] == '$' || s[i+1] == '_' || s[i+1] >= 'a' && s[i+1] <= 'z' || s[i+1] >= 'A' && s[i+1] <= 'Z'):
			// Dollar quote $tag$ … $tag$.
			j := i + 1
			for j < len(s) && s[j] != '$' && isIdent(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '$' {
				tag := s[i : j+1]
				k := j + 1
				for k < len(s) && !(s[k] == '$' && len(s)-k >= len(tag) && s[k:k+len(tag)] == tag) {
					k++
				}
				// A template's {{ … }} inside a function or DO body is
				// never PL/pgSQL: replace it so that the body parses.
				for b := j + 1; b+1 < k; {
					e := templateEnd(s, b)
					if e < 0 || e > k {
						b++
						continue
					}
					flush(b)
					emit(b, e-b, extract.Placeholder)
					copied = e
					b = e
				}
				i = k + len(tag)
			} else {
				i = j
			}
		case c == '{' && templateEnd(s, i) > 0:
			// Go text/template, Jinja, Handlebars: {{ .Table }}.
			e := templateEnd(s, i)
			flush(i)
			emit(i, e-i, extract.Placeholder)
			i = e
			copied = i
		case c == '?':
			if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				i += 2
				continue
			}
			flush(i)
			if i+1 < len(s) && s[i+1] == '?' {
				emit(i, 2, "?")
				i += 2
			} else {
				emit(i, 1, "$1")
				i++
			}
			copied = i
		case c == '%' && i+1 < len(s):
			switch {
			case s[i+1] == '%':
				flush(i)
				emit(i, 2, "%")
				i += 2
				copied = i
			case s[i+1] == 's' || s[i+1] == 'v' || s[i+1] == 'q':
				// Printf-style formatting (Go's fmt.Sprintf, Python's %)
				// fills in names as often as values: LISTEN %s, SET ROLE
				// %s, CREATE TEMP TABLE %s. A name parses wherever a
				// value does, $1 only where a value does.
				flush(i)
				emit(i, 2, extract.Placeholder)
				i += 2
				copied = i
			case s[i+1] == 'd' || s[i+1] == 'b':
				flush(i)
				emit(i, 2, "$1")
				i += 2
				copied = i
			case s[i+1] == '(':
				j := i + 2
				for j < len(s) && s[j] != ')' {
					j++
				}
				if j+1 < len(s) && (s[j+1] == 's' || s[j+1] == 'd') {
					// Like %s, %(name)s formats names as well as values
					// ("CREATE TEMP TABLE %(table)s_tmp").
					flush(i)
					emit(i, j+2-i, extract.Placeholder)
					i = j + 2
					copied = i
				} else {
					i++
				}
			default:
				i++
			}
		case (c == ':' || c == '@') && i+1 < len(s) && (s[i+1] == '_' || s[i+1] >= 'a' && s[i+1] <= 'z' || s[i+1] >= 'A' && s[i+1] <= 'Z') &&
			(i == 0 || s[i-1] != ':' && !isIdent(s[i-1])):
			j := i + 1
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			flush(i)
			emit(i, j-i, "$1")
			i = j
			copied = i
		case c == ':' && i+1 < len(s) && s[i+1] == ':':
			i += 2
		default:
			i++
		}
	}
	flush(len(s))
	if len(m) == 0 {
		return s, nil
	}
	return string(out), m
}

// templateEnd returns the offset just past the "}}" that closes a template
// expression "{{ … }}" opening at s[i], or -1. The expression stays on one
// line and holds no quote of SQL, so "{{" inside other text is left alone.
func templateEnd(s string, i int) int {
	if i+1 >= len(s) || s[i] != '{' || s[i+1] != '{' {
		return -1
	}
	for j := i + 2; j+1 < len(s); j++ {
		switch s[j] {
		case '\n', ';':
			return -1
		case '}':
			if s[j+1] == '}' {
				return j + 2
			}
		}
	}
	return -1
}
