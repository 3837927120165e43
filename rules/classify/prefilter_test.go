package classify

import "testing"

// ordinary statements must not reach the cache or the parser.
var ordinary = []string{
	"SELECT 1",
	"select * from users where id = $1",
	"SELECT u.id, u.name FROM users u JOIN orders o ON o.user_id = u.id WHERE o.created_at > now() - interval '1 day' ORDER BY o.id DESC LIMIT 20 OFFSET 40",
	"INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING id",
	"UPDATE accounts SET balance = balance - $1, updated_at = now() WHERE id = $2",
	"DELETE FROM sessions WHERE reset_at < now()",
	"WITH x AS (UPDATE t SET settled = true RETURNING id) SELECT count(*) FROM x",
	"SELECT pg_advisory_xact_lock(1)",
	"SELECT pg_try_advisory_xact_lock_shared(1, 2)",
	"SELECT 'it''s' AS offset_settings",
	"-- SET work_mem = '1GB'\nSELECT 1",
	"/* LISTEN x; /* nested */ DISCARD ALL */ SELECT 1",
	"BEGIN; UPDATE t SET x = 1; COMMIT",
	"SELECT \"reset\", \"load\" FROM t",
	"INSERT INTO posts (body) VALUES ('please do set the table; LISTEN', $$ SET x $$, E'\\'')",
	"COPY t FROM STDIN",
	"SELECT $1::text, $2",
	"SELECT E'it\\'s fine; --', 1",
	"",
	";;;",
}

func TestPrefilter(t *testing.T) {
	for _, sql := range ordinary {
		if MayAffect(sql) {
			t.Errorf("MayAffect(%q) = true, want false", sql)
		}
	}
	for _, tc := range cases {
		if tc.want != "" && tc.want != "parse-error" && !MayAffect(tc.sql) {
			t.Errorf("MayAffect(%q) = false for a statement with effects %s", tc.sql, tc.want)
		}
	}
	for _, sql := range []string{
		"UPDATE t SET x = 1; SET y = 2",
		"SELECT 1; /* c */ -- d\n set a = 1",
		"select 'a;b'; LISTEN x",
		"SELECT $$;$$; LOAD 'x'",
		"SELECT \"a\"\"b\"; discard all",
		"CREATE TABLE U&\"pg\\005ftemp\".t ()",
		"DO $x$ BEGIN PERFORM 1; END $x$",
		"SELECT * FROM \"pg_temp\".t",
		"SELECT PG_TRY_ADVISORY_LOCK(1)",
		// Unreserved keywords name routines too (CREATE FUNCTION set()).
		"SELECT set()",
		"select Key(1), over(2)",
	} {
		if !MayAffect(sql) {
			t.Errorf("MayAffect(%q) = false, want true", sql)
		}
	}
}

func TestPrefilterAllocs(t *testing.T) {
	c := New(Options{})
	for _, sql := range ordinary {
		if n := testing.AllocsPerRun(100, func() { _ = c.Classify(sql) }); n != 0 {
			t.Errorf("Classify(%q) allocates %.0f times", sql, n)
		}
	}
}

func TestCacheHitAllocs(t *testing.T) {
	c := New(Options{})
	sql := "SET search_path = app, public"
	c.Classify(sql)
	if n := testing.AllocsPerRun(100, func() { _ = c.Classify(sql) }); n != 0 {
		t.Errorf("cache hit allocates %.0f times", n)
	}
}
