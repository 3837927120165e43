package output

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testCatalogue stands in for the rule catalogue in golden tests, so that
// editing a rule's title or documentation does not change the golden files.
var testCatalogue = []ruleInfo{
	{ID: "session-set", Title: "session-level SET of a run-time parameter", Severity: rules.Error, Fix: "use SET LOCAL inside a transaction",
		Doc: "# session-set\n\nA session-level `SET` stays on the server connection\nafter the transaction ends.\n\n## Fix\n\nUse `SET LOCAL`.\n"},
	{ID: "session-role", Title: "session-level SET ROLE", Severity: rules.Critical, Security: true, Fix: "use SET LOCAL ROLE",
		Doc: "# session-role\n\n```sql\nSET ROLE admin;\n```\n\nPrivileges leak to the next client.\n"},
	{ID: "advisory-lock-session", Title: "session-level advisory lock", Severity: rules.Error, Fix: "use pg_advisory_xact_lock"},
	{ID: "backend-pid", Title: "backend identity", Severity: rules.Info, Doc: "# backend-pid\n"},
	{ID: "protocol-prepare", Title: "named protocol statement reused across transactions"},
}

// useTestCatalogue replaces the catalogue for the duration of t.
func useTestCatalogue(t *testing.T) {
	old := catalogue
	catalogue = func() []ruleInfo { return testCatalogue }
	t.Cleanup(func() { catalogue = old })
}

// col returns the 1-based code-point column of the first sub in line.
func col(line, sub string) int {
	i := strings.Index(line, sub)
	if i < 0 {
		panic("col: " + sub + " not in " + line)
	}
	return utf8.RuneCountInString(line[:i]) + 1
}

// at fills the position of f from its source line: the finding starts at
// the first start in the line and ends after the first end.
func at(f analyzer.Finding, line int, src, start, end string) analyzer.Finding {
	f.Line, f.EndLine, f.SourceLine = line, line, src
	f.Column = col(src, start)
	f.EndColumn = col(src, end) + utf8.RuneCountInString(end)
	return f
}

const (
	goLine       = "\t_, err := db.Exec(\"SET statement_timeout = '5s'\")"
	roleLine     = "SET ROLE app_admin;"
	pathLine     = "SET search_path TO app, public;"
	lockLine     = "SELECT pg_advisory_lock(42) WHERE 1 <> 2 AND 'a' <> '&b';"
	pidLine      = "SELECT pg_backend_pid();"
	callLine     = "    cur.execute(\"SELECT sneaky()\")"
	wrapLine     = "CALL wrap();"
	multibyteSrc = "\t\tPERFORM set_config('app.user', 'Zoë 日本', false),\tpg_advisory_lock(7);"
)

