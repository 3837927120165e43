package extract

import (
	"strings"
	"testing"
)

func TestNormalizePlaceholders(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $1"},
		{"SELECT data ?? 'k', data ?| array['a'], data ?& array['b'] FROM t WHERE id = ?", "SELECT data ? 'k', data ?| array['a'], data ?& array['b'] FROM t WHERE id = $1"},
		{"INSERT INTO t VALUES (%s, %d, %(name)s, %%s)", "INSERT INTO t VALUES ($1, $1, $1      , % s)"},
		{"SELECT a::int, b FROM t WHERE c = :c AND d = :d1 AND e[1:n] AND f = :1", "SELECT a::int, b FROM t WHERE c = $1 AND d = $1  AND e[1:n] AND f = $1"},
		{"SELECT * FROM t WHERE a = @name AND b = @p1 AND c @> d AND e <@ f AND g @@ h", "SELECT * FROM t WHERE a = $1    AND b = $1  AND c @> d AND e <@ f AND g @@ h"},
		{"SELECT $1, $2, $$ ? :x $$, $tag$ %s $tag$", "SELECT $1, $2, $$ ? :x $$, $tag$ %s $tag$"},
		{"SELECT '?', ':x', E'\\' ?', \"@col\" -- ? :x\n/* ? /* :y */ %s */ FROM t", "SELECT '?', ':x', E'\\' ?', \"@col\" -- ? :x\n/* ? /* :y */ %s */ FROM t"},
		{"SELECT 'it''s ?' , ?", "SELECT 'it''s ?' , $1"},
		{"SELECT 10 % 3, x%y", "SELECT 10 % 3, x%y"},
		{"SET search_path = " + Placeholder, "SET search_path = " + Placeholder},
		{"SET search_path = %v; SELECT %q, %i, %f, 10 %dx", "SET search_path = $1; SELECT $1, $1, $1, 10 %dx"},
		{"SELECT * FROM ${table} WHERE id = #{id} AND a = '${x}' AND b = ${c}", "SELECT * FROM " + Placeholder + " WHERE id = $1    AND a = '${x}' AND b = " + Placeholder},
		{"SELECT ${unterminated", "SELECT ${unterminated"},
		{"SELECT * FROM {} WHERE id = {0} AND a = {name} AND b = '{x}' AND c = {not a field}", "SELECT * FROM " + Placeholder + " WHERE id = " + Placeholder + " AND a = " + Placeholder + " AND b = '{x}' AND c = {not a field}"},
		{"", ""},
		{"?", "$1"},
		{"%", "%"},
		{"'unterminated ?", "'unterminated ?"},
	} {
		if got := NormalizePlaceholders(c.in); got != c.want {
			t.Errorf("NormalizePlaceholders(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestNormalizePlaceholdersMap(t *testing.T) {
	in := "INSERT INTO t VALUES (?, ?); SELECT data ?? 'k'; SET a = :a; LISTEN x"
	out, m := NormalizePlaceholdersMap(in)
	for _, word := range []string{"INSERT", "SELECT", "SET", "LISTEN", "VALUES"} {
		got := m.Original(strings.Index(out, word))
		if want := strings.Index(in, word); got != want {
			t.Errorf("%s: Original = %d, want %d", word, got, want)
		}
	}
	// A length-preserving normalization has no map.
	if _, m := NormalizePlaceholdersMap("SELECT %s, :abc, @p1"); m != nil {
		t.Errorf("want a nil map, got %+v", m)
	}
	var nilMap *OffsetMap
	if nilMap.Original(5) != 5 {
		t.Error("a nil map must be the identity")
	}
}
