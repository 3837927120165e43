package traffic_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// FuzzAnalyzeCaptures analyzes arbitrary capture files: events in any
// order, with any numbers and names, must give findings or an error, never
// a panic.
func FuzzAnalyzeCaptures(f *testing.F) {
	files, _ := filepath.Glob("testdata/captures/*.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	header := `{"format":"pgpoolcheck-capture","version":"1.0","capture_id":"f","start":"2026-11-30T04:00:00Z"}` + "\n"
	f.Add([]byte(header + `{"t":5,"s":1,"tx":3,"ev":"execute","portal":"x"}` + "\n" + `{"t":1,"s":1,"tx":1,"ev":"bind","name":"nope"}` + "\n"))
	f.Add([]byte(header + `{"t":1,"s":1,"tx":-4,"ev":"query","sql":"SELECT pg_advisory_unlock(1); CLOSE ALL; RESET ALL"}` + "\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{"pgbouncer", "generic"} {
			cfg := &analyzer.Config{Target: rulesTarget(target)}
			rep, _, err := traffic.Analyze(cfg, []string{path}, traffic.Options{})
			if err != nil {
				return
			}
			for _, fd := range rep.Findings {
				if fd.Rule == "" || fd.Traffic == nil || fd.Traffic.Count < 1 {
					t.Fatalf("bad finding %+v", fd)
				}
			}
		}
	})
}

func rulesTarget(name string) rules.Target { return rules.Target(name) }
