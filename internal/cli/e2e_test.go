package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected stdout.txt, stderr.txt and exit files")

// TestEndToEnd runs each case in testdata/e2e/<case>/: the file "args"
// holds the arguments (one per line), "stdin" (optional) standard input;
// "stdout.txt", "stderr.txt" and "exit" the expected results. Every case
// runs in testdata/inputs (or in the directory below it that the optional
// file "dir" names), so paths in args are relative to it.
func TestEndToEnd(t *testing.T) {
	cases, err := filepath.Glob("testdata/e2e/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no end-to-end cases")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			abs, _ := filepath.Abs(dir)
			argText, err := os.ReadFile(filepath.Join(abs, "args"))
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			for _, a := range strings.Split(strings.TrimRight(string(argText), "\n"), "\n") {
				if a != "" {
					args = append(args, a)
				}
			}
			stdin, _ := os.ReadFile(filepath.Join(abs, "stdin"))
			inputs, _ := filepath.Abs("testdata/inputs")
			if d, err := os.ReadFile(filepath.Join(abs, "dir")); err == nil {
				inputs = filepath.Join(inputs, strings.TrimSpace(string(d)))
			}
			t.Chdir(inputs)
			t.Setenv("NO_COLOR", "")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, &env{
				stdin: bytes.NewReader(stdin), stdout: &stdout, stderr: &stderr,
				getenv: func(k string) string { return "" },
			})
			check := func(name, got string) {
				path := filepath.Join(abs, name)
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if string(want) != got {
					t.Errorf("%s differs:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
				}
			}
			check("stdout.txt", stdout.String())
			check("stderr.txt", stderr.String())
			check("exit", strconv.Itoa(code)+"\n")
		})
	}
}
