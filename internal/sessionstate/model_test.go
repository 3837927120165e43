package sessionstate_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// TestModelAgainstPostgreSQL runs statements on a fresh PostgreSQL session
// each and compares what the one statement model (rules/effects, through
// this package and the engine's session bookkeeping) says they leave on
// the session with what the server then holds: parameters set at session
// level (pg_settings, and custom ones by name), role, advisory locks,
// LISTEN channels, temporary relations, held cursors and SQL prepared
// statements.
func TestModelAgainstPostgreSQL(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cls := sessionstate.New()
	tracked := func(n string) bool { return n == "application_name" }
	cases := []string{
		"SET work_mem = '2MB'",
		"SET SESSION search_path = public",
		"SET LOCAL work_mem = '2MB'",
		"BEGIN; SET LOCAL statement_timeout = 5; COMMIT",
		"SELECT set_config('app.tenant', 't1', false)",
		"SELECT set_config('app.tenant', 't1', true)",
		"UPDATE pg_settings SET setting = '3MB' WHERE name = 'work_mem'",
		"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE",
		"SET TIME ZONE 'UTC'",
		"SET ROLE model_role",
		"SET ROLE model_role; RESET ROLE",
		"SELECT set_config('role', 'model_role', false)",
		"SELECT set_config('role', 'model_role', false); SELECT set_config('role', 'none', false)",
		"SELECT pg_advisory_lock(41)",
		"SELECT pg_try_advisory_lock(42, 43)",
		"SELECT pg_advisory_lock(44); SELECT pg_advisory_unlock(44)",
		"SELECT pg_advisory_lock_shared(45); SELECT pg_advisory_unlock_all()",
		"BEGIN; SELECT pg_advisory_xact_lock(46); COMMIT",
		"LISTEN model_ch",
		"LISTEN model_ch; UNLISTEN *",
		"CREATE TEMP TABLE model_t (i int)",
		"CREATE TEMP TABLE model_t (i int); DROP TABLE model_t",
		"CREATE TEMP TABLE model_t (i int); DISCARD TEMP",
		"BEGIN; CREATE TEMP TABLE model_t (i int) ON COMMIT DROP; COMMIT",
		"CREATE TABLE pg_temp.model_t (i int)",
		"SELECT 1 INTO TEMP model_t",
		"DROP TABLE IF EXISTS model_no_such_table",
		"CREATE TEMP TABLE model_t (i int); DROP TABLE IF EXISTS public.model_t",
		"CREATE TEMP TABLE model_t (i int); DROP TABLE IF EXISTS pg_temp.model_t",
		"CREATE FUNCTION pg_temp.model_f() RETURNS int LANGUAGE sql AS 'SELECT 1'; DROP FUNCTION pg_temp.model_f()",
		"DECLARE model_c CURSOR WITH HOLD FOR SELECT 1",
		"BEGIN; DECLARE model_c CURSOR FOR SELECT 1; COMMIT",
		"DECLARE model_c CURSOR WITH HOLD FOR SELECT 1; CLOSE model_c",
		"PREPARE model_p AS SELECT 1",
		"PREPARE model_p AS SELECT 1; DEALLOCATE model_p",
		"PREPARE model_p AS SELECT 1; DEALLOCATE ALL",
		"SET work_mem = '2MB'; LISTEN model_ch; SELECT pg_advisory_lock(47); DISCARD ALL",
		"DO $$BEGIN PERFORM set_config('work_mem', '5MB', false); END$$",
		"DO $$BEGIN PERFORM pg_advisory_lock(48); END$$",
		"SELECT 1",
	}
	if err := srv.Exec(ctx, `DO $$BEGIN CREATE ROLE model_role; EXCEPTION WHEN duplicate_object THEN NULL; END$$`); err != nil {
		t.Fatal(err)
	}
	for _, sql := range cases {
		t.Run(sql, func(t *testing.T) {
			c, err := pgx.Connect(ctx, srv.SocketURL(pgtest.SuperUser))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			// What the model says, statement by statement.
			var st engine.Session
			for _, q := range strings.Split(sql, "; ") {
				if strings.HasPrefix(q, "DO ") {
					q = sql // a DO block is one statement
				}
				effs, _ := cls.Classify(q)
				st.Apply(effs, tracked)
				if _, err := c.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if q == sql {
					break
				}
			}
			// What the server holds.
			var row []string
			rows, err := c.Query(ctx, engine.VerifyQuery([]string{"app.tenant"}), pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				for _, v := range rows.RawValues() {
					row = append(row, string(v)) // text format; NULL is empty
				}
			}
			if rows.Close(); rows.Err() != nil {
				t.Fatal(rows.Err())
			}
			var set []string
			if err := c.QueryRow(ctx, "SELECT coalesce(array_agg(name::text ORDER BY name), '{}') FROM pg_settings WHERE source = 'session'").Scan(&set); err != nil {
				t.Fatal(err)
			}
			set = slices.DeleteFunc(set, tracked)
			f, ok := engine.ParseFound(row, set, []string{"app.tenant"})
			if !ok {
				t.Fatalf("verification row %q", row)
			}
			// Reconcile returns what the model did not know of; a held
			// state the server no longer has shows in Held.
			before := st.Held()
			found := st.Reconcile(f, pgtest.SuperUser, tracked)
			if len(found) > 0 {
				var kinds []string
				for _, e := range found {
					kinds = append(kinds, e.Name)
				}
				t.Errorf("the server holds state the model missed: %d effects %q", len(found), kinds)
			}
			if before != st.Held() {
				t.Errorf("the model holds state the server does not: held %v before reading the server, %v after", before, st.Held())
			}
		})
	}
}
