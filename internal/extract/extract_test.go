package extract

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// litCase is one table test: the source, the literal values expected in
// order, and optionally the comment texts expected in order.
type litCase struct {
	name     string
	src      string
	want     []string
	comments []string
}

// anchors are words whose position is checked in every expected literal
// that contains them: the value offset must map to the same word in the
// source.
var anchors = []string{"SELECT", "INSERT", "UPDATE", "FROM", "WHERE", "SET", "LISTEN", "BEGIN"}

func runCases(t *testing.T, lang Language, cases []litCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			lits, comments, err := Literals(lang, src)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkInvariants(src, lits, comments); err != nil {
				t.Fatalf("invariant: %v\nliterals: %#v", err, lits)
			}
			got := make([]string, 0, len(lits))
			for _, l := range lits {
				got = append(got, l.Value)
			}
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("values\n got: %q\nwant: %q", got, want)
			}
			if tc.comments != nil {
				texts := []string{}
				for _, c := range comments {
					texts = append(texts, c.Text)
				}
				if !reflect.DeepEqual(texts, tc.comments) {
					t.Fatalf("comments\n got: %q\nwant: %q", texts, tc.comments)
				}
			}
			for _, l := range lits {
				for _, a := range anchors {
					k := strings.Index(l.Value, a)
					if k < 0 {
						continue
					}
					off := l.SourceOffset(k)
					if !bytes.HasPrefix(src[off:], []byte(a)) {
						t.Errorf("%q in %q maps to offset %d: %q", a, l.Value, off, src[off:min(len(src), off+10)])
					}
				}
			}
		})
	}
}

// checkInvariants verifies what every result must satisfy, whatever the
// input: ranges inside the file, segments sorted and inside their literal,
// and verbatim bytes mapping to themselves.
func checkInvariants(src []byte, lits []Literal, comments []Comment) error {
	for n, l := range lits {
		if l.Start < 0 || l.Start > l.End || l.End > len(src) {
			return fmt.Errorf("literal %d: range [%d,%d) outside file of %d bytes", n, l.Start, l.End, len(src))
		}
		if len(l.Segments) == 0 || l.Segments[0].Value != 0 {
			return fmt.Errorf("literal %d: first segment %v", n, l.Segments)
		}
		for k, s := range l.Segments {
			if s.Source < l.Start || s.Source >= l.End {
				return fmt.Errorf("literal %d: segment %d source %d outside [%d,%d)", n, k, s.Source, l.Start, l.End)
			}
			if k > 0 {
				p := l.Segments[k-1]
				if s.Value <= p.Value || s.Source <= p.Source {
					return fmt.Errorf("literal %d: segment %d %v not after %v", n, k, s, p)
				}
			}
			if s.Value >= len(l.Value) && !(k == 0 && l.Value == "") {
				return fmt.Errorf("literal %d: segment %d value %d past value of %d bytes", n, k, s.Value, len(l.Value))
			}
		}
		inPlaceholder := make([]bool, len(l.Value))
		for from := 0; ; {
			k := strings.Index(l.Value[from:], Placeholder)
			if k < 0 {
				break
			}
			for m := from + k; m < from+k+len(Placeholder); m++ {
				inPlaceholder[m] = true
			}
			from += k + len(Placeholder)
		}
		escapes := bytes.IndexByte(src[l.Start:l.End], '\\') >= 0
		prev := -1
		for i := 0; i < len(l.Value); i++ {
			off := l.SourceOffset(i)
			if off < l.Start || off >= l.End || off < prev {
				return fmt.Errorf("literal %d: SourceOffset(%d) = %d (previous %d, range [%d,%d))", n, i, off, prev, l.Start, l.End)
			}
			prev = off
			if escapes || inPlaceholder[i] {
				continue
			}
			if src[off] != l.Value[i] && !(l.Value[i] == '\n' && src[off] == '\r') {
				return fmt.Errorf("literal %d: value[%d] = %q but src[%d] = %q", n, i, l.Value[i], off, src[off])
			}
		}
	}
	for n, c := range comments {
		if c.Start < 0 || c.Start > c.End || c.End > len(src) || len(c.Text) > c.End-c.Start {
			return fmt.Errorf("comment %d: range [%d,%d) text %q", n, c.Start, c.End, c.Text)
		}
	}
	return nil
}

func TestLanguageFor(t *testing.T) {
	for path, want := range map[string]Language{
		"a.go": Go, "x/y.py": Python, "a.rb": Ruby, "Rakefile.rake": Ruby,
		"a.js": JavaScript, "a.mjs": JavaScript, "a.cjs": JavaScript, "a.jsx": JavaScript,
		"a.ts": JavaScript, "a.TSX": JavaScript, "A.java": Java, "a.kt": Kotlin,
		"build.gradle.kts": Kotlin, "a.ex": Elixir, "a_test.exs": Elixir,
		"a.php": PHP, "src/lib.rs": Rust, "Jobs/JobQueue.cs": CSharp,
	} {
		if got, ok := LanguageFor(path); !ok || got != want {
			t.Errorf("LanguageFor(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
	for _, path := range []string{"a.sql", "Makefile", "a.c", "go"} {
		if got, ok := LanguageFor(path); ok {
			t.Errorf("LanguageFor(%q) = %q, want none", path, got)
		}
	}
}

func TestUnknownLanguage(t *testing.T) {
	if _, _, err := Literals("cobol", []byte(`"x"`)); err == nil {
		t.Fatal("want an error for an unknown language")
	}
}

func TestSourceOffset(t *testing.T) {
	src := "q := \"SELECT *\\n\" +\n\t\"FROM t WHERE id = \" + id"
	lits, _, _ := Literals(Go, []byte(src))
	if len(lits) != 1 {
		t.Fatalf("got %d literals", len(lits))
	}
	l := lits[0]
	if want := "SELECT *\nFROM t WHERE id = " + Placeholder; l.Value != want {
		t.Fatalf("value %q, want %q", l.Value, want)
	}
	for _, c := range []struct {
		needle string
		at     int // occurrence in source
	}{{"SELECT", strings.Index(src, "SELECT")}, {"FROM", strings.Index(src, "FROM")}, {"\n", strings.Index(src, `\n`)}, {Placeholder, strings.LastIndex(src, "id")}} {
		if got := l.SourceOffset(strings.Index(l.Value, c.needle)); got != c.at {
			t.Errorf("SourceOffset(%q) = %d, want %d", c.needle, got, c.at)
		}
	}
	if l.Start != strings.Index(src, `"`) || l.End != len(src) {
		t.Errorf("range [%d,%d)", l.Start, l.End)
	}
	// Offsets inside the placeholder stay inside the operand.
	last := l.SourceOffset(len(l.Value) - 1)
	if last >= len(src) || last < strings.LastIndex(src, "id") {
		t.Errorf("last byte maps to %d", last)
	}
}

// TestLongChain joins many pieces; joining must stay linear in the size of
// the value (a quadratic join takes seconds here).
func TestLongChain(t *testing.T) {
	piece := "\"SELECT 1234567890 1234567890 1234567890 1234567890\" +\n"
	src := []byte("x := " + strings.Repeat(piece, 20000) + "\"\"")
	lits, comments, _ := Literals(Go, src)
	if len(lits) != 1 || len(lits[0].Value) != 20000*(len(piece)-5) || len(lits[0].Segments) != 20000 {
		t.Fatalf("got %d literals", len(lits))
	}
	if err := checkInvariants(src, lits, comments); err != nil {
		t.Fatal(err)
	}
}
