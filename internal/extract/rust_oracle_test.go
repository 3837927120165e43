package extract

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRustOracle compares the Rust lexer's values with what rustc makes of
// the same literals: each `pub const NAME: &str = …;` of the files in
// testdata/oracle/rust is one string expression (plain, escaped, raw,
// concat!), compiled into a program that prints every value, and it must
// be the one literal the lexer finds in that constant's initializer, with
// the same value. It skips when rustc is not installed (Debian's rustc;
// .ci/run installs it, and CI=true makes a missing one a failure).
func TestRustOracle(t *testing.T) {
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("rustc is not installed (CI=true: .ci/run installs rustc)")
		}
		t.Skip("rustc is not installed (install rustc; .ci/run does)")
	}
	files, err := filepath.Glob("testdata/oracle/rust/*.rs")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Rust oracle corpus: %v", err)
	}
	constRE := regexp.MustCompile(`(?m)^pub const ([A-Z0-9_]+): &str =`)
	dir := t.TempDir()
	compared := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		locs := constRE.FindAllSubmatchIndex(src, -1)
		if len(locs) == 0 {
			t.Fatalf("%s: no constants", file)
		}
		var main bytes.Buffer
		fmt.Fprintf(&main, "#![allow(dead_code)]\nmod corpus {\n    include!(%q);\n}\nfn main() {\n", abs)
		for _, l := range locs {
			name := string(src[l[2]:l[3]])
			fmt.Fprintf(&main, "    print!(\"%s\\t\");\n    for b in corpus::%s.bytes() { print!(\"{:02x}\", b); }\n    println!();\n", name, name)
		}
		main.WriteString("}\n")
		mainRS := filepath.Join(dir, "main.rs")
		if err := os.WriteFile(mainRS, main.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "values")
		if out, err := exec.Command(rustc, "--edition", "2021", "-o", bin, mainRS).CombinedOutput(); err != nil {
			t.Fatalf("rustc: %v\n%s", err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		values := map[string]string{}
		for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			name, h, ok := strings.Cut(line, "\t")
			v, err := hex.DecodeString(h)
			if !ok || err != nil {
				t.Fatalf("bad oracle line %q", line)
			}
			values[name] = string(v)
		}
		lits, comments, _ := Literals(Rust, src)
		if err := checkInvariants(src, lits, comments); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for k, l := range locs {
			name := string(src[l[2]:l[3]])
			from, to := l[1], len(src)
			if k+1 < len(locs) {
				to = locs[k+1][0]
			}
			var in []Literal
			for _, lit := range lits {
				if lit.Start >= from && lit.Start < to {
					in = append(in, lit)
				}
			}
			if len(in) != 1 {
				t.Errorf("%s: %s: %d literals, want 1: %+v", file, name, len(in), in)
				continue
			}
			want, ok := values[name]
			if !ok {
				t.Errorf("%s: %s: no value from rustc", file, name)
				continue
			}
			compared++
			if in[0].Value != want {
				t.Errorf("%s: %s: value %q, rustc %q", file, name, in[0].Value, want)
			}
		}
	}
	if compared == 0 {
		t.Fatal("no value compared")
	}
	t.Logf("%d files, %d values compared", len(files), compared)
}
