package traffic_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestAnalyzeCaptures runs analyze over each golden capture of
// testdata/captures and checks the exact set of findings (rule:severity),
// one capture per scenario.
func TestAnalyzeCaptures(t *testing.T) {
	tests := []struct {
		capture string
		target  rules.Target
		want    []string
	}{
		{"set_later", "", []string{"session-set:critical"}},
		{"set_last_tx", "", nil},
		// A ReadyForQuery that answers no client message (a proxy's reset
		// after its client left) is no later transaction of the client's.
		{"set_last_tx_server_ready", "", nil},
		{"set_local", "", nil},
		{"set_config_false", "", []string{"session-set:critical"}},
		{"set_config_true", "", nil},
		{"set_role", "", []string{"session-role:critical"}},
		{"set_local_role", "", nil},
		{"advisory_session", "", []string{"advisory-lock-session:error"}},
		{"advisory_never_released", "", []string{"advisory-lock-session:error"}},
		{"advisory_xact", "", nil},
		{"advisory_one_tx", "", nil},
		{"listen", "", []string{"listen:error"}},
		{"notify_only", "", nil},
		{"temp_across", "", []string{"temp-table:error"}},
		{"temp_on_commit_drop", "", nil},
		{"temp_one_tx", "", nil},
		{"hold_cursor", "", []string{"cursor-with-hold:error"}},
		{"plain_cursor", "", nil},
		{"sql_prepare", "", []string{"sql-prepare:error"}},
		{"sequence", "", []string{"sequence-session:error"}},
		{"sequence_one_tx", "", nil},
		{"idle", "", []string{"idle-in-transaction:warning"}},
		{"idle_short", "", nil},
		{"pgx_default", "", []string{"protocol-prepare:info"}},
		{"pgx_default", rules.Generic, []string{"protocol-prepare:error"}},
		{"pgx_default", rules.PgBouncerLegacy, []string{"protocol-prepare:error"}},
		{"pgx_exec", rules.Generic, nil},
		{"pgbench_prepared", rules.PgBouncerLegacy, []string{"protocol-prepare:error"}},
		{"pgbench_extended", rules.PgBouncerLegacy, nil},
		{"libpq_two_round_trips", "", []string{"unnamed-statement-reuse:error"}},
		{"libpq_two_round_trips", rules.PgPoolCheck, []string{"unnamed-statement-reuse:info"}},
		{"startup_search_path", "", []string{"startup-parameter:error", "startup-parameter:warning"}},
		{"startup_search_path", rules.PgDog, []string{"startup-parameter:info", "startup-parameter:info"}},
		{"startup_options_tracked", "", nil},
		{"startup_options_tracked", rules.PgBouncerLegacy, []string{"startup-parameter:error"}},
		{"startup_options_untracked", "", []string{"startup-parameter:error"}},
		{"rollback", "", nil},
		{"two_sessions", "", []string{"session-set:critical"}},
		{"failed_set", "", nil},
		{"advisory_then_error", "", []string{"advisory-lock-session:error"}},
		{"savepoint_recovered", "", []string{"session-set:critical"}},
		{"pg_settings_update", "", []string{"session-set:critical"}},
		{"reset_later", "", []string{"session-set:error"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.capture] = true
		name := tt.capture
		if tt.target != "" {
			name += "/" + string(tt.target)
		}
		t.Run(name, func(t *testing.T) {
			cfg := &analyzer.Config{Target: tt.target}
			rep, warns, err := traffic.Analyze(cfg, []string{filepath.Join("testdata", "captures", tt.capture+".jsonl")}, traffic.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) > 0 {
				t.Errorf("warnings: %v", warns)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Rule+":"+f.Severity.String())
				if f.Traffic == nil || f.Traffic.Count == 0 || f.Line == 0 {
					t.Errorf("finding without traffic stats or line: %+v", f)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				for _, f := range rep.Findings {
					t.Logf("%s:%d %s [%s] %s", f.File, f.Line, f.Severity, f.Rule, f.Message)
				}
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	files, _ := filepath.Glob("testdata/captures/*.jsonl")
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".jsonl"); !seen[name] {
			t.Errorf("%s has no test case", f)
		}
	}
}

func TestAnalyzeCapturesGrouping(t *testing.T) {
	cfg := &analyzer.Config{}
	rep, _, err := traffic.Analyze(cfg, []string{"testdata/captures/two_sessions.jsonl"}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("%d findings", len(rep.Findings))
	}
	f := rep.Findings[0]
	tr := f.Traffic
	if tr.Count != 2 || tr.Sessions != 2 || !slices.Equal(tr.ApplicationNames, []string{"billing", "reports"}) {
		t.Errorf("traffic %+v", tr)
	}
	if !tr.FirstSeen.Before(tr.LastSeen) || tr.FirstSeen.Year() != 2026 {
		t.Errorf("first/last seen %v %v", tr.FirstSeen, tr.LastSeen)
	}
	if f.File != "testdata/captures/two_sessions.jsonl" || f.Line != 3 || f.Fingerprint == "" || f.Statement != "SET search_path = app" {
		t.Errorf("finding %+v", f)
	}
	if !strings.Contains(f.Message, "none of which read it back (2 of 2)") {
		t.Errorf("message %q", f.Message)
	}
	if rep.Summary.Files != 1 || rep.Summary.Statements != 4 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

func TestAnalyzeCapturesIdleThreshold(t *testing.T) {
	cfg := &analyzer.Config{}
	rep, _, err := traffic.Analyze(cfg, []string{"testdata/captures/idle.jsonl"}, traffic.Options{IdleThreshold: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 0 {
		t.Errorf("findings above a 2s threshold: %+v", rep.Findings)
	}
	rep, _, _ = traffic.Analyze(cfg, []string{"testdata/captures/idle.jsonl"}, traffic.Options{})
	if len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].Message, "longest 1.501s") || !strings.Contains(rep.Findings[0].Statement, "FOR UPDATE") {
		t.Errorf("idle finding %+v", rep.Findings)
	}
}

func TestAnalyzeCapturesErrors(t *testing.T) {
	cfg := &analyzer.Config{}
	if _, _, err := traffic.Analyze(cfg, []string{"testdata/captures/missing.jsonl"}, traffic.Options{}); err == nil {
		t.Error("no error for a missing file")
	}
	if _, _, err := traffic.Analyze(cfg, []string{"analyze_test.go"}, traffic.Options{}); err == nil || !strings.Contains(err.Error(), "not a pgpoolcheck capture") {
		t.Errorf("error %v", err)
	}
}

// recordRotated records, in parts of at most 600 bytes, a session of a
// SET and then 20 SELECTs, and returns the capture's path and writer
// (closed).
func recordRotated(t *testing.T) (string, *capture.Writer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cap.jsonl")
	w, err := capture.Create(path, capture.Header{Mode: "record"}, capture.Options{MaxBytes: 600})
	if err != nil {
		t.Fatal(err)
	}
	s := w.StartSession(capture.SessionInfo{ApplicationName: "billing"})
	query := func(sql string) {
		body := append([]byte(sql), 0)
		s.Frontend('Q', body, len(body))
		s.Backend('Z', []byte{'I'})
	}
	query("SET search_path = app")
	for range 20 {
		query("SELECT * FROM invoices")
	}
	s.End("client closed")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, w
}

// TestAnalyzeRotatedCapture records a session whose SET and later
// transactions fall in different parts of a rotated capture, and gives the
// parts to analyze in reverse order.
func TestAnalyzeRotatedCapture(t *testing.T) {
	path, _ := recordRotated(t)
	var parts []string
	for n := 1; ; n++ {
		p := capture.PartPath(path, n)
		if _, err := os.Stat(p); err != nil {
			break
		}
		parts = append([]string{p}, parts...)
	}
	if len(parts) < 3 {
		t.Fatalf("%d parts", len(parts))
	}
	rep, warns, err := traffic.Analyze(&analyzer.Config{}, parts, traffic.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != "session-set" || rep.Findings[0].File != path || rep.Findings[0].Line != 3 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	if rep.Summary.Files != len(parts) || rep.Summary.Statements != 21 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

// TestAnalyzeBrokenPart gives analyze a rotated capture whose middle part
// ended as a part does when the disk filled: no trailer, the last line cut
// in the middle. The part and those after it are read (strict or not), the
// warnings name the file, the cut line and the missing trailer, and only
// the statements of the lost lines are missing.
func TestAnalyzeBrokenPart(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			_, w := recordRotated(t)
			parts := w.Files()
			if len(parts) < 3 {
				t.Fatalf("%d parts", len(parts))
			}
			broken := parts[1]
			data, err := os.ReadFile(broken)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
			// lines: header, events…, trailer. Keep the header and all
			// events but the last two; cut the one before the last.
			if len(lines) < 5 {
				t.Fatalf("%d lines in %s", len(lines), broken)
			}
			kept := strings.Join(lines[:len(lines)-3], "")
			cutLine := lines[len(lines)-3]
			kept += cutLine[:len(cutLine)/2]
			lost := strings.Count(strings.Join(lines[len(lines)-3:], ""), `"ev":"query"`)
			if lost == 0 {
				t.Fatalf("no statement in the lines cut off %s", broken)
			}
			if err := os.WriteFile(broken, []byte(kept), 0o600); err != nil {
				t.Fatal(err)
			}

			rep, warns, err := traffic.Analyze(&analyzer.Config{}, parts, traffic.Options{Strict: strict})
			if err != nil {
				t.Fatalf("analyze stopped at the broken part: %v", err)
			}
			joined := strings.Join(warns, "\n")
			for _, want := range []string{
				fmt.Sprintf("%s:%d: the last line is cut short", broken, len(lines)-2),
				broken + ": no trailer",
			} {
				if !strings.Contains(joined, want) {
					t.Errorf("no warning %q in\n%s", want, joined)
				}
			}
			if len(warns) != 2 {
				t.Errorf("warnings:\n%s", joined)
			}
			if len(rep.Findings) != 1 || rep.Findings[0].Rule != "session-set" {
				t.Errorf("findings %+v", rep.Findings)
			}
			if rep.Summary.Files != len(parts) || rep.Summary.Statements != 21-lost {
				t.Errorf("summary %+v, want %d statements (%d lost)", rep.Summary, 21-lost, lost)
			}
		})
	}
}
