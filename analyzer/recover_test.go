package analyzer

import (
	"slices"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
)

// TestRunTimeMark checks that the interpolation placeholder is what the
// effects model takes for a name completed at run time
// (pg_advisory_{kind}).
func TestRunTimeMark(t *testing.T) {
	if !strings.HasPrefix(extract.Placeholder, "pgpoolcheck_") {
		t.Fatalf("extract.Placeholder %q does not start with the effects model's run-time mark", extract.Placeholder)
	}
}

// TestRecoveredHeads checks the literals that do not parse and are read by
// their words: the rules reported for one Go line each.
func TestRecoveredHeads(t *testing.T) {
	for _, tt := range []struct {
		code string
		want []string
	}{
		{`b.WriteString("SET statement_timeout = ")`, []string{"session-set"}},
		{`b.WriteString("SET search_path TO ")`, []string{"session-set"}},
		{`b.WriteString("SET LOCAL search_path TO ")`, nil},
		{`b.WriteString("SET nocount = ")`, nil}, // not a PostgreSQL parameter
		{`b.WriteString("RESET search_path ")`, []string{"session-set"}},
		{`b.WriteString("CREATE TEMP TABLE ")`, []string{"temp-table"}},
		{`b.WriteString("CREATE TEMPORARY VIEW ")`, []string{"temp-table"}},
		{`b.WriteString("CREATE TABLE ")`, nil},
		// A whole statement of another dialect is not read by its words.
		{`q := "CREATE TEMPORARY TABLE t (id integer PRIMARY KEY AUTOINCREMENT, name text)"`, nil},
		{`b.WriteString("LISTEN ")`, []string{"listen"}},
		{`names := []string{"LISTEN"}`, nil},
		{`b.WriteString("PREPARE stmt_x AS ")`, []string{"sql-prepare"}},
		{`db.Exec(ctx, "SET "+name+" = "+value)`, []string{"session-set"}},
		{`db.Exec(ctx, "SELECT pg_advisory_"+kind+"(1)")`, []string{"advisory-lock-session"}},
		{`db.Exec(ctx, "SELECT pg_advisory_xact_lock(1)")`, nil},
		// Interpolations where a keyword goes, or junk around a call.
		{`db.Exec(ctx, "WITH j AS "+m+" (SELECT 1 AS id) SELECT pg_try_advisory_lock(id) FROM j")`, []string{"advisory-lock-session"}},
		{`db.Exec(ctx, "SELECT pg_advisory_lock("+k+") "+a+" "+b+" WHERE AND")`, []string{"advisory-lock-session"}},
		{`db.Exec(ctx, "SELECT set_config('search_path', "+s+", false) "+a+" "+b+" WHERE AND")`, []string{"session-set"}},
		{`db.Exec(ctx, "SELECT pg_advisory_xact_lock("+k+") "+a+" "+b+" WHERE AND")`, nil},
		{`db.Exec(ctx, "SELECT set_config('x.y', "+s+", true) "+a+" "+b+" WHERE AND")`, nil},
	} {
		src := "package p\n\nfunc f() {\n\t" + tt.code + "\n}\n"
		res, err := (&Config{}).AnalyzeCode("x.go", []byte(src), extract.Go)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			got = append(got, f.Rule)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: rules %v, want %v", tt.code, got, tt.want)
		}
	}
}
