package classify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// describe renders an effect compactly for the table tests:
// kind name=value [object] [local] [dynamic] [key=K|key=?] [pair] [shared] [try].
func describe(e effects.Effect) string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	if e.Name != "" {
		b.WriteString(" " + e.Name)
	}
	if e.Value != "" {
		b.WriteString("=" + e.Value)
	}
	if e.Object != "" {
		b.WriteString(" [" + e.Object + "]")
	}
	if e.Local {
		b.WriteString(" local")
	}
	if e.Dynamic {
		b.WriteString(" dynamic")
	}
	if e.Kind == effects.AdvisoryLock || e.Kind == effects.AdvisoryUnlock {
		if e.KeyKnown {
			fmt.Fprintf(&b, " key=%d", e.Key)
		} else {
			b.WriteString(" key=?")
		}
	}
	if e.Pair {
		b.WriteString(" pair")
	}
	if e.Shared {
		b.WriteString(" shared")
	}
	if e.Try {
		b.WriteString(" try")
	}
	return b.String()
}

func describeAll(r Result) string {
	if r.ParseError {
		return "parse-error"
	}
	var parts []string
	for _, e := range r.Effects {
		parts = append(parts, describe(e))
	}
	return strings.Join(parts, "; ")
}

var cases = []struct {
	sql  string
	want string // effects joined with "; "; "" for none
}{
	// Ordinary statements: no effect (and no parse, see TestPrefilter).
	{"SELECT 1", ""},
	{"select * from users where id = $1", ""},
	{"INSERT INTO t (a) VALUES (1) RETURNING id", ""},
	{"UPDATE accounts SET balance = balance - 1 WHERE id = 2", ""},
	{"DELETE FROM t WHERE reset_at < now()", ""},
	{"SELECT pg_advisory_xact_lock(1)", ""},
	{"SELECT pg_try_advisory_xact_lock(1, 2)", ""},
	{"BEGIN", ""},
	{"COMMIT", ""},
	// Keywords in comments, strings and identifiers are not statements.
	{"-- SET work_mem = '1GB'\nSELECT 1", ""},
	{"/* LISTEN ch; SELECT pg_advisory_lock(1) */ SELECT 1", ""},
	{"SELECT 'SET work_mem = 1; LISTEN x; pg_advisory_lock(1)'", ""},
	{"SELECT $$ SELECT pg_advisory_lock(42) $$", ""},
	{"SELECT 'temp' AS temp, \"set_config\" FROM t", ""},
	{"SELECT E'it\\'s; SET a = 1'", ""},
	{"SELECT settings, offset_temp FROM temp_results", ""},
	{"SELECT * FROM t WHERE note = 'DISCARD ALL'", ""},
	{"NOTIFY ch, 'LISTEN'", ""},
	{"SELECT pg_notify('ch', 'x')", ""},
	{"SELECT myschema.pg_advisory_lock(1)", "call-routine myschema.pg_advisory_lock"},
	{"EXPLAIN SELECT pg_advisory_lock(1)", ""},
	{"CREATE VIEW v AS SELECT pg_advisory_lock(1)", "routine-change"},
	{"CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $$ SELECT pg_advisory_lock(1) $$", "routine-change"},
	{"PREPARE TRANSACTION 'x'", ""},
	{"DECLARE c CURSOR FOR SELECT 1", ""},
	{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", ""},
	{"SET CONSTRAINTS ALL DEFERRED", ""},
	{"ALTER ROLE app SET search_path = a", ""},
	{"ALTER DATABASE d SET work_mem = '1GB'", ""},
	{"CREATE TABLE t (id int)", "routine-change"},
	{"CREATE UNLOGGED TABLE t (id int)", "routine-change"},
	{"DROP INDEX i", ""},
	{"DROP TABLE public.t", ""},

	// Parameters.
	{"SET work_mem = '64MB'", "set-param work_mem='64MB'"},
	{"set work_mem to 65536", "set-param work_mem=65536"},
	{"SET SESSION statement_timeout = 0", "set-param statement_timeout=0"},
	{"SET LOCAL statement_timeout = '5s'", "set-param statement_timeout='5s' local"},
	{"SET search_path TO \"$user\", public", "set-param search_path='$user', 'public'"},
	{"SET SCHEMA 'app'", "set-param search_path='app'"},
	{"SET TIME ZONE 'UTC'", "set-param timezone='UTC'"},
	{"SET TIME ZONE INTERVAL '+01:00' HOUR TO MINUTE", "set-param timezone=interval '+01:00' hour to minute"},
	{"SET NAMES 'UTF8'", "set-param client_encoding='UTF8'"},
	{"SET app.tenant_id = 42", "set-param app.tenant_id=42"},
	{"SET x.y = 1.5", "set-param x.y=1.5"},
	{"SET enable_seqscan = off", "set-param enable_seqscan='off'"},
	{"SET a.b = 'it''s \\ here'", "set-param a.b=E'it''s \\\\ here'"},
	{"SET work_mem TO DEFAULT", "reset-param work_mem"},
	{"RESET work_mem", "reset-param work_mem"},
	{"RESET ALL", "reset-all"},
	{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY",
		"set-param default_transaction_isolation='serializable'; set-param default_transaction_read_only=true"},
	{"SELECT set_config('app.user', 'alice', false)", "set-param app.user='alice'"},
	{"SELECT pg_catalog.set_config('search_path', 'a, \"B c\"', false)", "set-param search_path=a, \"B c\""},
	{"SELECT set_config('search_path', 'a; DROP', false)", "set-param search_path"},
	{"SELECT set_config('app.user', 'alice', true)", "set-param app.user='alice' local"},
	{"SELECT set_config('app.user', $1, false)", "set-param app.user dynamic"},
	{"SELECT set_config($1, $2, $3)", "set-param dynamic"},
	{"SELECT set_config('app.user', 'bob', 'off'::bool), 1", "set-param app.user='bob'"},
	{"UPDATE pg_settings SET setting = 'on' WHERE name = 'enable_hashjoin'", "set-param enable_hashjoin='on'"},
	{"UPDATE pg_catalog.pg_settings SET setting = $1 WHERE name = $2", "set-param dynamic"},

	// Role.
	{"SET ROLE admin", "set-role role='admin'"},
	{"SET LOCAL ROLE admin", "set-role role='admin' local"},
	{"SET ROLE NONE", "reset-role role"},
	{"RESET ROLE", "reset-role role"},
	{"SET SESSION AUTHORIZATION 'bob'", "session-auth session_authorization='bob'"},
	{"SET SESSION AUTHORIZATION DEFAULT", "reset-session-auth session_authorization"},
	{"RESET SESSION AUTHORIZATION", "reset-session-auth session_authorization"},
	{"SELECT set_config('role', 'admin', false)", "set-role role='admin'"},

	// Advisory locks.
	{"SELECT pg_advisory_lock(42)", "advisory-lock key=42"},
	{"SELECT pg_advisory_lock(-5)", "advisory-lock key=-5"},
	{"SELECT pg_advisory_lock(9223372036854775807)", "advisory-lock key=9223372036854775807"},
	{"SELECT pg_advisory_lock('42'::bigint)", "advisory-lock key=42"},
	{"SELECT pg_advisory_lock(1, 2)", "advisory-lock key=4294967298 pair"},
	{"SELECT pg_advisory_lock(-1, -1)", "advisory-lock key=-1 pair"},
	{"SELECT pg_advisory_lock($1)", "advisory-lock key=?"},
	{"SELECT pg_advisory_lock(hashtext('job'))", "advisory-lock key=?"},
	{"SELECT pg_try_advisory_lock(7)", "advisory-lock key=7 try"},
	{"SELECT pg_try_advisory_lock_shared(7)", "advisory-lock key=7 shared try"},
	{"SELECT PG_ADVISORY_LOCK_SHARED(7)", "advisory-lock key=7 shared"},
	{"SELECT pg_catalog.pg_advisory_unlock(7)", "advisory-unlock key=7"},
	{"SELECT pg_advisory_unlock_shared(1, 2)", "advisory-unlock key=4294967298 pair shared"},
	{"SELECT pg_advisory_unlock_all()", "advisory-unlock-all"},
	{"SELECT id FROM jobs WHERE pg_try_advisory_lock(id) LIMIT 1", "advisory-lock key=? try"},
	{"WITH l AS (SELECT pg_advisory_lock(3)) SELECT * FROM l", "advisory-lock key=3"},
	{"SELECT * FROM pg_advisory_lock(4)", "advisory-lock key=4"},
	{"EXPLAIN ANALYZE SELECT pg_advisory_lock(5)", "advisory-lock key=5"},
	{"SELECT pg_advisory_unlock(2), pg_advisory_lock(1)", "advisory-unlock key=2; advisory-lock key=1"},

	// LISTEN.
	{"LISTEN jobs", "listen jobs"},
	{"LISTEN \"Jobs\"", "listen Jobs"},
	{"UNLISTEN jobs", "unlisten jobs"},
	{"UNLISTEN *", "unlisten-all"},

	// Temporary objects.
	{"CREATE TEMP TABLE t (id int)", "create-temp t [table]"},
	{"CREATE TEMPORARY TABLE IF NOT EXISTS t (id int) ON COMMIT DELETE ROWS", "create-temp t [table]"},
	{"CREATE TEMP TABLE t (id int) ON COMMIT DROP", "create-temp t [table] local"},
	{"CREATE TEMP TABLE t AS SELECT 1", "create-temp t [table]"},
	{"CREATE TEMP VIEW v AS SELECT 1", "routine-change; create-temp v [view]"},
	{"CREATE TEMP SEQUENCE s", "create-temp s [sequence]"},
	{"SELECT 1 AS x INTO TEMP t", "create-temp t [table]"},
	{"SELECT 1 AS x INTO TEMPORARY TABLE t", "create-temp t [table]"},
	{"CREATE TABLE pg_temp.t (id int)", "create-temp t [table]"},
	{"CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "routine-change; create-temp f [function]"},
	{"DROP TABLE t", "drop-temp t [table]"},
	{"DROP TABLE IF EXISTS pg_temp.t, u, public.v", "drop-temp t [table]; drop-temp u [table]"},
	{"DROP VIEW v", "drop-temp v [view]"},

	// Cursors.
	{"DECLARE c CURSOR WITH HOLD FOR SELECT 1", "declare-hold c"},
	{"DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT pg_advisory_lock(1)", "declare-hold c; advisory-lock key=1"},
	{"CLOSE c", "close-cursor c"},
	{"CLOSE ALL", "close-all"},

	// Prepared statements, LOAD, DISCARD.
	{"PREPARE q (int) AS SELECT $1", "prepare q"},
	{"PREPARE q AS SELECT pg_advisory_lock(1)", "prepare q"},
	{"DEALLOCATE q", "deallocate q"},
	{"DEALLOCATE PREPARE q", "deallocate q"},
	{"DEALLOCATE ALL", "deallocate-all"},
	{"LOAD 'auto_explain'", "load auto_explain"},
	{"DISCARD ALL", "discard-all"},
	{"DISCARD TEMP", "discard-temp"},
	{"DISCARD PLANS", "discard-plans"},
	{"DISCARD SEQUENCES", "discard-sequences"},

	// Several statements, comments, case.
	{"SET a.b = 1; SELECT 2", "set-param a.b=1"},
	{"SELECT 1; set work_mem = '1MB'; LISTEN x; select pg_advisory_lock(9)", "set-param work_mem='1MB'; listen x; advisory-lock key=9"},
	{"BEGIN; SET LOCAL a.b = 1; SELECT pg_advisory_xact_lock(1); COMMIT", "set-param a.b=1 local"},
	{"/* hello */ SET a.b = 2 -- trailing", "set-param a.b=2"},
	{"-- c\n  /* nested /* comment */ SET x */ reset ALL", "reset-all"},
	{"(SELECT pg_advisory_lock(1))", "advisory-lock key=1"},

	// DO blocks run their body now.
	// DO blocks run their body now; what they do is read from the server
	// too (call-routine).
	{"DO $$BEGIN PERFORM pg_advisory_lock(11); SET work_mem = '2MB'; END$$", "call-routine DO; advisory-lock key=11; set-param work_mem='2MB'"},
	{"DO $$BEGIN EXECUTE 'SET search_path = ' || quote_ident(s); END$$", "call-routine DO (opaque); set-param search_path dynamic"},
	{"DO 'BEGIN PERFORM 1; END'", "call-routine DO"},
	{"DO $$BEGIN PERFORM sneaky(); END$$", "call-routine DO; call-routine sneaky"},
	{"DO LANGUAGE plpython3u 'plpy.execute(\"SET x.y = 1\")'", "call-routine DO (opaque)"},

	// Calls of routines that are not built in: their effects are read
	// from the server.
	{"SELECT sneaky()", "call-routine sneaky"},
	{"select Lock_It ( )", "call-routine lock_it"},
	{"SELECT app.audit(1), app.audit(2), now(), count(*), pg_catalog.lower('X')", "call-routine app.audit"},
	{`SELECT "MixedCase"(1)`, "call-routine mixedcase"},
	{"CALL do_work(1)", "call-routine do_work"},
	{"call app.do_work()", "call-routine app.do_work"},
	{"SELECT * FROM generate_series(1, 3) g, my_srf() f", "call-routine my_srf"},
	{"UPDATE t SET a = compute(b) WHERE id = 1", "call-routine compute"},
	{"SELECT a FROM t WHERE b IN (1, 2) AND c = ANY (ARRAY[1]) AND d::numeric(10, 2) > 0 AND coalesce(e, 1) = 1", ""},
	{"INSERT INTO t (a, b) VALUES (1, lower('x'))", ""},
	{`INSERT INTO "T" ("a") VALUES (1)`, ""},
	{"CREATE TABLE IF NOT EXISTS t (a int REFERENCES u (id))", "routine-change"},
	{"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT g()'", "routine-change"},
	{"ALTER FUNCTION f() SECURITY DEFINER", "routine-change"},
	{"DROP FUNCTION IF EXISTS f(int)", "routine-change"},
	{"ALTER FUNCTION f() RENAME TO g", "routine-change"},
	{"DROP SCHEMA app CASCADE", "routine-change"},
	{"SELECT x FROM v WHERE f IS NOT NULL", ""},

	// DROP of a name the pooler did not see created as temporary undoes
	// nothing (the pooler ignores it): no hazard.
	{"DROP TABLE IF EXISTS some_plain_table", "drop-temp some_plain_table [table]"},
	{"DROP TABLE pg_temp_3.t, app.u", "drop-temp t [table]"},

	// Malformed SQL runs nothing.
	{"SET work_mem =", "parse-error"},
	{"SELECT 1; SET a.b = 1; SELEC 2", "parse-error"},
	{"LISTEN", "parse-error"},
	{"set_config('x', 'y', false)", "parse-error"},
}

func TestClassify(t *testing.T) {
	c := New(Options{})
	for _, tc := range cases {
		// Twice: the second answer comes from the cache.
		for round := 0; round < 2; round++ {
			got := describeAll(c.Classify(tc.sql))
			if got != tc.want {
				t.Errorf("Classify(%q) round %d =\n  %s\nwant\n  %s", tc.sql, round, got, tc.want)
			}
		}
		if got := describeAll(Classify(tc.sql)); got != tc.want {
			t.Errorf("uncached Classify(%q) = %s, want %s", tc.sql, got, tc.want)
		}
	}
}

func TestRuleAndFingerprint(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range rules.All() {
		ids[r.ID] = true
	}
	for _, tc := range cases {
		r := Classify(tc.sql)
		for _, e := range r.Effects {
			if r := rules.Covering(e.Kind); e.Kind != effects.CallRoutine && e.Kind != effects.RoutineChange && (r == nil || !ids[r.ID]) {
				t.Errorf("%q: effect %s has no rule in the catalogue", tc.sql, describe(e))
			}
		}
		if (len(r.Effects) > 0) != (r.Fingerprint != 0) {
			t.Errorf("%q: %d effects, fingerprint %x", tc.sql, len(r.Effects), r.Fingerprint)
		}
	}
	a, b := Classify("SET work_mem = '1MB'"), Classify("set  work_mem = '2MB' -- x")
	if a.Fingerprint != b.Fingerprint {
		t.Errorf("fingerprints differ for statements that differ only in constants: %x %x", a.Fingerprint, b.Fingerprint)
	}
	if fmt.Sprintf("%016x", a.Fingerprint) == "0000000000000000" {
		t.Error("zero fingerprint")
	}
}

// TestAdvisoryNames checks that the pre-filter lets through every
// function the advisory-lock rule looks for.
func TestAdvisoryNames(t *testing.T) {
	for _, n := range rules.AdvisoryLockSession.Funcs {
		if !anywhereWord(n) {
			t.Errorf("pre-filter misses %s", n)
		}
	}
}

func TestSessionScoped(t *testing.T) {
	if Classify("SET LOCAL a.b = 1").SessionScoped() {
		t.Error("SET LOCAL is session-scoped")
	}
	if !Classify("SET LOCAL a.b = 1; SET c.d = 2").SessionScoped() {
		t.Error("SET is not session-scoped")
	}
}

func TestClassifyKnown(t *testing.T) {
	known := func(name string) bool { return strings.EqualFold(name, "plain_add") }
	c := New(Options{})
	cases := []struct{ sql, want string }{
		{"SELECT plain_add(1, 2)", ""},
		{"SELECT Plain_Add (1, 2) FROM t", ""},
		{"SELECT plain_add(1, 2), other(3)", "call-routine plain_add; call-routine other"},
		{"SELECT app.plain_add(1, 2)", "call-routine app.plain_add"},
		{"SELECT plain_add(1, 2); SET work_mem = '1MB'", "call-routine plain_add; set-param work_mem='1MB'"},
	}
	for _, tc := range cases {
		if got := describeAll(c.ClassifyKnown(tc.sql, known)); got != tc.want {
			t.Errorf("ClassifyKnown(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}
