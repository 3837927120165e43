package analyzer

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
)

func TestNormalizePlaceholders(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $1"},
		{"SELECT data ?| array['a'], data ?& array['b'], '?' FROM t WHERE x = ??", "SELECT data ?| array['a'], data ?& array['b'], '?' FROM t WHERE x = ?"},
		{"INSERT INTO t VALUES (%s, %(name)s, %d) -- %s", "INSERT INTO t VALUES (" + extract.Placeholder + ", " + extract.Placeholder + ", $1) -- %s"},
		{"CREATE TEMP TABLE %(t)s_tmp AS SELECT * FROM %(t)s", "CREATE TEMP TABLE " + extract.Placeholder + "_tmp AS SELECT * FROM " + extract.Placeholder},
		{"SELECT * FROM {{ .Table }} WHERE a = '{{x}}'", "SELECT * FROM " + extract.Placeholder + " WHERE a = '{{x}}'"},
		{"DO $$ BEGIN PERFORM set_config('v', '1', false) FROM {{ .T }}; END $$", "DO $$ BEGIN PERFORM set_config('v', '1', false) FROM " + extract.Placeholder + "; END $$"},
		{"SELECT '{\"a\": {\"b\": 1}}'::jsonb, {{x", "SELECT '{\"a\": {\"b\": 1}}'::jsonb, {{x"},
		{"LISTEN %s; CREATE TEMP TABLE tmp_%v (a int); SET ROLE %q", "LISTEN " + extract.Placeholder + "; CREATE TEMP TABLE tmp_" + extract.Placeholder + " (a int); SET ROLE " + extract.Placeholder},
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
		inName := make([]bool, len(got))
		for k := 0; ; {
			j := strings.Index(got[k:], extract.Placeholder)
			if j < 0 {
				break
			}
			for n := range len(extract.Placeholder) {
				inName[k+j+n] = true
			}
			k += j + len(extract.Placeholder)
		}
		for off := 0; off < len(got); off++ {
			if inName[off] {
				continue
			}
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

// FuzzNormalizePlaceholders checks that normalisation never panics, leaves
// text without placeholder characters alone, and maps every offset of its
// output back inside the input, in order.
func FuzzNormalizePlaceholders(f *testing.F) {
	for _, s := range []string{"SELECT ?", "a ?? b ?| c", "%(x)s %s %%", ":a::b", "@p1 @> x", "$$ ? $$ $1", "'?' \"?\" -- ?\n/* ? */", "{{ .X }} {y}", "SET ROLE %q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		out, m := normalizePlaceholders(sql)
		if !strings.ContainsAny(sql, "?%:@{") && out != sql {
			t.Fatalf("changed %q to %q", sql, out)
		}
		prev := 0
		for i := 0; i < len(out); i++ {
			o := m.back(i)
			if o < 0 || o >= len(sql) || o < prev {
				t.Fatalf("back(%d) = %d (previous %d) for %q -> %q", i, o, prev, sql, out)
			}
			prev = o
		}
	})
}
