package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

type jsonDoc struct {
	Findings []struct {
		Rule string
		Line int
	}
	Summary struct {
		Baselined     int
		StaleBaseline []struct{ Rule string } `json:"stale_baseline"`
	}
}

func scanJSON(t *testing.T, args ...string) (jsonDoc, int) {
	t.Helper()
	out, errOut, code := runCLI(t, "", append([]string{"scan", "--no-config", "--format", "json"}, args...)...)
	var d jsonDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s\n%s", err, errOut, out)
	}
	return d, code
}

// TestBaselineWorkflow records today's findings, then checks that moved
// and reformatted statements stay hidden, a new hazard is reported and a
// fixed one shows up as a stale baseline entry.
func TestBaselineWorkflow(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "db/001.sql", "SET search_path = app;\nLISTEN jobs;\nLISTEN jobs;\nSELECT pg_advisory_lock(1);\n")
	_, errOut, code := runCLI(t, "", "scan", "--no-config", "--write-baseline", "baseline.json", "db")
	if code != ExitOK || !strings.Contains(errOut, "recorded 4 findings") {
		t.Fatalf("write-baseline: exit %d, %q", code, errOut)
	}
	// Same findings, lines moved and reformatted, constants changed.
	writeFile(t, "db/001.sql", "-- header\n\nLISTEN jobs;\nselect   pg_advisory_lock(2);\nSET search_path = other;\nLISTEN jobs;\n")
	d, code := scanJSON(t, "--baseline", "baseline.json", "db")
	if len(d.Findings) != 0 || d.Summary.Baselined != 4 || code != ExitOK {
		t.Fatalf("moved findings: %+v exit %d", d, code)
	}
	// A new hazard is reported; a removed one leaves a stale entry.
	writeFile(t, "db/001.sql", "SET search_path = app;\nLISTEN jobs;\nSELECT pg_advisory_lock(1);\nSET ROLE admin;\n")
	d, code = scanJSON(t, "--baseline", "baseline.json", "db")
	if len(d.Findings) != 1 || d.Findings[0].Rule != "session-role" || d.Summary.Baselined != 3 || code != ExitFindings {
		t.Fatalf("new hazard: %+v exit %d", d, code)
	}
	if len(d.Summary.StaleBaseline) != 1 || d.Summary.StaleBaseline[0].Rule != "listen" {
		t.Fatalf("stale entries: %+v", d.Summary.StaleBaseline)
	}
	out, _, _ := runCLI(t, "", "scan", "--no-config", "--baseline", "baseline.json", "db")
	if !strings.Contains(out, "3 findings hidden by the baseline") || !strings.Contains(out, "1 baseline entry no longer matches") {
		t.Errorf("text summary lacks the baseline lines:\n%s", out)
	}
	// gate takes the same baseline: only the new hazard blocks.
	out, _, code = runCLI(t, "", "gate", "--no-config", "--baseline", "baseline.json", "--scan", "db")
	if code != ExitFindings || !strings.Contains(out, "NOT READY: 1 blocking finding") || !strings.Contains(out, "3 findings hidden by the baseline") {
		t.Errorf("gate with a baseline: exit %d\n%s", code, out)
	}
	writeFile(t, "db/001.sql", "SET search_path = app;\nLISTEN jobs;\nSELECT pg_advisory_lock(1);\n")
	if out, _, code := runCLI(t, "", "gate", "--no-config", "--baseline", "baseline.json", "--scan", "db"); code != ExitOK || !strings.Contains(out, "READY for transaction pooling") {
		t.Errorf("gate with everything baselined: exit %d\n%s", code, out)
	}
	if _, _, code := runCLI(t, "", "gate", "--no-config", "--scan", "db"); code != ExitFindings {
		t.Errorf("gate without the baseline: exit %d, want %d", code, ExitFindings)
	}
	// A broken baseline is an error, not an empty baseline.
	writeFile(t, "bad.json", "{not json")
	if _, _, code := runCLI(t, "", "scan", "--no-config", "--baseline", "bad.json", "db"); code != ExitError {
		t.Errorf("bad baseline: exit %d, want %d", code, ExitError)
	}
}

// TestGitignore checks that directory walks skip what git ignores, and
// that a file named on the command line is scanned anyway.
func TestGitignore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed for this test")
		}
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if out, err := exec.Command("git", "init", "-q", ".").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	writeFile(t, ".gitignore", "build/\n*.generated.sql\n")
	writeFile(t, "db/keep.sql", "LISTEN a;\n")
	writeFile(t, "db/x.generated.sql", "LISTEN b;\n")
	writeFile(t, "build/out.sql", "LISTEN c;\n")
	d, _ := scanJSON(t, ".")
	if len(d.Findings) != 1 {
		t.Fatalf("want only db/keep.sql scanned, got %+v", d.Findings)
	}
	d, _ = scanJSON(t, "build/out.sql")
	if len(d.Findings) != 1 {
		t.Fatalf("a file named on the command line must be scanned: %+v", d.Findings)
	}
	// Without git (or with a git that refuses the repository) the
	// ignored files are scanned, and a warning says so.
	t.Setenv("PATH", t.TempDir())
	out, errOut, _ := runCLI(t, "", "scan", "--no-config", "--format", "json", ".")
	var doc jsonDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) != 3 || !strings.Contains(errOut, "warning: .: .gitignore is not honoured (git is not installed); ignored files are scanned") {
		t.Errorf("without git: %d findings, stderr %q; want 3 and a warning", len(doc.Findings), errOut)
	}
}

// TestBaselineCalls checks that findings at calls of routines defined in
// the scanned tree are baselined like any other, and that a new call of
// the routine is reported.
func TestBaselineCalls(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "db/001.sql", "CREATE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM set_config('search_path', 'evil', false);\nEND\n$$;\n")
	writeFile(t, "db/002.sql", "SELECT sneaky();\n")
	_, errOut, code := runCLI(t, "", "scan", "--no-config", "--write-baseline", "baseline.json", "db")
	if code != ExitOK || !strings.Contains(errOut, "recorded 2 findings") {
		t.Fatalf("write-baseline: exit %d, %q", code, errOut)
	}
	writeFile(t, "db/002.sql", "-- moved\n\nSELECT sneaky();\n")
	if d, code := scanJSON(t, "--baseline", "baseline.json", "db"); len(d.Findings) != 0 || d.Summary.Baselined != 2 || code != ExitOK {
		t.Fatalf("moved call: %+v exit %d", d, code)
	}
	writeFile(t, "db/003.sql", "SELECT 1;\nCALL sneaky();\n")
	d, code := scanJSON(t, "--baseline", "baseline.json", "db")
	if len(d.Findings) != 1 || d.Findings[0].Rule != "session-set" || d.Findings[0].Line != 2 || code != ExitFindings {
		t.Fatalf("new call: %+v exit %d", d, code)
	}
}
