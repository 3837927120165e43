package extract

import (
	"sort"
	"strings"
)

// NormalizePlaceholders rewrites the bind parameter styles of common
// drivers into PostgreSQL's `$1` so that the text parses as SQL:
//
//   - `?` becomes `$1`, except `??` (the JDBC escape for the `?` operator,
//     which becomes `?`) and the jsonb operators `?|` and `?&`;
//   - `%s`, `%d`, `%i`, `%f`, `%b`, `%t`, `%v`, `%q` (Python and Go
//     format verbs, when no letter follows) and `%(name)s` become `$1`, and
//     `%%` becomes `%`;
//   - `#{name}` (MyBatis and similar bind markers) becomes `$1`, and
//     `${name}` (text substitution, usually of a name) and str.format
//     fields `{}`, `{0}` and `{name}` become Placeholder;
//   - `:name` and `:1` become `$1` (`::` casts and slices such as `a[1:n]`
//     are left alone);
//   - `@name` and `@p1` become `$1` (operators such as `@>`, `<@` and `@@`
//     are left alone);
//   - `$1` and every other text stays as it is.
//
// String constants, quoted identifiers, dollar-quoted strings and comments
// are copied unchanged. Replacements keep the text's length where they can
// (padding with spaces), so that offsets usually stay valid; where they
// cannot (`?` grows by one byte, `??` shrinks by one, a short `${x}` or
// `{x}` grows to Placeholder), use NormalizePlaceholdersMap to map offsets
// back.
func NormalizePlaceholders(sql string) string {
	s, _ := NormalizePlaceholdersMap(sql)
	return s
}

// OffsetMap maps byte offsets in a normalized text back to the text it was
// produced from.
type OffsetMap struct {
	edits []edit
}

// edit records that new[newStart:newEnd] replaced old[oldStart:oldEnd].
type edit struct{ newStart, newEnd, oldStart, oldEnd int }

// Original returns the offset in the original text of the byte at offset
// off in the normalized text. Offsets inside a replacement map into the
// text it replaced. A nil map is the identity.
func (m *OffsetMap) Original(off int) int {
	if m == nil {
		return off
	}
	i := sort.Search(len(m.edits), func(i int) bool { return m.edits[i].newStart > off }) - 1
	if i < 0 {
		return off
	}
	e := m.edits[i]
	if off < e.newEnd {
		return e.oldStart + min(off-e.newStart, e.oldEnd-e.oldStart-1)
	}
	return e.oldEnd + off - e.newEnd
}

