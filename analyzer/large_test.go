package analyzer

import (
	"bytes"
	"flag"
	"os"
	"runtime"
	"testing"
)

var writeDump = flag.String("write-dump", "", "also write the generated 50 MB dump to this file (for measuring the CLI)")

// TestLargeDump scans a generated 50 MB pg_dump-like file: every statement
// is seen, COPY data is skipped, and the findings are exactly the planted
// ones.
func TestLargeDump(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 50 MB scan takes a few seconds")
	}
	src := dumpCorpus(50 << 20)
	if *writeDump != "" {
		if err := os.WriteFile(*writeDump, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tables := bytes.Count(src, []byte("\nCREATE TABLE public.orders_"))
	planted := bytes.Count(src, []byte("\nLISTEN orders_"))
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cfg := &Config{}
	res := cfg.AnalyzeSource("dump.sql", src)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("%d bytes, %d statements, %d findings, %d MiB allocated in total", len(src), res.Statements, len(res.Findings), (after.TotalAlloc-before.TotalAlloc)>>20)

	// 10 header statements; per table 14 statements; 3 more every 50 tables.
	if want := 10 + 14*tables + 3*planted; res.Statements != want {
		t.Errorf("statements = %d, want %d", res.Statements, want)
	}
	byRule := map[string]int{}
	for _, f := range res.Findings {
		byRule[f.Rule]++
	}
	want := map[string]int{
		"session-set":           10, // the dump header's SETs and set_config
		"advisory-lock-session": planted,
		"listen":                planted,
		"temp-table":            planted,
	}
	for rule, n := range want {
		if byRule[rule] != n {
			t.Errorf("%s: %d findings, want %d", rule, byRule[rule], n)
		}
	}
	if len(byRule) != len(want) {
		t.Errorf("unexpected rules in %v", byRule)
	}
}
