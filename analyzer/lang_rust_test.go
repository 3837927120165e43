package analyzer

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestSessionCallFindings checks the findings of sqlx's session APIs: their
// rule, place and severity for each target, and that they follow the rule
// selection and the other-database filter.
func TestSessionCallFindings(t *testing.T) {
	src := []byte("use sqlx::postgres::{PgListener, PgAdvisoryLock};\n" +
		"async fn f(pool: &sqlx::PgPool, c: &mut PgConnection) {\n" +
		"    let mut l = PgListener::connect_with(pool).await?;\n" +
		"    l.listen(\"jobs\").await?;\n" +
		"    PgAdvisoryLock::new(\"x\").acquire(c).await?;\n" +
		"    sqlx::migrate!().run(pool).await?;\n" +
		"}\n")
	type want struct {
		rule        string
		sev         rules.Severity
		line, col   int
		stmt, inMsg string
	}
	for _, tc := range []struct {
		target rules.Target
		want   []want
	}{
		{rules.PgBouncer, []want{
			{"listen", rules.Error, 4, 7, "l.listen(…)", "next client"},
			{"advisory-lock-session", rules.Error, 5, 30, "PgAdvisoryLock::new(…).acquire(…)", "held for its next client"},
			{"advisory-lock-session", rules.Warning, 6, 22, "sqlx::migrate!().run(…)", "next migration run waits"},
		}},
		{rules.PgDog, []want{
			{"listen", rules.Info, 4, 7, "l.listen(…)", "PgListener"},
			{"advisory-lock-session", rules.Warning, 5, 30, "PgAdvisoryLock::new(…).acquire(…)", "pg_advisory_lock"},
			{"advisory-lock-session", rules.Warning, 6, 22, "sqlx::migrate!().run(…)", "locks by default"},
		}},
	} {
		cfg := &Config{Target: tc.target}
		res, err := cfg.AnalyzeCode("worker.rs", src, extract.Rust)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != len(tc.want) {
			t.Fatalf("%s: %d findings: %+v", tc.target, len(res.Findings), res.Findings)
		}
		for i, w := range tc.want {
			f := res.Findings[i]
			if f.Rule != w.rule || f.Severity != w.sev || f.Line != w.line || f.Column != w.col || f.Statement != w.stmt {
				t.Errorf("%s: finding %d: %s %s at %d:%d %q, want %s %s at %d:%d %q", tc.target, i, f.Rule, f.Severity, f.Line, f.Column, f.Statement, w.rule, w.sev, w.line, w.col, w.stmt)
			}
			if !strings.Contains(f.Message, w.inMsg) {
				t.Errorf("%s: finding %d: message %q lacks %q", tc.target, i, f.Message, w.inMsg)
			}
		}
	}
	for what, tc := range map[string]struct {
		cfg   *Config
		name  string
		rules []string
	}{
		"listen only":    {&Config{Rules: []*rules.Rule{rules.Listen}}, "worker.rs", []string{"listen"}},
		"locks only":     {&Config{Rules: []*rules.Rule{rules.AdvisoryLockSession}}, "worker.rs", []string{"advisory-lock-session", "advisory-lock-session"}},
		"neither":        {&Config{Rules: []*rules.Rule{rules.SessionSet}}, "worker.rs", nil},
		"other database": {&Config{}, "sqlite/worker.rs", nil},
	} {
		res, err := tc.cfg.AnalyzeCode(tc.name, src, extract.Rust)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			got = append(got, f.Rule)
		}
		if strings.Join(got, ",") != strings.Join(tc.rules, ",") {
			t.Errorf("%s: rules %v, want %v", what, got, tc.rules)
		}
	}
}

// TestTestTransactionHelpersAcrossFiles checks that a diesel test helper
// defined in one file (a connection inside a test transaction) makes the
// SQL after its call in another test file a rolled-back transaction, and
// that a file with its own function of that name is not affected.
func TestTestTransactionHelpersAcrossFiles(t *testing.T) {
	inputs := []Input{
		{Name: "tests/schema/mod.rs", Data: []byte("pub fn connection() -> PgConnection {\n" +
			"    let mut c = PgConnection::establish(&url()).unwrap();\n" +
			"    c.begin_test_transaction().unwrap();\n    c\n}\n")},
		{Name: "tests/update.rs", Data: []byte("#[test]\nfn t() {\n" +
			"    let conn = &mut crate::schema::connection();\n" +
			"    diesel::sql_query(\"CREATE TEMPORARY TABLE users (id int)\").execute(conn).unwrap();\n}\n")},
		{Name: "tests/notify.rs", Data: []byte("fn connection() -> PgConnection { PgConnection::establish(&url()).unwrap() }\n" +
			"#[test]\nfn t() {\n    let conn = &mut connection();\n" +
			"    diesel::sql_query(\"CREATE TEMPORARY TABLE seen (id int)\").execute(conn).unwrap();\n}\n")},
	}
	rep, err := (&Config{}).Scan(inputs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.File+":"+f.Rule)
	}
	if want := "tests/notify.rs:temp-table"; strings.Join(got, " ") != want {
		t.Errorf("findings %v, want [%s]", got, want)
	}
}
