package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &env{
		stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(string) string { return "" },
	})
	return out.String(), errb.String(), code
}

// TestExplainEveryRule checks that explain prints every rule's page.
func TestExplainEveryRule(t *testing.T) {
	for _, r := range rules.All() {
		out, errOut, code := runCLI(t, "", "explain", r.ID)
		if code != ExitOK || errOut != "" {
			t.Errorf("explain %s: exit %d, stderr %q", r.ID, code, errOut)
		}
		if !strings.HasPrefix(out, "# "+r.ID) || len(out) < 300 {
			t.Errorf("explain %s printed %d bytes starting %.40q", r.ID, len(out), out)
		}
		if (len(r.Settings) > 0) != strings.Contains(out, "\n## Driver settings\n") {
			t.Errorf("explain %s: driver settings section for %d settings", r.ID, len(r.Settings))
		}
		if (len(r.APIs) > 0) != strings.Contains(out, "\n## Driver APIs\n") {
			t.Errorf("explain %s: driver APIs section for %d APIs", r.ID, len(r.APIs))
		}
	}
}

// TestRulesListsEveryRule checks the rules table.
func TestRulesListsEveryRule(t *testing.T) {
	out, _, code := runCLI(t, "", "rules")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, r := range rules.All() {
		if !strings.Contains(out, r.ID) || !strings.Contains(out, r.Title) {
			t.Errorf("rules output lacks %s (%s)", r.ID, r.Title)
		}
	}
}

// TestFailOn checks the exit code for every --fail-on level against one
// input holding an info, a warning, an error and a critical finding.
func TestFailOn(t *testing.T) {
	sql := "SELECT pg_backend_pid();\nLOAD 'auto_explain';\nLISTEN jobs;\nSET ROLE admin;\n"
	for _, tt := range []struct {
		failOn string
		want   int
	}{
		{"never", ExitOK}, {"critical", ExitFindings}, {"error", ExitFindings},
		{"warning", ExitFindings}, {"info", ExitFindings},
	} {
		_, _, code := runCLI(t, sql, "scan", "--fail-on", tt.failOn, "-")
		if code != tt.want {
			t.Errorf("--fail-on %s: exit %d, want %d", tt.failOn, code, tt.want)
		}
	}
	// Only an info finding: fails from info only.
	for _, tt := range []struct {
		failOn string
		want   int
	}{{"warning", ExitOK}, {"info", ExitFindings}} {
		_, _, code := runCLI(t, "SELECT pg_backend_pid();", "scan", "--fail-on", tt.failOn, "-")
		if code != tt.want {
			t.Errorf("info only, --fail-on %s: exit %d, want %d", tt.failOn, code, tt.want)
		}
	}
}

// TestTargetChangesSeverity checks that --target changes severities and
// messages as the target table says.
func TestTargetChangesSeverity(t *testing.T) {
	sql := "SET TIME ZONE 'UTC';\nSET work_mem = '1GB';\nSELECT pg_advisory_lock(1);\n"
	sev := func(target string) map[string]string {
		out, _, _ := runCLI(t, sql, "scan", "--format", "json", "--target", target, "-")
		var doc struct {
			Findings []struct {
				Line     int
				Severity string
				Message  string
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", target, err, out)
		}
		m := map[string]string{}
		for _, f := range doc.Findings {
			m[string(rune('0'+f.Line))] = f.Severity
			if target == "rds-proxy" && !strings.Contains(f.Message, "RDS Proxy pins the session") {
				t.Errorf("rds-proxy message: %s", f.Message)
			}
		}
		return m
	}
	for target, want := range map[string]map[string]string{
		"generic":     {"1": "error", "2": "error", "3": "error"},
		"pgbouncer":   {"1": "info", "2": "error", "3": "error"},
		"rds-proxy":   {"1": "warning", "2": "warning", "3": "warning"},
		"pgdog":       {"1": "info", "2": "info", "3": "warning"},
		"pgpoolcheck": {"1": "info", "2": "info", "3": "warning"},
	} {
		got := sev(target)
		for line, s := range want {
			if got[line] != s {
				t.Errorf("--target %s line %s: severity %q, want %q", target, line, got[line], s)
			}
		}
	}
}
