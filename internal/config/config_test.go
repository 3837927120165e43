package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, text, err string
	}{
		{"empty", "", ""},
		{"full", "target: rds-proxy\nfail_on: warning\nrules:\n  backend-pid: off\n  listen: critical\ninclude: [db/**]\nexclude: ['db/legacy/**']\nlanguages: [sql, go]\n", ""},
		{"unknown key", "targets: generic\n", `unknown key "targets"`},
		{"unknown rule", "rules:\n  no-such: off\n", `unknown rule "no-such"`},
		{"bad severity", "rules:\n  listen: loud\n", `"loud" is not off`},
		{"bad target", "target: pgbouncr\n", `unknown target "pgbouncr"`},
		{"bad fail_on", "fail_on: sometimes\n", "fail_on"},
		{"bad language", "languages: [cobol]\n", `unknown language "cobol"`},
		{"bad glob", "exclude: ['[a-']\n", "bad glob"},
		{"not a map", "- a\n- b\n", "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.text))
			if tt.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one containing %q (config %+v)", err, tt.err, c)
			}
		})
	}
	c, err := Parse([]byte("rules:\n  backend-pid: off\n  listen: critical\n"))
	if err != nil || !c.Disabled["backend-pid"] || c.Severity["listen"] != rules.Critical {
		t.Errorf("rules not read: %+v, %v", c, err)
	}
}

// TestParseErrorLines: every error names the line of the value at fault,
// below comments and blank lines, for syntax errors too.
func TestParseErrorLines(t *testing.T) {
	const head = "# pgpoolcheck settings\n\ntarget: pgbouncer\n" // three lines before each case
	tests := []struct{ name, text, want string }{
		{"bad target", "# scan\n\ntarget: pgbouncr\n", "line 3: target: unknown target"},
		{"bad fail_on", head + "fail_on: eror\n", `line 4: fail_on: unknown severity "eror"`},
		{"unknown rule", head + "rules:\n  listen: error\n  sesion-role: off\n", `line 6: rules: unknown rule "sesion-role" (did you mean session-role?)`},
		{"bad severity", head + "rules:\n  listen: loud\n", `line 5: rules: listen: "loud" is not off`},
		{"bad glob", head + "include:\n  - db/**\nexclude:\n  - db/old/**\n  - '[a-'\n", `line 8: exclude: bad glob "[a-"`},
		{"bad language", head + "languages: [sql,\n  cobol]\n", `line 5: languages: unknown language "cobol"`},
		{"unknown key", head + "targets: generic\n", `line 4: unknown key "targets"`},
		{"wrong type", head + "exclude: 5\n", "line 4: cannot unmarshal"},
		{"mis-indented key", head + "rules:\n  listen: error\n backend-pid: off\n", "line 6 column 2: did not find expected key"},
		{"item in a mapping", head + "- sql\n", "line 4 column 1: did not find expected key"},
		{"tab", head + "rules:\n\tlisten: error\n", "line 5: found character that cannot start any token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.text))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want one starting %q", err, tt.want)
			}
		})
	}
}

func TestParseRulesRead(t *testing.T) {
	c, err := Parse([]byte("rules:\n  backend-pid: off\n  listen: critical\n"))
	if err != nil || !c.Disabled["backend-pid"] || c.Severity["listen"] != rules.Critical {
		t.Errorf("rules not read: %+v, %v", c, err)
	}
}

func TestSelects(t *testing.T) {
	dir := t.TempDir()
	c := &Config{Dir: dir, Include: []string{"db/**"}, Exclude: []string{"db/legacy", "**/*_test.sql"}}
	for path, want := range map[string]bool{
		"db/001.sql":            true,
		"db/sub/002.sql":        true,
		"db/legacy/000.sql":     false,
		"db/sub/foo_test.sql":   false,
		"scripts/x.sql":         false,
		"db/legacy2/keep.sql":   true,
		"db/legacy/deep/x.sql":  false,
		"db/LEGACY/caseful.sql": true,
	} {
		if got := c.Selects(filepath.Join(dir, path)); got != want {
			t.Errorf("Selects(%s) = %v, want %v", path, got, want)
		}
	}
	var none *Config
	if !none.Selects("anything.sql") || !none.Language("go") {
		t.Error("a nil config must select everything")
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", FileName), []byte("target: generic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Find(deep)
	if err != nil || got != filepath.Join(root, "a", FileName) {
		t.Errorf("Find = %q, %v", got, err)
	}
}

func TestDeprecatedKeySpelling(t *testing.T) {
	c, err := Parse([]byte("target: pgbouncer\nfail-on: warning\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.FailOn != "warning" {
		t.Fatalf("fail-on read as %q", c.FailOn)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "line 2: fail-on is deprecated: write fail_on") {
		t.Fatalf("warnings %q", c.Warnings)
	}
	if _, err := Parse([]byte("fail_onn: error\n")); err == nil || !strings.Contains(err.Error(), "did you mean fail_on?") {
		t.Fatalf("misspelt key: %v", err)
	}
}
