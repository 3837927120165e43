package analyzer

import (
	"strings"
	"testing"
)

func TestNormalizePlaceholders(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $1"},
		{"SELECT data ?| array['a'], data ?& array['b'], '?' FROM t WHERE x = ??", "SELECT data ?| array['a'], data ?& array['b'], '?' FROM t WHERE x = ?"},
		{"INSERT INTO t VALUES (%s, %(name)s, %d) -- %s", "INSERT INTO t VALUES ($1, $1, $1) -- %s"},
		{"SELECT 100%% FROM t", "SELECT 100% FROM t"},
		{"SELECT pg_advisory_lock(:id), a::text, ':x' FROM t WHERE b = :b_2", "SELECT pg_advisory_lock($1), a::text, ':x' FROM t WHERE b = $1"},
		{"SELECT @p1, a @> b, \"@x\" FROM t", "SELECT $1, a @> b, \"@x\" FROM t"},
		{"SELECT $1, $$ ? $$, $q$ :x $q$", "SELECT $1, $$ ? $$, $q$ :x $q$"},
		{"SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1"},
	}
	for _, tt := range tests {
		got, m := normalizePlaceholders(tt.in)
		if got != tt.want {
			t.Errorf("normalizePlaceholders(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			continue
		}
		// Every byte that was not rewritten maps back to the same byte.
		for off := 0; off < len(got); off++ {
			in := m.back(off)
			if in < 0 || in >= len(tt.in) {
				t.Fatalf("%q: back(%d) = %d out of range", tt.in, off, in)
			}
			if got[off] != tt.in[in] && !strings.ContainsRune("$1%?", rune(got[off])) {
				t.Errorf("%q: out[%d]=%q maps to in[%d]=%q", tt.in, off, got[off], in, tt.in[in])
			}
		}
	}
}
