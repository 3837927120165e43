package pooler_test

// Session state made by code that the statement does not name: a view's
// query, a column default, a trigger, a CHECK constraint, a row security
// policy, an operator's function, a function that shadows a built-in
// through search_path, an expression that calls set_config itself. The
// pooler reads what such a statement reaches from the catalog and reads
// the server's state back after it, so the next client of the server
// finds none of it.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

var reachOnce sync.Once

// makeReach creates the routines the objects of the tests call, in schema
// reach of the shared database.
func makeReach(t testing.TB) {
	t.Helper()
	makeRoutines(t) // role app_low
	var err error
	reachOnce.Do(func() {
		err = directExec(t, `
CREATE SCHEMA IF NOT EXISTS reach;
GRANT USAGE ON SCHEMA reach TO PUBLIC;
CREATE OR REPLACE FUNCTION reach.to_low() RETURNS text LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('role', 'app_low', false); RETURN 'x'; END$$;
CREATE OR REPLACE FUNCTION reach.tenant() RETURNS text LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('app.reach', 'made', false); RETURN 'x'; END$$;
CREATE OR REPLACE FUNCTION reach.lock(k bigint) RETURNS text LANGUAGE plpgsql AS $$BEGIN PERFORM pg_advisory_lock(k); RETURN 'x'; END$$;
CREATE OR REPLACE FUNCTION reach.listen(ch text) RETURNS text LANGUAGE plpgsql AS $$BEGIN EXECUTE 'LISTEN ' || quote_ident(ch); RETURN 'x'; END$$;
CREATE OR REPLACE FUNCTION reach.temp() RETURNS text LANGUAGE plpgsql AS $$BEGIN CREATE TEMP TABLE IF NOT EXISTS reach_secrets(card text); RETURN 'x'; END$$;
CREATE OR REPLACE FUNCTION reach.trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('app.reach', 'made', false); RETURN NEW; END$$;
CREATE OR REPLACE FUNCTION reach.eq(a int, b int) RETURNS bool LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('role', 'app_low', false); RETURN a = b; END$$;
CREATE OR REPLACE FUNCTION reach.upper(s text) RETURNS text LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('app.reach', 'made', false); RETURN s; END$$;
CREATE OR REPLACE FUNCTION reach.plain(a int) RETURNS int LANGUAGE sql AS 'SELECT a + 1';
DO $$BEGIN CREATE OPERATOR reach.=== (leftarg = int, rightarg = int, function = reach.eq); EXCEPTION WHEN duplicate_function THEN NULL; END$$;
CREATE TABLE IF NOT EXISTS reach.plain_t (a int PRIMARY KEY, b int DEFAULT reach.plain(1));
GRANT SELECT ON reach.plain_t TO PUBLIC;`)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// directExec runs sql on the shared database, not through a pooler.
func directExec(t testing.TB, sql string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, pgtest.Shared(t).SocketURL(pgtest.SuperUser))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// TestReachedState: client A runs a statement that reaches, without
// naming it, code that makes session state; with one server, client B
// waits (state that pins A under preserve) or finds nothing of A's; A
// keeps its state under preserve; after A leaves the next client finds a
// clean server. Each object is made for its subtest on the server
// directly (the pooler learns of it from the catalog), and A runs the
// statement twice: once before the pooler has read what statements
// reach, once after.
func TestReachedState(t *testing.T) {
	makeReach(t)
	const (
		roleProbe   = "SELECT current_user::text"
		customProbe = "SELECT coalesce(current_setting('app.reach', true), '')"
		lockProbe   = "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
	)
	cases := []struct {
		name string
		// make creates the objects (%[1]d is the test's key); run is
		// what A sends.
		make, run          string
		probe, clean, kept string
		pins               bool
		// unnamed: which parameter was set cannot be named (set_config
		// called by an expression): the server is reset in full, and the
		// setting does not follow A either.
		unnamed bool
		mode    pgx.QueryExecMode
	}{
		{name: "view role", make: "CREATE VIEW reach.v_role_%[1]d AS SELECT reach.to_low() AS t",
			run: "SELECT t FROM reach.v_role_%[1]d", probe: roleProbe, clean: pgtest.SuperUser, kept: "app_low"},
		{name: "view role extended", make: "CREATE VIEW reach.v_rolex_%[1]d AS SELECT reach.to_low() AS t",
			run: "SELECT t FROM reach.v_rolex_%[1]d", probe: roleProbe, clean: pgtest.SuperUser, kept: "app_low", mode: pgx.QueryExecModeCacheStatement},
		{name: "trigger extended", make: "CREATE TABLE reach.trx_%[1]d (a int); CREATE TRIGGER t BEFORE INSERT ON reach.trx_%[1]d FOR EACH ROW EXECUTE FUNCTION reach.trg()",
			run: "INSERT INTO reach.trx_%[1]d VALUES (1)", probe: customProbe, clean: "", kept: "made", mode: pgx.QueryExecModeCacheStatement},
		{name: "view of a view", make: "CREATE VIEW reach.v_in_%[1]d AS SELECT reach.tenant() AS t; CREATE VIEW reach.v_out_%[1]d AS SELECT t FROM reach.v_in_%[1]d",
			run: "SELECT * FROM reach.v_out_%[1]d", probe: customProbe, clean: "", kept: "made"},
		{name: "view lock", make: "CREATE VIEW reach.v_lock_%[1]d AS SELECT reach.lock(%[1]d) AS t",
			run: "SELECT * FROM reach.v_lock_%[1]d", probe: lockProbe, clean: "0", kept: "1", pins: true},
		{name: "view listen", make: "CREATE VIEW reach.v_listen_%[1]d AS SELECT reach.listen('reach_ch_%[1]d') AS t",
			run: "SELECT * FROM reach.v_listen_%[1]d", probe: "SELECT count(*)::text FROM pg_listening_channels()", clean: "0", kept: "1", pins: true},
		{name: "view temp", make: "CREATE VIEW reach.v_temp_%[1]d AS SELECT reach.temp() AS t",
			run: "SELECT * FROM reach.v_temp_%[1]d", probe: "SELECT coalesce(to_regclass('pg_temp.reach_secrets')::text, 'none')", clean: "none", kept: "reach_secrets", pins: true},
		{name: "view calls set_config", make: "CREATE VIEW reach.v_builtin_%[1]d AS SELECT set_config('app.reach', 'made', false) AS t",
			run: "SELECT * FROM reach.v_builtin_%[1]d", probe: customProbe, clean: "", kept: "", unnamed: true},
		{name: "default role", make: "CREATE TABLE reach.d_%[1]d (a int, t text DEFAULT reach.to_low())",
			run: "INSERT INTO reach.d_%[1]d (a) VALUES (1)", probe: roleProbe, clean: pgtest.SuperUser, kept: "app_low"},
		{name: "trigger", make: "CREATE TABLE reach.tr_%[1]d (a int); CREATE TRIGGER t BEFORE INSERT ON reach.tr_%[1]d FOR EACH ROW EXECUTE FUNCTION reach.trg()",
			run: "INSERT INTO reach.tr_%[1]d VALUES (1)", probe: customProbe, clean: "", kept: "made"},
		{name: "trigger through a cascade", make: "CREATE TABLE reach.p_%[1]d (a int PRIMARY KEY); CREATE TABLE reach.ch_%[1]d (a int REFERENCES reach.p_%[1]d ON DELETE CASCADE); " +
			"CREATE TRIGGER t BEFORE DELETE ON reach.ch_%[1]d FOR EACH ROW EXECUTE FUNCTION reach.trg(); INSERT INTO reach.p_%[1]d VALUES (1), (2); INSERT INTO reach.ch_%[1]d VALUES (1), (2)",
			run: "DELETE FROM reach.p_%[1]d WHERE a = (SELECT min(a) FROM reach.p_%[1]d)", probe: customProbe, clean: "", kept: "made"},
		{name: "check constraint", make: "CREATE TABLE reach.c_%[1]d (a int CHECK (reach.to_low() IS NOT NULL))",
			run: "INSERT INTO reach.c_%[1]d VALUES (1)", probe: roleProbe, clean: pgtest.SuperUser, kept: "app_low"},
		{name: "row security policy", make: "CREATE TABLE reach.rls_%[1]d (a int); INSERT INTO reach.rls_%[1]d VALUES (1); GRANT SELECT ON reach.rls_%[1]d TO app_low; " +
			"ALTER TABLE reach.rls_%[1]d ENABLE ROW LEVEL SECURITY; ALTER TABLE reach.rls_%[1]d FORCE ROW LEVEL SECURITY; " +
			"CREATE POLICY p ON reach.rls_%[1]d USING (reach.tenant() IS NOT NULL)",
			run: "BEGIN; SET LOCAL ROLE app_low; SELECT count(*) FROM reach.rls_%[1]d; COMMIT", probe: customProbe, clean: "", kept: "made"},
		{name: "operator", run: "SELECT 1 OPERATOR(reach.===) 1", probe: roleProbe, clean: pgtest.SuperUser, kept: "app_low"},
		{name: "shadowed built-in", run: "BEGIN; SET LOCAL search_path = reach, pg_catalog; SELECT upper('x'); COMMIT", probe: customProbe, clean: "", kept: "made"},
	}
	for _, tc := range cases {
		for _, relay := range quietRelays {
			for _, policy := range routinePolicies {
				t.Run(fmt.Sprintf("%s/%s/%s", tc.name, relay, policy), func(t *testing.T) {
					t.Parallel()
					qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: policy, QueryWaitTimeout: 20 * time.Second})
					if tc.make != "" {
						if err := directExec(t, fmt.Sprintf(tc.make, qp.key)); err != nil {
							t.Fatal(err)
						}
					}
					run := tc.run
					if strings.Contains(run, "%[1]d") {
						run = fmt.Sprintf(run, qp.key)
					}
					mode := tc.mode
					if mode == 0 {
						mode = pgx.QueryExecModeSimpleProtocol
					}
					for range 2 { // before the pooler read the catalog, and after
						a := qp.connApp(t, "", mode)
						exec(t, a, run)
						isolated(t, qp, a, policy, tc.pins, tc.probe, tc.clean, tc.kept)
					}
					if hazardsCounted(qp) == 0 && !tc.unnamed {
						t.Errorf("no hazard counted for %s", run)
					}
					if qp.Snapshot().ReachReads == 0 {
						t.Error("the pooler never read what statements reach")
					}
				})
			}
		}
	}
}

// TestReachPlain: statements on tables whose defaults call a routine that
// changes nothing, and on tables that reach no routine, are not verified
// once the pooler knows the catalog; a statement of a view created
// through the pooler afterwards is (the catalog is read again at once).
func TestReachPlain(t *testing.T) {
	makeReach(t)
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, QueryWaitTimeout: 20 * time.Second})
			a := qp.conn(t)
			key := qp.key
			exec(t, a, fmt.Sprintf("INSERT INTO reach.plain_t (a) VALUES (%d) ON CONFLICT DO NOTHING", key))
			if !learnedCall(t, qp, a, fmt.Sprintf("INSERT INTO reach.plain_t (a) VALUES (%d) ON CONFLICT DO NOTHING", key), 5*time.Second) {
				t.Fatal("inserts into a table whose default calls a plain function are still verified after 5 s")
			}
			for range 3 {
				before := qp.Snapshot().Verifications
				answered(t, a, fmt.Sprintf("SELECT b::text FROM reach.plain_t WHERE a = %d", key), "2")
				exec(t, a, "SELECT 1")
				if qp.Snapshot().Verifications != before {
					t.Fatal("a statement that reaches only plain code was verified")
				}
			}
			view := fmt.Sprintf("reach.v_later_%d", key)
			exec(t, a, "CREATE VIEW "+view+" AS SELECT reach.to_low() AS t")
			b := qp.conn(t)
			exec(t, a, "SELECT * FROM "+view)
			answered(t, b, "SELECT current_user::text", pgtest.SuperUser)
			answered(t, a, "SELECT current_user::text", "app_low")
			exec(t, a, "RESET ROLE")
			exec(t, a, "DROP VIEW "+view)
			a.Close(context.Background())
			b.Close(context.Background())
		})
	}
}

