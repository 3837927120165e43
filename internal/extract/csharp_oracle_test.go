package extract

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCSharpOracle compares the C# lexer's values with what the Mono C#
// compiler makes of the same literals: each public field of the files in
// testdata/oracle/csharp is one string expression, compiled by mcs and
// read back by testdata/oracle/csval.cs, and it must be the one literal
// the lexer finds in that field's initializer, with the same value. Mono's
// compiler knows C# 7, so raw strings and the later forms are covered by
// the table cases only. It skips when mcs or mono is not installed (Debian's
// mono-mcs; .ci/run installs it, and CI=true makes a missing one a
// failure).
func TestCSharpOracle(t *testing.T) {
	mcs, err := exec.LookPath("mcs")
	mono, err2 := exec.LookPath("mono")
	if err != nil || err2 != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("mcs or mono is not installed (CI=true: .ci/run installs mono-mcs)")
		}
		t.Skip("mcs or mono is not installed (install mono-mcs; .ci/run does)")
	}
	files, err := filepath.Glob("testdata/oracle/csharp/*.cs")
	if err != nil || len(files) == 0 {
		t.Fatalf("no C# oracle corpus: %v", err)
	}
	dir := t.TempDir()
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return out
	}
	csval := filepath.Join(dir, "csval.exe")
	run(mcs, "-nologo", "-out:"+csval, "testdata/oracle/csval.cs")
	compared := 0
	for i, file := range files {
		dll := filepath.Join(dir, "corpus"+string(rune('a'+i))+".dll")
		run(mcs, "-nologo", "-target:library", "-out:"+dll, file)
		var fields []struct{ name, value string }
		for _, line := range strings.Split(strings.TrimSpace(string(run(mono, csval, dll))), "\n") {
			name, enc, ok := strings.Cut(line, "\t")
			v, err := base64.StdEncoding.DecodeString(enc)
			if !ok || err != nil {
				t.Fatalf("%s: bad oracle line %q", file, line)
			}
			fields = append(fields, struct{ name, value string }{name, string(v)})
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lits, comments, _ := Literals(CSharp, src)
		if err := checkInvariants(src, lits, comments); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// Each field's initializer runs from its name to the next
		// field's name.
		decl := make([]int, len(fields)+1)
		decl[len(fields)] = len(src)
		for k, f := range fields {
			loc := regexp.MustCompile(`\b` + f.name + `\s*=`).FindIndex(src)
			if loc == nil {
				t.Fatalf("%s: field %s not found", file, f.name)
			}
			decl[k] = loc[1]
		}
		for k, f := range fields {
			var in []Literal
			for _, l := range lits {
				if l.Start >= decl[k] && l.Start < decl[k+1] {
					in = append(in, l)
				}
			}
			if len(in) != 1 {
				t.Errorf("%s: field %s: %d literals, want 1: %+v", file, f.name, len(in), in)
				continue
			}
			compared++
			if in[0].Value != f.value {
				t.Errorf("%s: field %s: value %q, compiler %q", file, f.name, in[0].Value, f.value)
			}
		}
	}
	t.Logf("%d files, %d values compared", len(files), compared)
}
