package rules_test

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestPairingOneTransaction runs the pairing rules over a group of
// statements, as one transaction and as statements of their own: only
// the statements of one transaction share a server connection, so only
// they pair.
func TestPairingOneTransaction(t *testing.T) {
	tests := []struct {
		name, sql string
		explicit  bool
		want      string // rule:severity of each finding, in order
	}{
		{"prepare and execute apart", "PREPARE q AS SELECT 1; EXECUTE q", false, "sql-prepare:error sql-prepare:error"},
		{"prepare and execute together", "PREPARE q AS SELECT 1; EXECUTE q", true, "sql-prepare:error"},
		{"execute after deallocate", "PREPARE q AS SELECT 1; DEALLOCATE q; EXECUTE q", true, "sql-prepare:error"},
		{"prepared and deallocated", "PREPARE q AS SELECT 1; EXECUTE q; DEALLOCATE q", true, ""},
		{"deallocate all of nothing", "DEALLOCATE ALL", true, "sql-prepare:info"},
		{"listen and unlisten apart", "LISTEN a; UNLISTEN a", false, "listen:error listen:info"},
		{"listen and unlisten together", "LISTEN a; UNLISTEN a", true, ""},
		{"unlisten of another channel", "LISTEN a; UNLISTEN b", true, "listen:error listen:info"},
		{"lock and unlock apart", "SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)", false, "advisory-lock-session:info advisory-lock-session:error"},
		{"lock and unlock together", "SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)", true, "advisory-lock-session:warning"},
		{"unlock all", "SELECT pg_advisory_lock(1), pg_advisory_lock_shared($1); SELECT pg_advisory_unlock_all()", true, "advisory-lock-session:warning advisory-lock-session:warning"},
		{"temp dropped", "CREATE TEMP TABLE t (a int); DROP TABLE t", true, ""},
		{"temp dropped apart", "CREATE TEMP TABLE t (a int); DROP TABLE t", false, "temp-table:error"},
		{"temp of another name dropped", "CREATE TEMP TABLE t (a int); DROP TABLE u", true, "temp-table:error"},
		{"cursor closed", "DECLARE c CURSOR WITH HOLD FOR SELECT 1; CLOSE c", true, ""},
		{"other cursor closed", "DECLARE c CURSOR WITH HOLD FOR SELECT 1; CLOSE d", true, "cursor-with-hold:error"},
		{"close all", "DECLARE c CURSOR WITH HOLD FOR SELECT 1; CLOSE ALL", true, ""},
		{"set and reset", "SET work_mem = '1MB'; RESET work_mem", true, ""},
		{"set and reset apart", "SET work_mem = '1MB'; RESET work_mem", false, "session-set:error session-set:warning"},
		{"set twice and reset", "SET work_mem = '1MB'; SET work_mem = '2MB'; RESET work_mem", true, ""},
		{"set twice", "SET work_mem = '1MB'; SET work_mem = '2MB'", true, "session-set:error session-set:error"},
		{"reset all", "SET work_mem = '1MB'; SELECT set_config('app.x', '1', false); RESET ALL", true, ""},
		{"reset of another name", "SET work_mem = '1MB'; RESET search_path", true, "session-set:error session-set:warning"},
		{"reset undone by a savepoint", "SET work_mem = '1MB'; SAVEPOINT s; RESET work_mem; ROLLBACK TO s", true, "session-set:error"},
		{"set role and reset", "SET ROLE admin; RESET ROLE", true, ""},
		{"reset all keeps the role", "SET ROLE admin; RESET ALL", true, "session-set:warning session-role:critical"},
	}
	var checks []*rules.Rule
	for _, id := range []string{"sql-prepare", "listen", "advisory-lock-session", "temp-table", "cursor-with-hold", "session-set", "session-role"} {
		checks = append(checks, rules.Lookup(id))
	}
	funcs := rules.InterestingFuncs(checks)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.sql)
			g := &rules.Group{Explicit: tt.explicit}
			for _, c := range sqlparse.Split(src).Chunks {
				for _, s := range sqlparse.ParseChunk(src, c) {
					g.Stmts = append(g.Stmts, rules.NewStmt(&s, funcs))
				}
			}
			var got []string
			for _, r := range checks {
				rules.NewPass(r, rules.Generic, g, func(f rules.Finding) {
					got = append(got, f.Rule.ID+":"+f.Severity.String())
				}).Run()
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}
