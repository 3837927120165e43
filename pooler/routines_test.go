package pooler_test

// Session state made inside routines and DO blocks, which the statement
// text does not show: the pooler reads the server's state after such a
// statement, before the server can serve anyone else, and handles what it
// finds as if the client had sent the statements itself.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

var routinesOnce sync.Once

// makeRoutines creates the routines of the tests in the shared database.
func makeRoutines(t testing.TB) {
	t.Helper()
	srv := pgtest.Shared(t)
	var err error
	routinesOnce.Do(func() {
		ctx := context.Background()
		var c *pgx.Conn
		if c, err = pgx.Connect(ctx, srv.SocketURL(pgtest.SuperUser)); err != nil {
			return
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, `
DO $$BEGIN CREATE ROLE app_low; EXCEPTION WHEN duplicate_object THEN NULL; END$$;
CREATE OR REPLACE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('search_path', 'evil', false); END$$;
CREATE OR REPLACE FUNCTION mk_temp() RETURNS void LANGUAGE plpgsql AS $$BEGIN CREATE TEMP TABLE secrets(card text); INSERT INTO secrets VALUES ('4111'); END$$;
CREATE OR REPLACE FUNCTION lock_it(k bigint) RETURNS void LANGUAGE plpgsql AS $$BEGIN PERFORM pg_advisory_lock(k); END$$;
CREATE OR REPLACE FUNCTION listen_it(ch text) RETURNS void LANGUAGE plpgsql AS $$BEGIN EXECUTE 'LISTEN ' || quote_ident(ch); END$$;
CREATE OR REPLACE FUNCTION low_role() RETURNS void LANGUAGE plpgsql AS $$BEGIN EXECUTE 'SET ROLE app_low'; END$$;
CREATE OR REPLACE FUNCTION set_tenant(v text) RETURNS void LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('app.tenant', v, false); END$$;
CREATE OR REPLACE FUNCTION set_dyn(v text) RETURNS void LANGUAGE plpgsql AS $$BEGIN EXECUTE format('SET app.dyn = %L', v); END$$;
CREATE OR REPLACE FUNCTION plain_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b';
CREATE OR REPLACE PROCEDURE proc_lock(k bigint) LANGUAGE plpgsql AS $$BEGIN PERFORM pg_advisory_lock(k); END$$;
CREATE TABLE IF NOT EXISTS routine_plain (i int);`)
	})
	if err != nil {
		t.Fatal(err)
	}
}

var routinePolicies = []pooler.Policy{pooler.PolicyPreserve, pooler.PolicyReset, pooler.PolicyReject}

// TestRoutineState: client A makes session state inside a routine or a DO
// block and stays connected; with one server, client B waits (state that
// pins A under preserve) or finds nothing of A's, never A's state; after A
// leaves, the next client finds a clean server. Under preserve A keeps its
// state; under reset and reject its server is cleaned when it goes back.
func TestRoutineState(t *testing.T) {
	makeRoutines(t)
	const cleanPath = `"$user", public`
	cases := []struct {
		name, call, probe, clean, kept string
		// pins: under preserve the state keeps A on its server.
		pins bool
		// refused: the statement shows that it sets a parameter, so
		// reject refuses it.
		refused bool
		// unnamed: the state cannot be named, so no hazard is counted
		// (the server is reset all the same).
		unnamed bool
		mode    pgx.QueryExecMode
	}{
		{name: "set_config", call: "SELECT sneaky()", probe: "SELECT current_setting('search_path')", clean: cleanPath, kept: "evil"},
		{name: "set_config extended", call: "SELECT sneaky()", probe: "SELECT current_setting('search_path')", clean: cleanPath, kept: "evil",
			mode: pgx.QueryExecModeCacheStatement},
		// A custom parameter, which pg_settings does not list: read by
		// the name the routine's body gives.
		{name: "custom parameter", call: "SELECT set_tenant('t42')", probe: "SELECT coalesce(current_setting('app.tenant', true), '')", clean: "", kept: "t42"},
		// Set by dynamic SQL: the pooler cannot name it, so the server
		// is reset (RESET ALL) and the setting does not follow A either.
		{name: "custom parameter by dynamic SQL", call: "SELECT set_dyn('t7')", probe: "SELECT coalesce(current_setting('app.dyn', true), '')", clean: "", kept: "", unnamed: true},
		{name: "DO block", call: "DO $$BEGIN PERFORM set_config('work_mem', '7MB', false); END$$", probe: "SHOW work_mem", clean: "4MB", kept: "7MB", refused: true},
		{name: "role", call: "SELECT low_role()", probe: "SELECT current_user::text", clean: pgtest.SuperUser, kept: "app_low"},
		{name: "temp table", call: "SELECT mk_temp()", probe: "SELECT coalesce(to_regclass('pg_temp.secrets')::text, 'none')", clean: "none", kept: "secrets", pins: true},
		{name: "advisory lock", call: "SELECT lock_it(%d)", probe: "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()", clean: "0", kept: "1", pins: true},
		{name: "procedure lock", call: "CALL proc_lock(%d)", probe: "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()", clean: "0", kept: "1", pins: true},
		{name: "listen", call: "SELECT listen_it('routine_ch%d')", probe: "SELECT count(*)::text FROM pg_listening_channels()", clean: "0", kept: "1", pins: true},
	}
	for _, tc := range cases {
		for _, relay := range quietRelays {
			for _, policy := range routinePolicies {
				t.Run(fmt.Sprintf("%s/%s/%s", tc.name, relay, policy), func(t *testing.T) {
					t.Parallel()
					qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: policy, QueryWaitTimeout: 20 * time.Second})
					call := tc.call
					if strings.Contains(call, "%d") {
						call = fmt.Sprintf(call, qp.key)
					}
					mode := tc.mode
					if mode == 0 {
						mode = pgx.QueryExecModeSimpleProtocol
					}
					a := qp.connApp(t, "a", mode)
					if policy == pooler.PolicyReject && tc.refused {
						var pe *pgconn.PgError
						if _, err := a.Exec(context.Background(), call); !errors.As(err, &pe) || pe.Code != "0A000" {
							t.Fatalf("%s under reject: %v, want SQLSTATE 0A000", call, err)
						}
					} else {
						exec(t, a, call)
					}
					isolated(t, qp, a, policy, tc.pins, tc.probe, tc.clean, tc.kept)
					hz := hazardsCounted(qp)
					if hz == 0 && !tc.unnamed {
						t.Errorf("no hazard counted for %s", call)
					}
				})
			}
		}
	}
}

