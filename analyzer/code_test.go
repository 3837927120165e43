package analyzer_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/fixture"
)

// TestCodeFixtures scans the application-code fixtures in testdata/code,
// whose offending lines carry "// want RULE" or "# want RULE" comments (or
// "-- want RULE" inside a multi-line SQL literal).
func TestCodeFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/code/*")
	if len(files) == 0 {
		t.Fatal("no code fixtures")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			lang, ok := extract.LanguageFor(path)
			if !ok {
				t.Fatalf("%s: not a known language", path)
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			target, wants, err := fixture.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			cfg := &analyzer.Config{Target: target}
			res, err := cfg.AnalyzeCode(path, src, lang)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range fixture.Compare(path, res.Findings, wants).Problems {
				t.Error(p)
			}
		})
	}
}
