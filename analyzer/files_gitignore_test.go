package analyzer_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

// TestCollectGitignoreWarning: a walk that cannot ask git about a
// directory inside a work tree says so; outside one it says nothing.
func TestCollectGitignoreWarning(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed for this test")
		}
		t.Skip("git not installed")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		path  string // PATH; "" keeps the test's
		want  string // in the warning; "" for none
	}{
		{"outside a work tree", func(*testing.T, string) {}, "", ""},
		{"outside a work tree, no git", func(*testing.T, string) {}, "empty", ""},
		{"work tree", func(t *testing.T, dir string) {
			if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
		}, "", ""},
		{"work tree, no git", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "empty", "git is not installed"},
		{"a .git git refuses", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "", "git check-ignore: fatal: not a git repository"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			if err := os.WriteFile(filepath.Join(dir, "a.sql"), []byte("SELECT 1;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.path == "empty" {
				t.Setenv("PATH", t.TempDir())
			}
			var warnings []string
			in, err := analyzer.Collect([]string{dir}, analyzer.Walk{Gitignore: true, Warn: func(m string) { warnings = append(warnings, m) }})
			if err != nil || len(in) != 1 {
				t.Fatalf("Collect: %v, %v", in, err)
			}
			switch {
			case tc.want == "" && len(warnings) > 0:
				t.Errorf("warnings %q, want none", warnings)
			case tc.want != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.want) || !strings.Contains(warnings[0], ".gitignore is not honoured")):
				t.Errorf("warnings %q, want one saying %q", warnings, tc.want)
			}
		})
	}
}
