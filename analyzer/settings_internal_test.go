package analyzer

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// settingName is a driver setting's name as the settings checks pass it
// to setting and options.
var settingName = regexp.MustCompile(`"((?:connstring|pgx|sqlx|Npgsql|pgjdbc|Rails|node-postgres|PHP|PDO|Laravel|JDBC|Kotlin|HikariCP)\.[A-Za-z_.]*)"`)

// TestSettingNames checks that the settings the scan reports and the
// settings the rules list are the same: each name the settings checks
// pass is listed by a rule, and each setting a rule lists is reported.
func TestSettingNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"pgjdbc.prepareThreshold.negative": true}
	for key := range laravelSets {
		used["Laravel."+key] = true
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range settingName.FindAllStringSubmatch(string(b), -1) {
			if !strings.HasSuffix(m[1], ".") {
				used[m[1]] = true
			}
		}
	}
	listed := map[string]bool{}
	for _, r := range rules.All() {
		for _, s := range r.Settings {
			listed[s.Setting] = true
			if !used[s.Setting] {
				t.Errorf("%s lists setting %s, which the scan never reports", r.ID, s.Setting)
			}
		}
	}
	for name := range used {
		if !listed[name] {
			t.Errorf("the scan reports setting %s, which no rule lists", name)
		}
	}
}
