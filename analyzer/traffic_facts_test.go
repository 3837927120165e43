package analyzer

import (
	"fmt"
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
	add("set", f.sets)
	add("reset", f.resets)
	flag("reset-all", f.resetAll)
	flag("role", f.role)
	flag("reset-role", f.resetRole)
	add("read", f.reads)
	add("lock", f.locks)
	add("unlock", f.unlocks)
	flag("unlock-all", f.unlockAll)
	add("listen", f.listens)
	add("unlisten", f.unlistens)
	flag("unlisten-all", f.unlistenAll)
	for _, t := range f.temps {
		out = append(out, fmt.Sprintf("temp=%s(drop:%v)", t.name, t.commitDrop))
	}
	add("drop", f.drops)
	add("rel", f.rels)
	add("hold", f.holds)
	add("cursor", f.cursors)
	flag("close-all", f.closeAll)
	add("prepare", f.prepares)
	add("execute", f.executes)
	add("dealloc", f.deallocs)
	flag("dealloc-all", f.deallocAll)
	add("nextval", f.nextvals)
	add("currval", f.currvals)
	flag("lastval", f.lastval)
	flag("insert", f.insert)
	flag("discard-all", f.discardAll)
	flag("discard-temp", f.discardTemp)
	flag("rollback", f.rollback)
	flag("rollback-to", f.rollbackTo)
	flag("ends", f.ends)
	return strings.Join(out, " ")
}

func TestStatementFacts(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SET search_path = app", "set=search_path"},
		{"SET SESSION statement_timeout TO 5000", "set=statement_timeout"},
		{"SET LOCAL statement_timeout = 5000", ""},
		{"SET TIME ZONE 'UTC'", "set=timezone"},
		{"SET NAMES 'UTF8'", "set=client_encoding"},
		{"SET SCHEMA 'app'", "set=search_path"},
		{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", ""},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE", "set=default_transaction_isolation"},
		{"RESET work_mem", "reset=work_mem"},
		{"SET work_mem TO DEFAULT", "reset=work_mem"},
		{"RESET ALL", "reset-all"},
		{"SET ROLE app_admin", "role"},
		{"SET SESSION AUTHORIZATION alice", "role"},
		{"SET LOCAL ROLE app_admin", ""},
		{"RESET ROLE", "reset-role"},
		{"SET ROLE NONE", "reset-role"},
		{"SELECT set_config('app.tenant', '1', false)", "set=app.tenant"},
		{"SELECT set_config('App.Tenant', $1, $2)", "set=app.tenant"},
		{"SELECT set_config('app.tenant', '1', true)", ""},
		{"SELECT set_config('role', 'x', false)", "role"},
		{"SELECT set_config($1, '1', false)", "set=?"},
		{"UPDATE pg_settings SET setting = '1' WHERE name = 'work_mem'", "set=work_mem rel=pg_settings"},
		{"SHOW search_path", "read=search_path"},
		{"SELECT current_setting('app.tenant')", "read=app.tenant"},
		{"SELECT pg_advisory_lock(42)", "lock=i42"},
		{"SELECT pg_try_advisory_lock_shared(1, 2)", "lock=i1,i2"},
		{"SELECT pg_advisory_lock($1)", "lock=$1"},
		{"SELECT pg_advisory_lock(hashtext(name)) FROM jobs", "lock=? rel=jobs"},
		{"SELECT pg_advisory_unlock(42)", "unlock=i42"},
		{"SELECT pg_advisory_unlock_all()", "unlock-all"},
		{"SELECT pg_advisory_xact_lock(42)", ""},
		{"SELECT myschema.pg_advisory_lock(42)", ""},
		{"LISTEN jobs", "listen=jobs"},
		{"UNLISTEN jobs", "unlisten=jobs"},
		{"UNLISTEN *", "unlisten-all"},
		{"NOTIFY jobs", ""},
		{"CREATE TEMP TABLE t (id int)", "temp=t(drop:false) rel=t"},
		{"CREATE TEMPORARY TABLE t (id int) ON COMMIT DROP", "temp=t(drop:true) rel=t"},
		{"CREATE TABLE pg_temp.t (id int)", "temp=t(drop:false) rel=t"},
		{"CREATE TEMP TABLE t AS SELECT * FROM src", "temp=t(drop:false) rel=src,t"},
		{"SELECT * INTO TEMP t FROM src", "temp=t(drop:false) rel=t,src"},
		{"CREATE TEMP VIEW v AS SELECT 1", "temp=v(drop:false) rel=v"},
		{"CREATE TEMP SEQUENCE s", "temp=s(drop:false) rel=s"},
		{"DROP TABLE IF EXISTS t, app.u, pg_temp.w", "drop=t,w"},
		{"DROP TABLE pg_temp_3.t", "drop=t"},
		{"CREATE VIEW v AS SELECT pg_advisory_lock(1)", "rel=v"},
		{"INSERT INTO t SELECT * FROM u", "rel=t,u insert"},
		{"DECLARE c CURSOR WITH HOLD FOR SELECT 1", "hold=c"},
		{"DECLARE c CURSOR FOR SELECT 1", ""},
		{"FETCH 10 FROM c", "cursor=c"},
		{"MOVE NEXT IN c", "cursor=c"},
		{"CLOSE c", "cursor=c"},
		{"CLOSE ALL", "close-all"},
		{"PREPARE q AS SELECT 1", "prepare=q"},
		{"EXECUTE q", "execute=q"},
		{"EXPLAIN ANALYZE EXECUTE q", "execute=q"},
		{"CREATE TABLE x AS EXECUTE q", "rel=x execute=q"},
		{"DEALLOCATE q", "dealloc=q"},
		{"DEALLOCATE ALL", "dealloc-all"},
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
