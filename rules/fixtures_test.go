package rules_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/fixture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// Fixtures live in testdata/<rule-id>/*.sql, annotated as package
// internal/fixture describes. Files named clean*.sql hold no wants.

func TestFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
		for _, path := range files {
			t.Run(strings.TrimPrefix(path, "testdata/"), func(t *testing.T) {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				target, wants, err := fixture.Parse(b)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				cfg := &analyzer.Config{Target: target}
				res := cfg.AnalyzeSource(path, b)
				if res.Statements == 0 {
					t.Fatalf("%s has no statements", path)
				}
				if strings.HasPrefix(filepath.Base(path), "clean") && len(wants) > 0 {
					t.Errorf("%s: clean fixture holds wants", path)
				}
				for _, p := range fixture.Compare(path, res.Findings, wants).Problems {
					t.Error(p)
				}
			})
		}
	}
}

// TestRegistry checks that every rule is documented and tested, and that
// nothing stray sits in docs/ or testdata/.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rules.All() {
		if seen[r.ID] {
			t.Errorf("rule %s registered twice", r.ID)
		}
		seen[r.ID] = true
		if !regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`).MatchString(r.ID) {
			t.Errorf("rule id %q is not kebab-case", r.ID)
		}
		first, _, _ := strings.Cut(r.Title, " ")
		if strings.ContainsAny(r.Title, "\n") || strings.HasSuffix(r.Title, ".") || (first != strings.ToLower(first) && first != strings.ToUpper(first)) {
			t.Errorf("rule %s: title %q should be one lower-case line without a final period", r.ID, r.Title)
		}
		if r.Severity < rules.Info || r.Severity > rules.Critical {
			t.Errorf("rule %s: bad severity %d", r.ID, r.Severity)
		}
		if r.Fix == "" {
			t.Errorf("rule %s has no fix", r.ID)
		}
		doc := r.Doc()
		if doc == "" {
			t.Errorf("rule %s is undocumented (rules/docs/%s.md)", r.ID, r.ID)
		} else if !strings.HasPrefix(doc, "# "+r.ID) {
			t.Errorf("rules/docs/%s.md should start with \"# %s\"", r.ID, r.ID)
		}
		if r.Kind == rules.SQLRule {
			if r.Check == nil {
				t.Errorf("SQL rule %s has no check", r.ID)
			}
			for _, name := range []string{"flagged.sql", "clean.sql"} {
				if _, err := os.Stat(filepath.Join("testdata", r.ID, name)); err != nil {
					t.Errorf("rule %s has no fixture %s", r.ID, name)
				}
			}
		} else if r.Check != nil {
			t.Errorf("%s rule %s has a check", r.Kind, r.ID)
		}
		if (r.Kind == rules.TrafficRule) != (r.Traffic != nil) {
			t.Errorf("%s rule %s: a traffic rule, and only a traffic rule, has a check over traffic events", r.Kind, r.ID)
		}
		if (r.Kind == rules.ScanRule) != (r.Scan != nil) {
			t.Errorf("%s rule %s: a scan rule, and only a scan rule, has a check over scan events", r.Kind, r.ID)
		}
	}
	docs, _ := filepath.Glob("docs/*")
	for _, d := range docs {
		id := strings.TrimSuffix(filepath.Base(d), ".md")
		if !seen[id] || !strings.HasSuffix(d, ".md") {
			t.Errorf("stray doc %s: no rule %q", d, id)
		}
	}
	fixtures, _ := filepath.Glob("testdata/*")
	for _, d := range fixtures {
		if !seen[filepath.Base(d)] {
			t.Errorf("stray fixture directory %s: no rule %q", d, filepath.Base(d))
		}
	}
	var ids []string
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) != len(rules.All()) {
		t.Error(fmt.Sprint("duplicate ids: ", ids))
	}
}

// TestEveryRuleHasItsLogic checks that no rule of the catalogue is a bare
// declaration whose findings some other package decides and words: each
// has a check of its kind (over statements, over traffic events, over
// scan events), and what else it reports (calls of driver APIs, notes on
// state that crossed a transaction) is its own too.
func TestEveryRuleHasItsLogic(t *testing.T) {
	for _, r := range rules.All() {
		var has bool
		switch r.Kind {
		case rules.SQLRule:
			has = r.Check != nil
		case rules.TrafficRule:
			has = r.Traffic != nil
		case rules.ScanRule:
			has = r.Scan != nil
		}
		if !has {
			t.Errorf("%s rule %s has no check of its kind", r.Kind, r.ID)
		}
		if len(r.APIs) > 0 && r.Kind != rules.SQLRule {
			t.Errorf("%s rule %s lists driver APIs: only SQL rules report calls", r.Kind, r.ID)
		}
		if r.Crossed != nil && r.Kind != rules.SQLRule {
			t.Errorf("%s rule %s judges state across transactions: only SQL rules make state", r.Kind, r.ID)
		}
	}
	// Every kind of state a transaction-crossing note stands for is
	// judged by the rule that reports the statement.
	for _, r := range []*rules.Rule{rules.SessionSet, rules.SessionRole, rules.AdvisoryLockSession, rules.Listen,
		rules.TempTable, rules.CursorWithHold, rules.SQLPrepare} {
		if r.Crossed == nil {
			t.Errorf("%s does not judge its state across transactions", r.ID)
		}
	}
}