// cases are the reports of the golden tests; their findings are sorted, as
// the analyzer delivers them.
var cases = []struct {
	name string
	rep  *analyzer.Report
}{
	{"empty", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Summary: analyzer.Summary{Files: 3, Statements: 12},
	}},
	{"several", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Findings: []analyzer.Finding{
			at(analyzer.Finding{Rule: "session-set", Severity: rules.Error, File: "app/queries.go",
				Message:   "SET statement_timeout outlives the transaction: the next client of this server connection inherits it",
				Fix:       "use SET LOCAL inside a transaction",
				Statement: "SET statement_timeout = '5s'", Fingerprint: "a0ead580058af585"},
				14, goLine, "SET", "'5s'"),
			at(analyzer.Finding{Rule: "session-role", Severity: rules.Critical, Security: true, File: "db/migrations/001_init.sql",
				Message:   "SET ROLE app_admin gives the next client of this server connection the privileges of app_admin",
				Fix:       "use SET LOCAL ROLE inside a transaction",
				Statement: roleLine, Fingerprint: "d1b3c2a1e0f9e8d7"},
				3, roleLine, "SET", ";"),
			at(analyzer.Finding{Rule: "session-set", Severity: rules.Critical, Security: true, File: "db/migrations/001_init.sql",
				Message:   "SET search_path changes name resolution for the next client of this server connection",
				Fix:       "use SET LOCAL search_path, or schema-qualified names",
				Statement: pathLine, Fingerprint: "0f1e2d3c4b5a6978"},
				5, pathLine, "SET", ";"),
			at(analyzer.Finding{Rule: "advisory-lock-session", Severity: rules.Warning, File: "db/migrations/001_init.sql",
				Message:   "pg_advisory_lock takes a session-level lock that stays on the server connection",
				Fix:       "use pg_advisory_xact_lock",
				Statement: lockLine},
				7, lockLine, "pg_advisory_lock", ";"),
			at(analyzer.Finding{Rule: "backend-pid", Severity: rules.Info, File: "db/migrations/001_init.sql",
				Message:   "pg_backend_pid() changes between transactions behind a pooler",
				Statement: pidLine, Fingerprint: "77aa00bb11cc22dd"},
				12, pidLine, "pg_backend_pid", ";"),
		},
		Summary: analyzer.Summary{
			Files: 2, Statements: 40, Suppressed: 2,
			Skipped: []analyzer.Skipped{{File: "vendor/legacy.sql", Reason: "not valid UTF-8"}},
		},
	}},
	{"unreadable", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Findings: []analyzer.Finding{
			at(analyzer.Finding{Rule: "session-role", Severity: rules.Critical, Security: true, File: "db/migrations/001_init.sql",
				Message:   "SET ROLE app_admin gives the next client of this server connection the privileges of app_admin",
				Fix:       "use SET LOCAL ROLE inside a transaction",
				Statement: roleLine, Fingerprint: "d1b3c2a1e0f9e8d7"},
				3, roleLine, "SET", ";"),
		},
		Summary: analyzer.Summary{
			Files: 1, Statements: 4,
			Skipped: []analyzer.Skipped{
				{File: "db/private", Reason: "unreadable directory: permission denied", Unreadable: true},
				{File: "db/seed.bin", Reason: "binary file"},
			},
		},
	}},
	{"multibyte", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.Generic,
		Findings: []analyzer.Finding{
			at(analyzer.Finding{Rule: "session-set", Severity: rules.Error, File: "funcs/login.sql",
				Message:   "set_config('app.user', …, false) sets app.user for the rest of the session",
				Fix:       "pass true as the third argument of set_config",
				Statement: "PERFORM set_config('app.user', 'Zoë 日本', false),\tpg_advisory_lock(7)"},
				9, multibyteSrc, "set_config", "false)"),
			at(analyzer.Finding{Rule: "advisory-lock-session", Severity: rules.Error, File: "funcs/login.sql",
				Message:   "pg_advisory_lock takes a session-level lock that stays on the server connection",
				Fix:       "use pg_advisory_xact_lock",
				Statement: "PERFORM set_config('app.user', 'Zoë 日本', false),\tpg_advisory_lock(7)"},
				9, multibyteSrc, "pg_advisory_lock", "(7)"),
		},
		Summary: analyzer.Summary{Files: 1, Statements: 1},
	}},
	// calls has findings at calls of routines defined elsewhere, one of
	// them through a routine that calls another.
	{"calls", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Findings: []analyzer.Finding{
			at(analyzer.Finding{Rule: "session-set", Severity: rules.Critical, Security: true, File: "app/jobs.py",
				Message:   "calls sneaky(), whose body does this: set_config('search_path', …, false) lasts for the rest of the session",
				Fix:       "use SET LOCAL inside a transaction",
				Statement: "SELECT sneaky()", Fingerprint: "5e1f2a3b4c5d6e7f",
				Related: []analyzer.Related{{File: "db/migrations/002_sneaky.sql", Line: 3, Column: 1, Message: "defined here"}}},
				8, callLine, "sneaky", ")"),
			at(analyzer.Finding{Rule: "session-set", Severity: rules.Critical, Security: true, File: "db/migrations/003_wrap.sql",
				Message:   "calls wrap(), whose body calls sneaky(), whose body does this: set_config('search_path', …, false) lasts for the rest of the session",
				Fix:       "use SET LOCAL inside a transaction",
				Statement: "CALL wrap()", Fingerprint: "6f2a3b4c5d6e7f80",
				Related: []analyzer.Related{
					{File: "db/migrations/003_wrap.sql", Line: 1, Column: 1, Message: "defined here"},
					{File: "db/migrations/002_sneaky.sql", Line: 3, Column: 1, Message: "sneaky() defined here"},
				}},
				6, wrapLine, "wrap", ";"),
		},
		Summary: analyzer.Summary{Files: 3, Statements: 5},
	}},
	{"escape", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Findings: []analyzer.Finding{
			{Rule: "session-set", Severity: rules.Error, File: "/srv/app/sql/100% done.sql",
				Line: 1, Column: 1, EndLine: 2, EndColumn: 12,
				Message:   "SET work_mem = '64MB' uses 100% of a session,\nand the next client inherits it: see the docs",
				Fix:       "use SET LOCAL, or SET in the role: ALTER ROLE … SET",
				Statement: "SET work_mem =\n'64MB';", SourceLine: "SET work_mem =\r\n"},
			{Rule: "session-set", Severity: rules.Warning, File: "dir,with:odd/x 1.sql",
				Line: 4, Column: 1, EndLine: 4, EndColumn: 10,
				Message: "RESET ALL: 50%, then 100%\r\ndone", Statement: "RESET ALL", SourceLine: "RESET ALL"},
			{Rule: "protocol-prepare", Severity: rules.Warning, File: "capture.jsonl",
				Message: "statement \"stmtcache_1\" was parsed in one transaction and used in another"},
		},
		Summary: analyzer.Summary{Files: 3, Statements: 2},
	}},
	// traffic is analyze over the captures of three proxy instances, one
	// of them restarted (four recordings).
	{"traffic", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Findings: []analyzer.Finding{
			{Rule: "session-set", Severity: rules.Critical, Security: true, File: "captures/pooler-0/capture.jsonl",
				Line: 3, Column: 1,
				Message:     "SET search_path lasts for the rest of the session; in the capture: the session ran later transactions, none of which read it back (5 of 7), a later transaction read it (SHOW or current_setting) (2 of 7)",
				Fix:         "use SET LOCAL inside the transaction that needs it",
				Statement:   "SET search_path = app, public",
				Fingerprint: "0f1e2d3c4b5a6978",
				Traffic: &analyzer.TrafficStats{Count: 7, Sessions: 6,
					FirstSeen:        time.Date(2026, 11, 30, 4, 0, 0, 3_000_000, time.UTC),
					LastSeen:         time.Date(2026, 11, 30, 5, 12, 9, 450_000_000, time.UTC),
					ApplicationNames: []string{"", "billing", "reports"}}},
		},
		Summary: analyzer.Summary{Files: 5, CaptureFiles: 5, Instances: 3, Captures: 4, Sessions: 412, Statements: 9876},
	}},
	// gate is gate over scanned files and a capture in two parts, with
	// nothing left.
	{"gate", &analyzer.Report{
		Tool: "pgpoolcheck", Version: "1.2.3", Target: rules.PgBouncer,
		Summary: analyzer.Summary{Files: 14, CaptureFiles: 2, Instances: 1, Captures: 1, Sessions: 1, Statements: 230},
		Verdict: &analyzer.Verdict{Ready: true, Message: "READY for transaction pooling behind pgbouncer", NotBlocking: 2, FailOn: "error"},
	}},
}

// TestGolden renders every case in every format and compares the output
// with testdata/golden/<case>.<format>; -update rewrites the files.
func TestGolden(t *testing.T) {
	useTestCatalogue(t)
	for _, c := range cases {
		for _, format := range Formats() {
			checkGolden(t, c.name, format, c.rep, Options{})
		}
		checkGolden(t, c.name+"-color", "text", c.rep, Options{Color: true})
	}
}

func checkGolden(t *testing.T, name, format string, rep *analyzer.Report, opt Options) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, format, rep, opt); err != nil {
		t.Fatalf("%s.%s: %v", name, format, err)
	}
	path := filepath.Join("testdata", "golden", name+"."+format)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("%s differs from the output (run go test -update to accept it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}