// TestReachPreparedLater: a statement prepared while its view ran no
// code is matched again at every run: once the view is replaced (through
// the pooler, and directly on the server) by one that changes the role,
// the next run of the same prepared statement is read back, and another
// client of the only server never runs as that role.
func TestReachPreparedLater(t *testing.T) {
	makeReach(t)
	for _, through := range []string{"pooler", "server"} {
		for _, relay := range quietRelays {
			t.Run(through+"/"+string(relay), func(t *testing.T) {
				t.Parallel()
				qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, QueryWaitTimeout: 20 * time.Second})
				view := fmt.Sprintf("reach.v_prep_%d", qp.key)
				if err := directExec(t, "CREATE VIEW "+view+" AS SELECT 'x'::text AS t"); err != nil {
					t.Fatal(err)
				}
				// The pooler knows the catalog when A prepares.
				warm := qp.conn(t)
				for qp.Snapshot().ReachReads == 0 {
					exec(t, warm, "SELECT 1")
					time.Sleep(10 * time.Millisecond)
				}
				warm.Close(context.Background())
				a := qp.connApp(t, "", pgx.QueryExecModeCacheStatement)
				query := "SELECT t FROM " + view
				answered(t, a, query, "x")
				replace := "CREATE OR REPLACE VIEW " + view + " AS SELECT reach.to_low() AS t"
				if through == "pooler" {
					admin := qp.conn(t)
					exec(t, admin, replace)
					admin.Close(context.Background())
				} else {
					if err := directExec(t, replace); err != nil {
						t.Fatal(err)
					}
					time.Sleep(5500 * time.Millisecond) // the reach is read again after 5 s
				}
				answered(t, a, query, "x")
				b := qp.conn(t)
				answered(t, b, "SELECT current_user::text", pgtest.SuperUser)
				answered(t, a, "SELECT current_user::text", "app_low")
				exec(t, a, "RESET ROLE")
				a.Close(context.Background())
				b.Close(context.Background())
			})
		}
	}
}

