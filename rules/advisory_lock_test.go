package rules_test

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestAdvisoryLockAcrossCommit checks that a lock a procedure holds across
// its own COMMIT or ROLLBACK is told apart from one released within a
// transaction: the severity is the same, the message is not.
func TestAdvisoryLockAcrossCommit(t *testing.T) {
	const across, within = "across a COMMIT of the procedure", "releases it in the same transaction"
	proc := func(body string) string {
		return "CREATE PROCEDURE p() LANGUAGE plpgsql AS $$\nBEGIN\n" + body + "\nEND;\n$$;\n"
	}
	tests := []struct {
		name, src string
		want      []string // one message part per finding, in order
	}{
		{"commit in a loop", proc("PERFORM pg_advisory_lock(1);\nFOR i IN 1..3 LOOP\nCOMMIT;\nEND LOOP;\nPERFORM pg_advisory_unlock(1);"), []string{across}},
		{"rollback", proc("PERFORM pg_advisory_lock(1);\nROLLBACK;\nPERFORM pg_advisory_unlock_all();"), []string{across}},
		{"unlocked before the commit", proc("PERFORM pg_advisory_lock(1);\nPERFORM pg_advisory_unlock(1);\nCOMMIT;"), []string{within}},
		{"two locks, one crosses", proc("PERFORM pg_advisory_lock(1);\nCOMMIT;\nPERFORM pg_advisory_lock(2);\nPERFORM pg_advisory_unlock(2);\nPERFORM pg_advisory_unlock(1);"), []string{across, within}},
		{"never unlocked", proc("PERFORM pg_advisory_lock(1);\nCOMMIT;"), []string{"COMMIT does not release"}},
		{"top-level transaction", "BEGIN;\nSELECT pg_advisory_lock(1);\nSELECT pg_advisory_unlock(1);\nCOMMIT;\n", []string{within}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &analyzer.Config{Rules: []*rules.Rule{rules.AdvisoryLockSession}}
			res := cfg.AnalyzeSource("p.sql", []byte(tt.src))
			if len(res.Findings) != len(tt.want) {
				t.Fatalf("%d findings, want %d: %+v", len(res.Findings), len(tt.want), res.Findings)
			}
			for i, w := range tt.want {
				f := res.Findings[i]
				if !strings.Contains(f.Message, w) {
					t.Errorf("finding %d: %q lacks %q", i, f.Message, w)
				}
				if want := rules.Warning; w != "COMMIT does not release" && f.Severity != want {
					t.Errorf("finding %d: severity %s, want %s", i, f.Severity, want)
				}
			}
		})
	}
}