// TestRoutineRedefined: a routine that was harmless is redefined to set a
// parameter between two calls; the second call's effect is found too. A
// call of a routine that changes nothing counts no hazard and pins nothing.
func TestRoutineRedefined(t *testing.T) {
	makeRoutines(t)
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, QueryWaitTimeout: 20 * time.Second})
			fn := "redefined_" + string(relay)
			a := qp.conn(t)
			exec(t, a, "CREATE OR REPLACE FUNCTION "+fn+"() RETURNS int LANGUAGE plpgsql AS $$BEGIN RETURN 1; END$$")
			answered(t, a, "SELECT "+fn+"()::text", "1")
			answered(t, a, "SELECT plain_add(1, 2)::text", "3")
			b := qp.conn(t)
			answered(t, b, "SELECT 'served'", "served")
			for _, h := range qp.Hazards() {
				t.Errorf("hazard counted for calls that change nothing: %+v", h)
			}
			exec(t, a, "CREATE OR REPLACE FUNCTION "+fn+"() RETURNS int LANGUAGE plpgsql AS $$BEGIN PERFORM set_config('statement_timeout', '123s', false); RETURN 2; END$$")
			answered(t, a, "SELECT "+fn+"()::text", "2")
			answered(t, b, "SHOW statement_timeout", "0")
			answered(t, a, "SHOW statement_timeout", "123s")
			exec(t, a, "DROP FUNCTION "+fn+"()")
			a.Close(context.Background())
			b.Close(context.Background())
		})
	}
}

// TestDropPlainTable: DROP TABLE IF EXISTS of a table that is not
// temporary is neither pinned nor refused; of the client's temporary
// table, it ends the pin.
func TestDropPlainTable(t *testing.T) {
	makeRoutines(t)
	for _, relay := range quietRelays {
		for _, policy := range routinePolicies {
			t.Run(fmt.Sprintf("%s/%s", relay, policy), func(t *testing.T) {
				t.Parallel()
				qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: policy, QueryWaitTimeout: 20 * time.Second})
				a := qp.conn(t)
				exec(t, a, "DROP TABLE IF EXISTS no_such_plain_table")
				exec(t, a, "DROP TABLE IF EXISTS pg_temp.no_such_temp_table")
				b := qp.conn(t)
				answered(t, b, "SELECT 'served'", "served")
				if policy != pooler.PolicyReject {
					exec(t, a, "CREATE TEMP TABLE dropped_later(i int)")
					exec(t, a, "DROP TABLE IF EXISTS dropped_later")
					answered(t, b, "SELECT coalesce(to_regclass('pg_temp.dropped_later')::text, 'none')", "none")
				}
				for _, h := range qp.Hazards() {
					if h.Rule == "temp-table" && policy == pooler.PolicyReject {
						t.Errorf("hazard counted: %+v", h)
					}
				}
				a.Close(context.Background())
				b.Close(context.Background())
			})
		}
	}
}