// TestReachSQLExecute: an SQL-level EXECUTE does not name what its
// statement reaches; the pooler matches the texts the client prepared. A
// client prepares a statement of a view that changes the role, runs it in
// a later transaction and deallocates it: the role it made never reaches
// the next client of the only server.
func TestReachSQLExecute(t *testing.T) {
	makeReach(t)
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, QueryWaitTimeout: 20 * time.Second})
			view := fmt.Sprintf("reach.v_sqlexec_%d", qp.key)
			if err := directExec(t, "CREATE VIEW "+view+" AS SELECT reach.to_low() AS t"); err != nil {
				t.Fatal(err)
			}
			a := qp.conn(t)
			exec(t, a, "PREPARE reach_s AS SELECT t FROM "+view)
			exec(t, a, "EXECUTE reach_s")
			exec(t, a, "DEALLOCATE reach_s")
			b := qp.conn(t)
			answered(t, b, "SELECT current_user::text", pgtest.SuperUser)
			answered(t, a, "SELECT current_user::text", "app_low")
			a.Close(context.Background())
			b.Close(context.Background())
		})
	}
}

// BenchmarkReachWindow: how long after a view that makes session state is
// created on the server directly (not through the pooler) its use through
// the pooler is first read back, when the view is created right after the
// pooler read the catalog. Not a test: it prints figures.
// go test ./pooler -run XXX -bench ReachWindow -benchtime 3x
func BenchmarkReachWindow(b *testing.B) {
	makeReach(b)
	qp := startWith(b, pooler.Config{Relay: pooler.RelayLoop, PoolSize: 1, QueryWaitTimeout: 20 * time.Second})
	ctx := context.Background()
	a, err := pgx.Connect(ctx, qp.url)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close(ctx)
	var worst, sum time.Duration
	for i := 0; i < b.N; i++ {
		// A read of the catalog happens now.
		for reads := qp.Snapshot().ReachReads; qp.Snapshot().ReachReads == reads; time.Sleep(10 * time.Millisecond) {
			if _, err := a.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
				b.Fatal(err)
			}
		}
		view := fmt.Sprintf("reach.w_%d_%d", qp.key, i)
		if err := directExec(b, "CREATE VIEW "+view+" AS SELECT reach.tenant() AS t"); err != nil {
			b.Fatal(err)
		}
		made := time.Now()
		for {
			before := qp.Snapshot().Verifications
			if _, err := a.Exec(ctx, "SELECT * FROM "+view, pgx.QueryExecModeSimpleProtocol); err != nil {
				b.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
			if qp.Snapshot().Verifications != before {
				break
			}
			if time.Since(made) > time.Minute {
				b.Fatal("the view's use was never read back")
			}
		}
		w := time.Since(made)
		sum += w
		worst = max(worst, w)
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(b.N), "ms-window-mean")
	b.ReportMetric(float64(worst.Milliseconds()), "ms-window-max")
}
