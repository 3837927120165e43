package baseline

import (
	"reflect"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

func finding(rule, file, fp string, line int) analyzer.Finding {
	return analyzer.Finding{Rule: rule, File: file, Fingerprint: fp, Line: line, Message: rule + " at " + file}
}

// TestBatchesMatchWhole checks that a Builder and a Matcher fed one file
// at a time give what Build and Filter give over all the findings: the
// same entries with the same occurrence numbers, the same findings kept,
// the same count hidden and the same stale entries. "./a.sql" and "a.sql"
// are one file for the baseline although a scan delivers them apart.
func TestBatchesMatchWhole(t *testing.T) {
	old := [][]analyzer.Finding{
		{finding("listen", "./a.sql", "f1", 1), finding("listen", "./a.sql", "f1", 2)},
		{finding("listen", "a.sql", "f1", 9), finding("session-set", "a.sql", "f2", 10)},
		{finding("temp-table", "b.sql", "f3", 1)},
	}
	now := [][]analyzer.Finding{
		{finding("listen", "./a.sql", "f1", 3)},
		{finding("listen", "a.sql", "f1", 4), finding("listen", "a.sql", "f1", 5), finding("listen", "a.sql", "f1", 6)},
		{},
		{finding("session-role", "c.sql", "f4", 1)},
	}
	flat := func(batches [][]analyzer.Finding) []analyzer.Finding {
		var out []analyzer.Finding
		for _, b := range batches {
			out = append(out, b...)
		}
		return out
	}

	var bb Builder
	for _, b := range old {
		bb.Add(b)
	}
	base := Build(flat(old))
	if !reflect.DeepEqual(bb.File(), base) {
		t.Fatalf("Builder:\n%+v\nBuild:\n%+v", bb.File(), base)
	}
	if n := base.Entries[2].Occurrence; n != 3 {
		t.Errorf("third listen in a.sql has occurrence %d, want 3", n)
	}

	wantKept, wantHidden, wantStale := base.Filter(flat(now))
	m := base.Matcher()
	var kept []analyzer.Finding
	for _, b := range now {
		kept = append(kept, m.Filter(b)...)
	}
	if !reflect.DeepEqual(kept, wantKept) || m.Hidden() != wantHidden || !reflect.DeepEqual(m.Stale(), wantStale) {
		t.Errorf("batches: kept %v hidden %d stale %v; whole: kept %v hidden %d stale %v",
			kept, m.Hidden(), m.Stale(), wantKept, wantHidden, wantStale)
	}
	// Three listen entries hide three of the four listens; session-set and
	// temp-table are gone (stale); session-role is new.
	if wantHidden != 3 || len(wantKept) != 2 || len(wantStale) != 2 {
		t.Errorf("whole: kept %v hidden %d stale %v", wantKept, wantHidden, wantStale)
	}
	if empty := (&Builder{}).File(); empty.Entries == nil || len(empty.Entries) != 0 {
		t.Errorf("empty baseline entries = %#v, want []", empty.Entries)
	}
}
