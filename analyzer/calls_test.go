package analyzer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/fixture"
)

// TestCallFixtures scans each tree in testdata/calls as one scan: files
// that call routines created in other files of the tree carry "want"
// comments for the routines' findings at the call. Every finding at a
// call must point, as its first related location, at the CREATE statement
// of the routine it names.
func TestCallFixtures(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/calls/*")
	if len(dirs) < 4 {
		t.Fatalf("only %d call fixtures", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			inputs, err := analyzer.Collect([]string{dir}, analyzer.Walk{Wants: func(string) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 3} {
				byFile := map[string][]analyzer.Finding{}
				cfg := &analyzer.Config{Workers: workers}
				if _, err := cfg.Stream(inputs, func(fr analyzer.FileResult) error {
					byFile[fr.File] = append(byFile[fr.File], fr.Findings...)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				calls := 0
				for _, in := range inputs {
					src, err := os.ReadFile(in.Name)
					if err != nil {
						t.Fatal(err)
					}
					_, wants, err := fixture.Parse(src)
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range fixture.Compare(in.Name, byFile[in.Name], wants).Problems {
						t.Errorf("workers %d: %s", workers, p)
					}
					for _, f := range byFile[in.Name] {
						if !strings.HasPrefix(f.Message, "calls ") {
							if len(f.Related) > 0 {
								t.Errorf("%s:%d: %s has related locations %+v", f.File, f.Line, f.Rule, f.Related)
							}
							continue
						}
						calls++
						checkRelated(t, f)
					}
				}
				if calls == 0 && filepath.Base(dir) != "redefined" {
					t.Error("no finding at a call")
				}
			}
		})
	}
}

// checkRelated checks that each related location of a finding at a call
// is the CREATE statement of a routine the message names, the first one
// the routine called.
func checkRelated(t *testing.T, f analyzer.Finding) {
	t.Helper()
	if len(f.Related) == 0 {
		t.Errorf("%s:%d: %s at a call without related location", f.File, f.Line, f.Message)
		return
	}
	for i, r := range f.Related {
		src, err := os.ReadFile(r.File)
		if err != nil {
			t.Errorf("%s:%d: related %+v: %v", f.File, f.Line, r, err)
			continue
		}
		lines := strings.Split(string(src), "\n")
		if r.Line < 1 || r.Line > len(lines) || r.Column != 1 {
			t.Errorf("%s:%d: related %+v is not at the start of a line of %s", f.File, f.Line, r, r.File)
			continue
		}
		def := lines[r.Line-1]
		if !strings.HasPrefix(def, "CREATE ") {
			t.Errorf("%s:%d: related %+v is %q, not a CREATE statement", f.File, f.Line, r, def)
		}
		// The message names the routines in call order: the i-th related
		// location defines the i-th routine named.
		names := strings.Split(f.Message, "calls ")[1:]
		if i >= len(names) {
			t.Errorf("%s:%d: related %d for a message naming %d routines: %s", f.File, f.Line, i, len(names), f.Message)
			continue
		}
		name, _, _ := strings.Cut(names[i], "()")
		if !strings.Contains(def, " "+name+"(") {
			t.Errorf("%s:%d: related %d at %q does not define %s (%s)", f.File, f.Line, i, def, name, f.Message)
		}
		want := "defined here"
		if i > 0 {
			want = name + "() defined here"
		}
		if r.Message != want {
			t.Errorf("%s:%d: related %d message %q, want %q", f.File, f.Line, i, r.Message, want)
		}
	}
}
