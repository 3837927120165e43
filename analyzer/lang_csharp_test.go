package analyzer

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

func TestCSharpNotSQLCall(t *testing.T) {
	for name, want := range map[string]bool{
		"_logger.loginformation":     true,
		"logger.logcritical":         true,
		"debug.writeline":            true,
		"writer.write":               true,
		"assert.contains":            true,
		"classicassert.areequal":     true,
		".be":                        true,
		"invalidoperationexception":  true,
		"system.argumentexception":   true,
		"":                           false,
		"npgsqlcommand":              false,
		"npgsqlbatchcommand":         false,
		"db.execute":                 false,
		"conn.queryfirstordefault":   false,
		"_db.database.executesqlraw": false,
		"fromsqlinterpolated":        false,
		"login":                      false,
	} {
		if got := csharpNotSQLCall(name); got != want {
			t.Errorf("csharpNotSQLCall(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSubscriptionFindings checks the listen findings of Npgsql's
// notification API: their place, their severity for each target, and that
// they follow the rule selection and the other-database filter.
func TestSubscriptionFindings(t *testing.T) {
	src := []byte("using Npgsql;\nclass L {\n  async Task Run(NpgsqlConnection conn, NpgsqlConnection other) {\n    conn.Notification += OnNote;\n    await other.WaitAsync();\n  }\n}\n")
	for _, tc := range []struct {
		target rules.Target
		sev    rules.Severity
		breaks bool
	}{
		{rules.PgBouncer, rules.Error, true},
		{rules.PgPoolCheck, rules.Warning, false},
		{rules.PgDog, rules.Info, false},
	} {
		cfg := &Config{Target: tc.target}
		res, err := cfg.AnalyzeCode("Listener.cs", src, extract.CSharp)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 2 {
			t.Fatalf("%s: %d findings: %+v", tc.target, len(res.Findings), res.Findings)
		}
		for i, want := range []struct {
			line, col, endCol int
			stmt              string
		}{{4, 10, 22, "conn.Notification += …"}, {5, 17, 26, "other.WaitAsync(…)"}} {
			f := res.Findings[i]
			if f.Statement != want.stmt {
				t.Errorf("%s: finding %d: statement %q, want %q", tc.target, i, f.Statement, want.stmt)
			}
			if f.Rule != "listen" || f.Severity != tc.sev || f.Line != want.line || f.Column != want.col || f.EndColumn != want.endCol {
				t.Errorf("%s: finding %d: %s %s at %d:%d-%d, want listen %s at %d:%d-%d", tc.target, i, f.Rule, f.Severity, f.Line, f.Column, f.EndColumn, tc.sev, want.line, want.col, want.endCol)
			}
			if got := strings.Contains(f.Message, "next client"); got != tc.breaks {
				t.Errorf("%s: message %q", tc.target, f.Message)
			}
		}
	}
	// A handler and a wait on one connection are one listener: one
	// finding, at the first.
	one := []byte("using Npgsql;\nclass L {\n  async Task Run(NpgsqlConnection conn) {\n    conn.Notification += OnNote;\n    await conn.WaitAsync();\n  }\n}\n")
	if res, err := (&Config{}).AnalyzeCode("Listener.cs", one, extract.CSharp); err != nil || len(res.Findings) != 1 || res.Findings[0].Line != 4 {
		t.Errorf("handler and wait on one connection: %v, %+v", err, res.Findings)
	}
	none := map[string]*Config{
		"listen disabled": {Rules: []*rules.Rule{rules.SessionSet}},
		"other database":  {},
	}
	for what, cfg := range none {
		name := "Listener.cs"
		if what == "other database" {
			name = "Sqlite/Listener.cs"
		}
		res, err := cfg.AnalyzeCode(name, src, extract.CSharp)
		if err != nil || len(res.Findings) != 0 {
			t.Errorf("%s: %v %+v", what, err, res.Findings)
		}
	}
}
