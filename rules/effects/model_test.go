package effects

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// render describes the effects of one statement for the table tests:
// kind name [object] via func raw=… @text-at-location, and the flags.
func render(sql string, effs []Effect) string {
	var parts []string
	for _, e := range effs {
		s := e.Kind.String()
		if e.Name != "" {
			s += " " + e.Name
		}
		if e.Object != "" {
			s += " [" + e.Object + "]"
		}
		if e.Via != ViaStatement {
			s += fmt.Sprintf(" via=%d", e.Via)
		}
		if e.Raw != "" {
			s += " raw=" + e.Raw
		}
		if e.Arg != "" {
			s += " arg=" + e.Arg
		}
		for _, f := range []struct {
			on   bool
			name string
		}{{e.Local, "local"}, {e.MaybeLocal, "maybe-local"}, {e.DeleteRows, "delete-rows"}} {
			if f.on {
				s += " " + f.name
			}
		}
		if e.Location >= 0 {
			end := min(int(e.Location)+8, len(sql))
			s += " @" + sql[e.Location:end]
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// TestOf covers the fields the SQL rules read: the form of the statement
// (Via), the location of the node, the raw value, the scope flags, and
// the reads.
func TestOf(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SET search_path = app", "set-param search_path via=1 raw=app"},
		{"SET LOCAL work_mem = '1MB'", "set-param work_mem via=1 raw=1MB local"},
		{"SET work_mem TO DEFAULT", "reset-param work_mem via=2"},
		{"RESET work_mem", "reset-param work_mem via=3"},
		{"RESET ALL", "reset-all via=3"},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "set-param default_transaction_read_only via=4"},
		{"SELECT set_config('app.t', $1, false)", "set-param app.t via=5 @set_conf"},
		{"SELECT set_config('app.t', '7', $2)", "set-param app.t via=5 raw=7 maybe-local @set_conf"},
		{"SELECT set_config($1, '7', true)", "set-param via=5 raw=7 local @set_conf"},
		{"UPDATE pg_settings SET setting = '5s' WHERE name = 'statement_timeout'", "set-param statement_timeout via=6 raw=5s @pg_setti"},
		{"SET ROLE admin", "set-role role via=1 raw=admin"},
		{"SET ROLE NONE", "reset-role role via=1"},
		{"RESET ROLE", "reset-role role via=3"},
		{"SET SESSION AUTHORIZATION DEFAULT", "reset-session-auth session_authorization via=2"},
		{"SELECT set_config('role', 'none', false)", "reset-role role via=5 @set_conf"},
		{"SELECT pg_advisory_lock(1, 2), pg_advisory_unlock_all()", "advisory-lock via=7 arg=i1,i2 @pg_advis; advisory-unlock-all via=7 @pg_advis"},
		{"SELECT pg_try_advisory_lock($1)", "advisory-lock via=7 arg=$1 @pg_try_a"},
		{"EXPLAIN SELECT pg_advisory_lock(1)", ""},
		{"CREATE VIEW v AS SELECT pg_advisory_lock(1)", "routine-change"},
		{"SELECT app.pg_advisory_lock(1)", "call-routine app.pg_advisory_lock @app.pg_a"},
		{"CREATE TEMP TABLE t (id int) ON COMMIT DELETE ROWS", "create-temp t [table] delete-rows @t (id in"},
		{"CREATE TEMP TABLE t (id int) ON COMMIT DROP", "create-temp t [table] local @t (id in"},
		{"CREATE TABLE pg_temp_7.t (id int)", "create-temp t [table] @pg_temp_"},
		{"CREATE TABLE pg_temp_backup.t (id int)", "routine-change"},
		{"CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "routine-change; create-temp f [function]"},
		{"DROP FUNCTION pg_temp.f(), app.g()", "drop-temp f [function]; routine-change"},
		{"DROP FUNCTION f()", "routine-change"},
		{"DROP TYPE pair, app.other", "drop-temp pair [type]"},
		{"DROP TABLE IF EXISTS t, public.u, pg_temp.v", "drop-temp t [table]; drop-temp v [table]"},
		{"SELECT currval('public.\"Orders_id_seq\"'), lastval()", "currval orders_id_seq via=7 raw=public.\"Orders_id_seq\" arg=spublic.\"orders_id_seq\" @currval(; lastval via=7 @lastval("},
		{"SELECT setval('s', 10), nextval($1)", "setval s via=7 raw=s arg=ss @setval('; nextval via=7 arg=$1 @nextval("},
		{"SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()", "backend-identity pg_backend_pid via=7 @pg_backe"},
		{"COPY t FROM STDIN", "insert"},
		{"COPY t TO STDOUT", ""},
		{"EXPLAIN EXECUTE q(1)", "execute-prepared q"},
		{"CREATE TABLE t2 AS EXECUTE q(1)", "execute-prepared q"},
		{"SHOW TimeZone", "read-param timezone"},
		{"SELECT current_setting('app.t')", "read-param app.t via=7 @current_"},
		{"DECLARE c CURSOR WITH HOLD FOR SELECT 1", "declare-hold c"},
		{"DECLARE c CURSOR FOR SELECT 1", ""},
		{"LOAD 'auto_explain'", "load auto_explain"},
	}
	for _, tt := range tests {
		res, err := sqlparse.Parse(tt.sql)
		if err != nil || len(res.Stmts) != 1 {
			t.Fatalf("%q: %v", tt.sql, err)
		}
		st := NewStmt(&sqlparse.Statement{Start: 0, End: len(tt.sql), Text: tt.sql, Node: res.Stmts[0].Stmt})
		effs := append(append(append([]Effect{}, st.Changes()...), st.Routines()...), st.Reads()...)
		if got := render(tt.sql, effs); got != tt.want {
			t.Errorf("%s\n  got  %s\n  want %s", tt.sql, got, tt.want)
		}
	}
}

// TestIsPgTemp checks the names of the temporary schema.
func TestIsPgTemp(t *testing.T) {
	for name, want := range map[string]bool{
		"pg_temp": true, "PG_TEMP": true, "pg_temp_3": true, "pg_temp_42": true,
		"pg_temp_": false, "pg_temp_backup": false, "pg_temp_3a": false, "pg_toast_temp_3": false, "public": false,
	} {
		if got := isPgTemp(name); got != want {
			t.Errorf("isPgTemp(%q) = %v, want %v", name, got, want)
		}
	}
}