// TestRoutineLearned: the pooler reads a routine's definition once and
// stops verifying calls of a routine that changes nothing; a routine that
// changes state is verified at every call; a routine replaced through the
// pooler is learned again.
func TestRoutineLearned(t *testing.T) {
	makeRoutines(t)
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, QueryWaitTimeout: 20 * time.Second})
			a := qp.conn(t)
			verifications := func() int64 { return qp.Snapshot().Verifications }
			learned := func(sql string) bool { return learnedCall(t, qp, a, sql, 5*time.Second) }
			if !learned("SELECT plain_add(1, 2)") {
				t.Fatal("calls of a plain SQL function are still verified after 5 s")
			}
			for range 3 {
				before := verifications()
				exec(t, a, "SELECT plain_add(3, 4)")
				if verifications() != before {
					t.Fatal("a call of a learned plain function was verified")
				}
			}
			time.Sleep(300 * time.Millisecond) // time to learn sneaky, were it clean
			for range 3 {
				before := verifications()
				exec(t, a, "SELECT sneaky()")
				exec(t, a, "RESET search_path")
				if verifications() == before {
					t.Fatal("a call of a routine that sets a parameter was not verified")
				}
			}
			fn := "learned_" + string(relay)
			exec(t, a, "CREATE OR REPLACE FUNCTION "+fn+"() RETURNS int LANGUAGE sql AS 'SELECT 1'")
			if !learned("SELECT " + fn + "()") {
				t.Fatal("a new plain function is still verified after 5 s")
			}
			exec(t, a, "CREATE OR REPLACE FUNCTION "+fn+"() RETURNS int LANGUAGE sql AS $$SELECT length(set_config('work_mem', '9MB', false)) - 2$$")
			before := verifications()
			answered(t, a, "SELECT "+fn+"()::text", "1")
			if verifications() == before {
				t.Fatal("a function replaced through the pooler was not verified")
			}
			b := qp.conn(t)
			answered(t, b, "SHOW work_mem", "4MB")
			answered(t, a, "SHOW work_mem", "9MB")
			exec(t, a, "DROP FUNCTION "+fn+"()")
		})
	}
}

// TestRoutineChangedInTransaction: a client that calls a routine while
// another client's open transaction replaces it learns the old
// definition; when that transaction commits, the pooler forgets it, so
// the new definition's effects are verified at once rather than after
// routineTTL.
func TestRoutineChangedInTransaction(t *testing.T) {
	makeRoutines(t)
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 2, QueryWaitTimeout: 20 * time.Second})
			fn := "changed_in_tx_" + string(relay)
			a, b := qp.conn(t), qp.conn(t)
			verifications := func() int64 { return qp.Snapshot().Verifications }
			exec(t, a, "CREATE OR REPLACE FUNCTION "+fn+"() RETURNS int LANGUAGE sql AS 'SELECT 1'")
			exec(t, a, "BEGIN")
			exec(t, a, "CREATE OR REPLACE FUNCTION "+fn+"() RETURNS int LANGUAGE sql AS $$SELECT length(set_config('work_mem', '7MB', false)) - 2$$")
			if !learnedCall(t, qp, b, "SELECT "+fn+"()", 5*time.Second) {
				t.Fatal("the committed plain definition was not learned while the change was open")
			}
			exec(t, a, "COMMIT")
			before := verifications()
			answered(t, b, "SELECT "+fn+"()::text", "1")
			if verifications() == before {
				t.Fatal("a call after the replacing transaction committed was not verified: the old definition was still trusted")
			}
			answered(t, b, "SHOW work_mem", "7MB")
			exec(t, b, "RESET work_mem")
			exec(t, a, "DROP FUNCTION "+fn+"()")
			a.Close(context.Background())
			b.Close(context.Background())
		})
	}
}

