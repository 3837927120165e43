package rules_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// TestInertIsSafe runs every rule alone on every fixture statement that
// Inert says needs no rules, and on the Relevant keyword filter's
// rejects: neither may hide a finding.
func TestInertIsSafe(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.sql")
	sample, _ := filepath.Glob("../testdata/sample/*/*.sql")
	files = append(files, sample...)
	var checks []*rules.Rule
	for _, r := range rules.All() {
		if r.Check != nil {
			checks = append(checks, r)
		}
	}
	funcs := rules.InterestingFuncs(checks)
	inert := 0
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range sqlparse.Split(src).Chunks {
			for _, s := range sqlparse.ParseChunk(src, c) {
				st := rules.NewStmt(&s, funcs)
				isInert := rules.Inert(st)
				relevant := rules.Relevant(strings.ToLower(s.Text))
				if !isInert && relevant {
					continue
				}
				inert++
				g := &rules.Group{Stmts: []*rules.Stmt{st}}
				for _, r := range checks {
					rules.NewPass(r, rules.Generic, g, func(f rules.Finding) {
						t.Errorf("%s: %q is inert=%v relevant=%v but %s reports: %s", path, s.Text, isInert, relevant, r.ID, f.Message)
					}).Run()
				}
			}
		}
	}
	if inert < 50 {
		t.Errorf("only %d inert statements checked", inert)
	}
}

// TestFuncsInModel checks that the model looks for the calls of every
// function a rule names: effects.Stmt walks a statement for calls only
// when its text names one of effects.Funcs.
func TestFuncsInModel(t *testing.T) {
	for _, r := range rules.All() {
		for _, f := range r.Funcs {
			if !slices.Contains(effects.Funcs, f) {
				t.Errorf("rule %s looks for %s, which effects.Funcs lacks", r.ID, f)
			}
		}
	}
}
