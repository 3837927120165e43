package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGateJSONVerdict checks that gate --format json carries the verdict
// that the text format prints, with the counts behind it.
func TestGateJSONVerdict(t *testing.T) {
	type verdict struct {
		Ready       bool   `json:"ready"`
		Message     string `json:"message"`
		Blocking    int    `json:"blocking"`
		NotBlocking int    `json:"not_blocking"`
		FailOn      string `json:"fail_on"`
	}
	tests := []struct {
		name   string
		sql    string
		args   []string
		code   int
		want   verdict
		listed int
	}{
		{"not ready", "SET search_path = app;\nLISTEN jobs;\nSELECT pg_backend_pid();\n", nil, ExitFindings,
			verdict{false, "NOT READY: 2 blocking findings", 2, 1, "error"}, 2},
		{"ready", "SELECT 1;\n", nil, ExitOK,
			verdict{true, "READY for transaction pooling behind pgbouncer", 0, 0, "error"}, 0},
		{"fail-on never", "LISTEN jobs;\n", []string{"--fail-on", "never", "--target", "generic"}, ExitOK,
			verdict{true, "READY for transaction pooling behind generic", 0, 1, "never"}, 0},
		{"fail-on info", "SELECT pg_backend_pid();\n", []string{"--fail-on", "info"}, ExitFindings,
			verdict{false, "NOT READY: 1 blocking finding", 1, 0, "info"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			writeFile(t, "db/001.sql", tc.sql)
			args := append([]string{"gate", "--no-config", "--format", "json", "--scan", "db"}, tc.args...)
			out, errOut, code := runCLI(t, "", args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			var doc struct {
				Verdict  *verdict          `json:"verdict"`
				Findings []json.RawMessage `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if doc.Verdict == nil {
				t.Fatalf("no verdict in\n%s", out)
			}
			if *doc.Verdict != tc.want {
				t.Errorf("verdict %+v, want %+v", *doc.Verdict, tc.want)
			}
			if len(doc.Findings) != tc.listed {
				t.Errorf("%d findings listed, want %d", len(doc.Findings), tc.listed)
			}
			if !strings.Contains(errOut, tc.want.Message) {
				t.Errorf("stderr %q lacks the verdict", errOut)
			}
		})
	}
	// scan and analyze have no verdict.
	t.Chdir(t.TempDir())
	writeFile(t, "db/001.sql", "LISTEN jobs;\n")
	out, _, _ := runCLI(t, "", "scan", "--no-config", "--format", "json", "db")
	if strings.Contains(out, `"verdict"`) {
		t.Errorf("scan's json has a verdict:\n%s", out)
	}
}
