package extract

import (
	"bytes"
	"fmt"
	"testing"
)

func fuzzLanguage(f *testing.F, lang Language, cases []litCase) {
	for _, c := range cases {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		lits, comments, err := Literals(lang, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkInvariants(src, lits, comments); err != nil {
			t.Fatalf("%v\nsource: %q\nliterals: %+v", err, src, lits)
		}
	})
}

func FuzzGo(f *testing.F)         { fuzzLanguage(f, Go, goCases) }
func FuzzPython(f *testing.F)     { fuzzLanguage(f, Python, pythonCases) }
func FuzzRuby(f *testing.F)       { fuzzLanguage(f, Ruby, rubyCases) }
func FuzzJavaScript(f *testing.F) { fuzzLanguage(f, JavaScript, javascriptCases) }
func FuzzJava(f *testing.F)       { fuzzLanguage(f, Java, javaCases) }
func FuzzKotlin(f *testing.F)     { fuzzLanguage(f, Kotlin, kotlinCases) }
func FuzzElixir(f *testing.F)     { fuzzLanguage(f, Elixir, elixirCases) }

// FuzzNormalizePlaceholders checks that normalization never panics, leaves
// text without placeholder characters alone, and maps offsets monotonically
// inside the input.
func FuzzNormalizePlaceholders(f *testing.F) {
	for _, s := range []string{"SELECT ?", "a ?? b ?| c", "%(x)s %s %%", ":a::b", "@p1 @> x", "$$ ? $$ $1", "'?' \"?\" -- ?\n/* ? */", "#{a} ${b}", "{} {0} {x.y} {a b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		out, m := NormalizePlaceholdersMap(sql)
		if !bytes.ContainsAny([]byte(sql), "?%:@{") && out != sql {
			t.Fatalf("changed %q to %q", sql, out)
		}
		if m == nil && len(out) != len(sql) {
			t.Fatalf("length changed without a map: %q -> %q", sql, out)
		}
		prev := 0
		for i := 0; i <= len(out); i++ {
			o := m.Original(i)
			if o < 0 || o > len(sql) || o < prev || i < len(out) && o >= len(sql) {
				t.Fatal(fmt.Sprintf("Original(%d) = %d (prev %d) for %q -> %q", i, o, prev, sql, out))
			}
			prev = o
		}
	})
}
