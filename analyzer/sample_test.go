package analyzer_test

import (
	"os"
	"sort"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/fixture"
)

// TestSampleCorpus scans testdata/sample, the realistic corpus the README
// runs, whose files carry "-- want" annotations, and checks every finding
// against them. It logs precision and recall per rule.
func TestSampleCorpus(t *testing.T) {
	inputs, err := analyzer.Collect([]string{"../testdata/sample"}, analyzer.Walk{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) < 10 {
		t.Fatalf("only %d sample files", len(inputs))
	}
	cfg := &analyzer.Config{}
	rep, err := cfg.Scan(inputs)
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string][]analyzer.Finding{}
	for _, f := range rep.Findings {
		byFile[f.File] = append(byFile[f.File], f)
	}
	matched, unexpected, missing := map[string]int{}, map[string]int{}, map[string]int{}
	for _, in := range inputs {
		src, err := os.ReadFile(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		target, wants, err := fixture.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if target != cfg.Target && target != "pgbouncer" {
			t.Fatalf("%s: sample files use the default target", in.Name)
		}
		r := fixture.Compare(in.Name, byFile[in.Name], wants)
		for _, p := range r.Problems {
			t.Error(p)
		}
		for k, v := range r.Matched {
			matched[k] += v
		}
		for k, v := range r.Unexpected {
			unexpected[k] += v
		}
		for k, v := range r.Missing {
			missing[k] += v
		}
	}
	var ids []string
	for id := range matched {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		tp := float64(matched[id])
		t.Logf("%-22s found %3d  precision %.2f  recall %.2f", id, matched[id],
			tp/(tp+float64(unexpected[id])), tp/(tp+float64(missing[id])))
	}
}
