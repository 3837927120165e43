package traffic

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// describeFacts renders the non-empty facts, for comparing.
func describeFacts(f *facts) string {
	var out []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			out = append(out, name+"="+strings.Join(v, ","))
		}
	}
	flag := func(name string, v bool) {
		if v {
			out = append(out, name)
		}
	}
	for _, e := range f.changes {
		c := e.Kind.String()
		switch {
		case e.Arg != "":
			c += "=" + e.Arg
		case e.Name != "":
			c += "=" + e.Name
		}
		if e.Local {
			c += "(local)"
		}
		out = append(out, c)
	}
	add("read", f.reads)
	add("rel", f.rels)
	add("cursor", f.cursors)
	add("execute", f.executes)
	add("nextval", f.nextvals)
	add("currval", f.currvals)
	flag("lastval", f.lastval)
	flag("insert", f.insert)
	flag("rollback", f.rollback)
	flag("rollback-to", f.rollbackTo)
	flag("ends", f.ends)
	return strings.Join(out, " ")
}

func TestStatementFacts(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SET search_path = app", "set-param=search_path"},
		{"SET SESSION statement_timeout TO 5000", "set-param=statement_timeout"},
		{"SET LOCAL statement_timeout = 5000", "set-param=statement_timeout(local)"},
		{"SET TIME ZONE 'UTC'", "set-param=timezone"},
		{"SET NAMES 'UTF8'", "set-param=client_encoding"},
		{"SET SCHEMA 'app'", "set-param=search_path"},
		{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", ""},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE", "set-param=default_transaction_isolation"},
		{"RESET work_mem", "reset-param=work_mem"},
		{"SET work_mem TO DEFAULT", "reset-param=work_mem"},
		{"RESET ALL", "reset-all"},
		{"SET ROLE app_admin", "set-role=role"},
		{"SET SESSION AUTHORIZATION alice", "session-auth=session_authorization"},
		{"SET LOCAL ROLE app_admin", "set-role=role(local)"},
		{"RESET ROLE", "reset-role=role"},
		{"SET ROLE NONE", "reset-role=role"},
		{"SELECT set_config('app.tenant', '1', false)", "set-param=app.tenant"},
		{"SELECT set_config('App.Tenant', $1, $2)", "set-param=app.tenant"},
		{"SELECT set_config('app.tenant', '1', true)", "set-param=app.tenant(local)"},
		{"SELECT set_config('role', 'x', false)", "set-role=role"},
		{"SELECT set_config($1, '1', false)", "set-param"},
		{"UPDATE pg_settings SET setting = '1' WHERE name = 'work_mem'", "set-param=work_mem rel=pg_settings"},
		{"SHOW search_path", "read=search_path"},
		{"SELECT current_setting('app.tenant')", "read=app.tenant"},
		{"SELECT pg_advisory_lock(42)", "advisory-lock=i42"},
		{"SELECT pg_try_advisory_lock_shared(1, 2)", "advisory-lock=i1,i2"},
		{"SELECT pg_advisory_lock($1)", "advisory-lock=$1"},
		{"SELECT pg_advisory_lock(hashtext(name)) FROM jobs", "advisory-lock=? rel=jobs"},
		{"SELECT pg_advisory_unlock(42)", "advisory-unlock=i42"},
		{"SELECT pg_advisory_unlock_all()", "advisory-unlock-all"},
		{"SELECT pg_advisory_xact_lock(42)", ""},
		{"SELECT myschema.pg_advisory_lock(42)", ""},
		{"LISTEN jobs", "listen=jobs"},
		{"UNLISTEN jobs", "unlisten=jobs"},
		{"UNLISTEN *", "unlisten-all"},
		{"NOTIFY jobs", ""},
		{"CREATE TEMP TABLE t (id int)", "create-temp=t rel=t"},
		{"CREATE TEMPORARY TABLE t (id int) ON COMMIT DROP", "create-temp=t(local) rel=t"},
		{"CREATE TABLE pg_temp.t (id int)", "create-temp=t rel=t"},
		{"CREATE TEMP TABLE t AS SELECT * FROM src", "create-temp=t rel=src,t"},
		{"SELECT * INTO TEMP t FROM src", "create-temp=t rel=t,src"},
		{"CREATE TEMP VIEW v AS SELECT 1", "create-temp=v rel=v"},
		{"CREATE TEMP SEQUENCE s", "create-temp=s rel=s"},
		{"DROP TABLE IF EXISTS t, app.u, pg_temp.w", "drop-temp=t drop-temp=w"},
		{"DROP TABLE pg_temp_3.t", "drop-temp=t"},
		{"CREATE VIEW v AS SELECT pg_advisory_lock(1)", "rel=v"},
		{"INSERT INTO t SELECT * FROM u", "rel=t,u insert"},
		{"DECLARE c CURSOR WITH HOLD FOR SELECT 1", "declare-hold=c"},
		{"DECLARE c CURSOR FOR SELECT 1", ""},
		{"FETCH 10 FROM c", "cursor=c"},
		{"MOVE NEXT IN c", "cursor=c"},
		{"CLOSE c", "close-cursor=c cursor=c"},
		{"CLOSE ALL", "close-all"},
		{"PREPARE q AS SELECT 1", "prepare=q"},
		{"EXECUTE q", "execute=q"},
		{"EXPLAIN ANALYZE EXECUTE q", "execute=q"},
		{"CREATE TABLE x AS EXECUTE q", "rel=x execute=q"},
		{"DEALLOCATE q", "deallocate=q execute=q"},
		{"DEALLOCATE ALL", "deallocate-all"},
		{"SELECT nextval('orders_id_seq')", "nextval=sorders_id_seq"},
		{"SELECT currval('orders_id_seq'::regclass)", "currval=sorders_id_seq"},
		{"SELECT lastval()", "lastval"},
		{"DISCARD ALL", "discard-all"},
		{"DISCARD TEMP", "discard-temp"},
		{"ROLLBACK", "rollback ends"},
		{"COMMIT", "ends"},
		{"COMMIT AND CHAIN", ""},
		{"ROLLBACK TO SAVEPOINT a", "rollback-to"},
		{"SELECT 'SET search_path = x' -- LISTEN jobs", ""},
	}
	interesting := append(rules.InterestingFuncs(rules.All()), effects.Funcs...)
	for _, tt := range tests {
		src := []byte(tt.sql)
		chunks := sqlparse.Split(src).Chunks
		if len(chunks) != 1 {
			t.Fatalf("%s: %d chunks", tt.sql, len(chunks))
		}
		sts := sqlparse.ParseChunk(src, chunks[0])
		if len(sts) != 1 || sts[0].Err != nil {
			t.Fatalf("%s: does not parse", tt.sql)
		}
		if got := describeFacts(statementFacts(rules.NewStmt(&sts[0], interesting))); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.sql, got, tt.want)
		}
	}
}

// TestStateRules checks that every kind of state analyze follows has a
// rule that judges what became of it (rules.Crossing).
func TestStateRules(t *testing.T) {
	kinds := map[itemKind]bool{}
	for _, kind := range stateRules {
		kinds[kind] = true
	}
	for _, kind := range itemKinds {
		if !kinds[kind] {
			t.Errorf("no rule judges state of item kind %d", kind)
		}
	}
	if len(stateRules) != 7 {
		t.Errorf("stateRules = %v, want the seven rules of followed state", stateRules)
	}
}