// TestTrustedRoutines: a C function of an extension is opaque, so each
// call is followed by a read of the server's state and RESET ALL (pg_trgm's
// set_limit sets pg_trgm.similarity_threshold, which reaches no other
// client); routines the operator trusts, by name or by extension, are not
// read after.
func TestTrustedRoutines(t *testing.T) {
	makeRoutines(t)
	srv := pgtest.Shared(t)
	if err := srv.Exec(context.Background(), "CREATE EXTENSION IF NOT EXISTS pg_trgm"); err != nil {
		t.Fatal(err)
	}
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				name    string
				trusted []string
				// verified: calls of similarity() stay verified.
				verified bool
			}{
				{"none", nil, true},
				{"by name", []string{"similarity"}, false},
				{"by schema and name", []string{"public.similarity"}, true}, // the calls are written unqualified
				{"by extension", []string{"extension:pg_trgm"}, false},
				{"other extension", []string{"extension:pgcrypto"}, true},
			}
			for _, tc := range cases {
				qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: pooler.PolicyReset,
					QueryWaitTimeout: 20 * time.Second, TrustedRoutines: tc.trusted})
				a := qp.conn(t)
				// The first calls may be read (the pooler learns the
				// routine, under reset when the server goes back, which
				// may be after the client has its answer); later ones show
				// the verdict.
				learnedCall(t, qp, a, "SELECT similarity('word', 'two words')", 2*time.Second)
				before := qp.Snapshot().Verifications
				for range 3 {
					answered(t, a, "SELECT similarity('word', 'word')::text", "1")
				}
				if got := qp.Snapshot().Verifications > before; got != tc.verified {
					t.Errorf("%s: calls verified %v, want %v", tc.name, got, tc.verified)
				}
				// An untrusted C function that sets a parameter: read,
				// and the server reset for the next client.
				if tc.name == "none" {
					answered(t, a, "SELECT set_limit(0.7)::text", "0.7")
					b := qp.conn(t)
					answered(t, b, "SELECT show_limit()::text", "0.3")
					b.Close(context.Background())
				}
				a.Close(context.Background())
			}
		})
	}
}

// learnedCall runs sql on c until a run of it is not followed by a
// verification (the pooler has learned that the routines it calls change
// nothing), for at most within; it reports whether that happened.
// Under reset a verification runs when the server goes back, which may
// be after the client has its answer: each run waits a little for it.
func learnedCall(t *testing.T, qp *quietProxy, c *pgx.Conn, sql string, within time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); {
		before := qp.Snapshot().Verifications
		exec(t, c, sql)
		time.Sleep(20 * time.Millisecond)
		if qp.Snapshot().Verifications == before {
			return true
		}
		time.Sleep(30 * time.Millisecond)
	}
	return false
}

// Routines whose definitions are larger than a read buffer (read
// together, 3 × 40 KiB in one answer) are learned on both relays: the
// state they leave follows their client and reaches no other, and the
// client is not kept on its server for a read that failed.
func TestLargeRoutineDefinitions(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	direct, err := pgx.Connect(ctx, srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	pad := strings.Repeat("-- a long comment line to make the definition large\n", 800) // 40 KiB
	for i := range 3 {
		body := fmt.Sprintf("CREATE OR REPLACE FUNCTION big_def_%d() RETURNS void LANGUAGE plpgsql AS $$BEGIN\n%sPERFORM set_config('app.big%d', 'set', false);\nEND$$", i, pad, i)
		if _, err := direct.Exec(ctx, body); err != nil {
			t.Fatal(err)
		}
	}
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: pooler.PolicyPreserve, QueryWaitTimeout: 3 * time.Second})
			a := qp.conn(t)
			exec(t, a, "SELECT big_def_0(), big_def_1(), big_def_2()")
			b := qp.conn(t)
			// Served at once: a is not kept on the only server.
			answered(t, b, "SELECT coalesce(current_setting('app.big1', true), '')", "")
			answered(t, a, "SELECT current_setting('app.big0') || current_setting('app.big1') || current_setting('app.big2')", "setsetset")
			answered(t, b, "SELECT coalesce(current_setting('app.big2', true), '')", "")
			qp.settled(t)
		})
	}
}

// isolated checks, after client a made state that probe reads, that
// another client of the only server never sees it: under preserve with
// state that pins (pins) it is not served at all, otherwise it reads
// clean; that a reads kept under preserve and clean otherwise; and that
// after a leaves the next client reads clean.
func isolated(t *testing.T, qp *quietProxy, a *pgx.Conn, policy pooler.Policy, pins bool, probe, clean, kept string) {
	t.Helper()
	b := qp.conn(t)
	if policy == pooler.PolicyPreserve && pins {
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		var got string
		err := b.QueryRow(ctx, probe).Scan(&got)
		cancel()
		if err == nil {
			t.Fatalf("B was served while A's state pins the only server: %s = %q", probe, got)
		}
	} else {
		answered(t, b, probe, clean)
	}
	b.Close(context.Background())
	want := clean
	if policy == pooler.PolicyPreserve {
		want = kept
	}
	answered(t, a, probe, want)
	a.Close(context.Background())
	c := qp.conn(t)
	answered(t, c, probe, clean)
	c.Close(context.Background())
}

// hazardsCounted sums the proxy's hazard counts.
func hazardsCounted(qp *quietProxy) int {
	hz := 0
	for _, h := range qp.Hazards() {
		hz += int(h.Count)
	}
	return hz
}