// NormalizePlaceholdersMap is NormalizePlaceholders returning also the
// offset map. The map is nil when the length of every replacement was kept,
// so that offsets in both texts are the same.
func NormalizePlaceholdersMap(sql string) (string, *OffsetMap) {
	var out strings.Builder
	out.Grow(len(sql) + 8)
	var m *OffsetMap
	copied := 0 // sql[:copied] has been written
	replace := func(from, to int, with string, keepLength bool) {
		out.WriteString(sql[copied:from])
		if pad := (to - from) - len(with); pad > 0 && keepLength {
			with += strings.Repeat(" ", pad)
		}
		newStart := out.Len()
		out.WriteString(with)
		copied = to
		if len(with) != to-from {
			if m == nil {
				m = &OffsetMap{}
			}
			m.edits = append(m.edits, edit{newStart, out.Len(), from, to})
		}
	}
	n := len(sql)
	for i := 0; i < n; {
		c := sql[i]
		prev := byte(0)
		if i > 0 {
			prev = sql[i-1]
		}
		switch {
		case c == '\'':
			escapes := prev == 'E' || prev == 'e'
			i = sqlQuoted(sql, i, '\'', escapes)
		case c == '"':
			i = sqlQuoted(sql, i, '"', false)
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			i = sqlBlockComment(sql, i)
		case (c == '$' || c == '#') && i+1 < n && sql[i+1] == '{':
			// Template placeholders left in the text: #{name} binds a value
			// (MyBatis, Ruby-style), ${name} substitutes text, often a name.
			j := strings.IndexByte(sql[i+2:], '}')
			if j < 0 || strings.IndexByte(sql[i+2:i+2+j], '\n') >= 0 {
				i++
				break
			}
			with := "$1"
			if c == '$' {
				with = Placeholder
			}
			replace(i, i+3+j, with, true)
			i += 3 + j
		case c == '{':
			// A str.format field such as {}, {0} or {table}.
			j := i + 1
			for j < n && (isIdentChar(sql[j]) && sql[j] < 0x80 || sql[j] == '.') && j-i < 64 {
				j++
			}
			if j < n && sql[j] == '}' {
				replace(i, j+1, Placeholder, true)
				i = j + 1
				break
			}
			i++
		case c == '$':
			if end := sqlDollarQuote(sql, i); end > i {
				i = end
			} else {
				i++
			}
		case isIdentStart(c):
			for i < n && (isIdentChar(sql[i]) || sql[i] == '$') {
				i++
			}
		case isDigit(c):
			for i < n && (isIdentChar(sql[i]) || sql[i] == '.') {
				i++
			}
		case c == '?':
			switch {
			case i+1 < n && sql[i+1] == '?':
				replace(i, i+2, "?", false)
				i += 2
			case i+1 < n && (sql[i+1] == '|' || sql[i+1] == '&'):
				i += 2
			default:
				replace(i, i+1, "$1", true)
				i++
			}
		case c == '%':
			if i+1 >= n {
				i++
				break
			}
			switch d := sql[i+1]; {
			case d == '%':
				replace(i, i+2, "%", true)
				i += 2
			case strings.IndexByte("sdbtivqf", d) >= 0 && !(i+2 < n && isIdentChar(sql[i+2])):
				replace(i, i+2, "$1", true)
				i += 2
			case d == '(':
				j := i + 2
				for j < n && sql[j] != ')' && sql[j] != '\n' && j-i < 80 {
					j++
				}
				if j+1 < n && sql[j] == ')' && (sql[j+1] == 's' || sql[j+1] == 'd' || sql[j+1] == 'b' || sql[j+1] == 't') {
					replace(i, j+2, "$1", true)
					i = j + 2
				} else {
					i++
				}
			default:
				i++
			}
		case c == ':':
			if i+1 < n && sql[i+1] == ':' {
				i += 2
				break
			}
			if i+1 < n && (isIdentStart(sql[i+1]) || isDigit(sql[i+1])) && sql[i+1] < 0x80 &&
				!(isIdentChar(prev) || prev == ']' || prev == ')' || prev == ':') {
				j := i + 1
				for j < n && isIdentChar(sql[j]) {
					j++
				}
				replace(i, j, "$1", true)
				i = j
				break
			}
			i++
		case c == '@':
			if i+1 < n && isIdentStart(sql[i+1]) && sql[i+1] < 0x80 &&
				!(isIdentChar(prev) || prev == '@' || prev == '<') {
				j := i + 1
				for j < n && isIdentChar(sql[j]) {
					j++
				}
				replace(i, j, "$1", true)
				i = j
				break
			}
			i++
		default:
			i++
		}
	}
	if copied == 0 {
		return sql, nil
	}
	out.WriteString(sql[copied:])
	return out.String(), m
}

// sqlQuoted skips a quoted string or identifier at sql[i], where a doubled
// quote stands for itself (and, with escapes, a backslash escapes).
func sqlQuoted(sql string, i int, q byte, escapes bool) int {
	for j := i + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			if escapes {
				j++
			}
		case q:
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(sql)
}

// sqlBlockComment skips a (nestable) block comment at sql[i].
func sqlBlockComment(sql string, i int) int {
	depth := 0
	for j := i; j+1 < len(sql); j++ {
		switch {
		case sql[j] == '/' && sql[j+1] == '*':
			depth++
			j++
		case sql[j] == '*' && sql[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(sql)
}

// sqlDollarQuote skips a dollar-quoted string at sql[i] and returns the
// offset after it, or i when the dollar does not open one (as in $1).
func sqlDollarQuote(sql string, i int) int {
	j := i + 1
	if j < len(sql) && isDigit(sql[j]) {
		return i
	}
	for j < len(sql) && isIdentChar(sql[j]) {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return i
	}
	tag := sql[i : j+1]
	k := strings.Index(sql[j+1:], tag)
	if k < 0 {
		return len(sql)
	}
	return j + 1 + k + len(tag)
}
