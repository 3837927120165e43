package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/lib/pq"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

const (
	pgbouncer = rules.PgBouncer
	legacy    = rules.PgBouncerLegacy
)

var setupOnce sync.Once

// server returns the shared server with the objects the scenarios use.
func server(t *testing.T) *pgtest.Server {
	t.Helper()
	srv := pgtest.Shared(t)
	var err error
	setupOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = srv.Exec(ctx, `CREATE SEQUENCE IF NOT EXISTS e2e_seq; CREATE TABLE IF NOT EXISTS e2e_jobs (id int)`)
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// step is one thing a pgx client does: a statement (sent with the simple
// protocol, as pgx's Exec does without arguments) or a pause.
type step struct {
	sql   string
	sleep time.Duration
}

func q(sql string) step          { return step{sql: sql} }
func pause(d time.Duration) step { return step{sleep: d} }
func qs(sqls ...string) (s []step) { // statements, one Exec each
	for _, x := range sqls {
		s = append(s, q(x))
	}
	return s
}

// TestSQLScenarios runs each scenario's statements with pgx through the
// proxy in record mode, one connection and one capture per scenario, and
// checks the exact findings behind PgBouncer.
func TestSQLScenarios(t *testing.T) {
	srv := server(t)
	tests := []struct {
		name  string
		steps []step
		want  []string
	}{
		// A session SET, and later transactions run without it behind
		// a transaction pooler.
		{"set then a later transaction", qs(
			"SET statement_timeout = '5s'",
			"SELECT count(*) FROM pg_class",
		), []string{"session-set:error"}},
		// The SET is the session's last statement: nothing relied on it.
		{"set in the last transaction", qs(
			"SELECT 1",
			"SET statement_timeout = '5s'",
		), nil},
		{"set local inside begin/commit", qs(
			"BEGIN",
			"SET LOCAL statement_timeout = '5s'",
			"SELECT count(*) FROM pg_class",
			"COMMIT",
			"SELECT 1",
		), nil},
		{"set_config(..., false)", qs(
			"SELECT set_config('search_path', 'public', false)",
			"SELECT count(*) FROM pg_class",
		), []string{"session-set:critical"}},
		{"set_config(..., true)", qs(
			"BEGIN",
			"SELECT set_config('search_path', 'public', true)",
			"SELECT count(*) FROM pg_class",
			"COMMIT",
			"SELECT 1",
		), nil},
		{"set role", qs(
			"SET ROLE pg_read_all_data",
			"SELECT count(*) FROM pg_class",
			"RESET ROLE",
		), []string{"session-role:critical"}},
		{"session advisory lock", qs(
			"SELECT pg_advisory_lock(4242)",
			"SELECT count(*) FROM pg_class",
			"SELECT pg_advisory_unlock(4242)",
		), []string{"advisory-lock-session:error"}},
		{"transaction advisory lock", qs(
			"BEGIN",
			"SELECT pg_advisory_xact_lock(4242)",
			"SELECT count(*) FROM pg_class",
			"COMMIT",
			"SELECT 1",
		), nil},
		{"listen", qs(
			"LISTEN e2e_jobs",
			"NOTIFY e2e_jobs, 'job 1'",
			"SELECT 1",
		), []string{"listen:error"}},
		{"notify only", qs(
			"NOTIFY e2e_jobs, 'job 1'",
			"SELECT pg_notify('e2e_jobs', 'job 2')",
			"SELECT 1",
		), nil},
		{"temp table across transactions", qs(
			"CREATE TEMP TABLE e2e_scratch (id int)",
			"INSERT INTO e2e_scratch VALUES (1)",
			"SELECT count(*) FROM e2e_scratch",
		), []string{"temp-table:error"}},
		{"temp table on commit drop", qs(
			"BEGIN",
			"CREATE TEMP TABLE e2e_scratch (id int) ON COMMIT DROP",
			"INSERT INTO e2e_scratch VALUES (1)",
			"SELECT count(*) FROM e2e_scratch",
			"COMMIT",
			"SELECT 1",
		), nil},
		{"with hold cursor fetched after commit", qs(
			"BEGIN",
			"DECLARE e2e_cur CURSOR WITH HOLD FOR SELECT generate_series(1, 10)",
			"COMMIT",
			"FETCH 5 FROM e2e_cur",
			"CLOSE e2e_cur",
		), []string{"cursor-with-hold:error"}},
		{"ordinary cursor", qs(
			"BEGIN",
			"DECLARE e2e_cur CURSOR FOR SELECT generate_series(1, 10)",
			"FETCH 5 FROM e2e_cur",
			"CLOSE e2e_cur",
			"COMMIT",
			"SELECT 1",
		), nil},
		{"sql prepare/execute across transactions", qs(
			"PREPARE e2e_q(int) AS SELECT $1 + 1",
			"EXECUTE e2e_q(1)",
			"DEALLOCATE e2e_q",
		), []string{"sql-prepare:error"}},
		{"sql prepare/execute in one transaction", qs(
			"BEGIN",
			"PREPARE e2e_q(int) AS SELECT $1 + 1",
			"EXECUTE e2e_q(1)",
			"DEALLOCATE e2e_q",
			"COMMIT",
		), nil},
		{"nextval then currval in a later transaction", qs(
			"SELECT nextval('e2e_seq')",
			"SELECT currval('e2e_seq')",
		), []string{"sequence-session:error"}},
		{"nextval and currval in one transaction", qs(
			"BEGIN",
			"SELECT nextval('e2e_seq')",
			"SELECT currval('e2e_seq')",
			"COMMIT",
		), nil},
		{"transaction left idle for 1.5s", []step{
			q("BEGIN"),
			q("SELECT id FROM e2e_jobs FOR UPDATE"),
			pause(1500 * time.Millisecond),
			q("COMMIT"),
		}, []string{"idle-in-transaction:warning"}},
		{"transaction idle for less than the threshold", []step{
			q("BEGIN"),
			q("SELECT id FROM e2e_jobs FOR UPDATE"),
			pause(200 * time.Millisecond),
			q("COMMIT"),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			r := record(t, srv)
			ctx := testCtx(t)
			c, err := pgx.Connect(ctx, r.url())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.steps {
				if s.sleep > 0 {
					time.Sleep(s.sleep)
					continue
				}
				if _, err := c.Exec(ctx, s.sql); err != nil {
					t.Fatalf("%s: %v", s.sql, err)
				}
			}
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			expect(t, r.analyze(pgbouncer), map[rules.Target][]string{pgbouncer: tt.want})
		})
	}
}

// TestPgxModes: pgx's default mode caches named statements, parsed in one
// round trip and bound in the next (protocol-prepare: info behind
// PgBouncer 1.21+, error behind older ones); QueryExecModeExec sends
// Parse, Bind and Execute of the unnamed statement in one round trip
// (nothing to report).
func TestPgxModes(t *testing.T) {
	srv := server(t)
	tests := []struct {
		mode pgx.QueryExecMode
		want map[rules.Target][]string
	}{
		{pgx.QueryExecModeCacheStatement, map[rules.Target][]string{
			pgbouncer: {"protocol-prepare:info"},
			legacy:    {"protocol-prepare:error"},
		}},
		{pgx.QueryExecModeExec, map[rules.Target][]string{pgbouncer: nil, legacy: nil}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			t.Parallel()
			r := record(t, srv)
			ctx := testCtx(t)
			cfg, err := pgx.ParseConfig(r.url() + "&application_name=e2e-pgx")
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = tt.mode
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				var n int
				if err := c.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&n); err != nil || n != i+1 {
					t.Fatalf("query: %v (%d)", err, n)
				}
			}
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO e2e_jobs VALUES ($1)", 7); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			c.Close(ctx)
			got := r.analyze(pgbouncer, legacy)
			expect(t, got, tt.want)
			if tt.mode == pgx.QueryExecModeCacheStatement {
				var named bool
				for _, ev := range events(t, r.path) {
					named = named || ev.Kind == capture.Parse && strings.HasPrefix(ev.Name, "stmtcache_")
				}
				if !named {
					t.Error("no Parse of a stmtcache_ statement in the capture")
				}
			}
		})
	}
}

var pgbenchInit sync.Once

// TestPgbench runs pgbench -S through the proxy: -M prepared prepares
// named statements (P_0…) once per connection and binds them in every
// later transaction (protocol-prepare); -M extended sends the unnamed
// statement's Parse, Bind and Execute in one round trip (nothing).
func TestPgbench(t *testing.T) {
	srv := server(t)
	pgbench := tool(t, srv, "pgbench")
	pgbenchInit.Do(func() {
		runTool(t, pgbench, "-i", "-q", "-s", "1", "-h", srv.Dir, "-p", fmt.Sprint(srv.Port), "-U", pgtest.SuperUser, pgtest.Database)
	})
	tests := []struct {
		mode string
		want map[rules.Target][]string
	}{
		{"prepared", map[rules.Target][]string{
			pgbouncer: {"protocol-prepare:info"},
			legacy:    {"protocol-prepare:error"},
		}},
		{"extended", map[rules.Target][]string{pgbouncer: nil, legacy: nil}},
		{"simple", map[rules.Target][]string{pgbouncer: nil, legacy: nil}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			r := record(t, srv)
			runTool(t, pgbench, "-S", "-t", "50", "-c", "2", "-M", tt.mode,
				"-h", "127.0.0.1", "-p", fmt.Sprint(r.port), "-U", pgtest.SuperUser, pgtest.Database)
			expect(t, r.analyze(pgbouncer, legacy), tt.want)
		})
	}
}

// TestPsql: psql sends each -c as one simple Query in autocommit, so a SET
// in the first is a session SET the second -c runs with; a script that
// wraps its SET in a transaction with SET LOCAL leaves nothing.
func TestPsql(t *testing.T) {
	srv := server(t)
	psql := tool(t, srv, "psql")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"set then a second -c", []string{"-c", "SET work_mem = '64MB'", "-c", "SELECT count(*) FROM pg_class"}, []string{"session-set:error"}},
		{"set search_path in a script", []string{"-f", "-"}, []string{"session-set:critical"}},
		{"set local in one transaction", []string{"-1", "-c", "SET LOCAL work_mem = '64MB'", "-c", "SELECT count(*) FROM pg_class"}, nil},
	}
	script := "SET search_path TO public;\nSELECT count(*) FROM pg_class;\n\\echo done\n"
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			r := record(t, srv)
			args := append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", fmt.Sprint(r.port), "-U", pgtest.SuperUser, "-d", pgtest.Database}, tt.args...)
			if tt.args[0] == "-f" {
				f, err := os.CreateTemp(t.TempDir(), "script-*.sql")
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(script)
				f.Close()
				args[len(args)-1] = f.Name()
			}
			runTool(t, psql, args...)
			expect(t, r.analyze(pgbouncer), map[rules.Target][]string{pgbouncer: tt.want})
		})
	}
}

// TestLibPQ: lib/pq sends a query with arguments as Parse of the unnamed
// statement, Describe and Sync, then Bind and Execute in a second round
// trip (unnamed-statement-reuse: behind a transaction pooler the Bind may
// reach another server connection); without arguments it sends a simple
// Query (nothing to report). Its startup packet holds client_encoding and
// datestyle, both tracked by PgBouncer, so no startup-parameter. lib/pq
// before 1.11 also sent extra_float_digits=2, which PgBouncer refuses
// unless ignore_startup_parameters lists it (startup-parameter: warning,
// since dropping that one is harmless); the third case sends it
// explicitly, as those versions did.
func TestLibPQ(t *testing.T) {
	srv := server(t)
	tests := []struct {
		name   string
		params string
		args   bool
		want   map[rules.Target][]string
	}{
		{"query with arguments", "", true, map[rules.Target][]string{
			pgbouncer:         {"unnamed-statement-reuse:error"},
			rules.PgPoolCheck: {"unnamed-statement-reuse:info"},
		}},
		{"query without arguments", "", false, map[rules.Target][]string{pgbouncer: nil}},
		{"extra_float_digits of older lib/pq", "&extra_float_digits=2", false, map[rules.Target][]string{
			pgbouncer:         {"startup-parameter:warning"},
			legacy:            {"startup-parameter:warning"},
			rules.PgPoolCheck: {"startup-parameter:info"},
		}},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			r := record(t, srv)
			db, err := sql.Open("postgres", r.url()+tt.params)
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			ctx := testCtx(t)
			for i := range 2 {
				var n int
				if tt.args {
					err = db.QueryRowContext(ctx, "SELECT $1::int + 1", i).Scan(&n)
				} else {
					err = db.QueryRowContext(ctx, fmt.Sprintf("SELECT %d + 1", i)).Scan(&n)
				}
				if err != nil || n != i+1 {
					t.Fatalf("query: %v (%d)", err, n)
				}
			}
			db.Close()
			targets := make([]rules.Target, 0, len(tt.want))
			for target := range tt.want {
				targets = append(targets, target)
			}
			expect(t, r.analyze(targets...), tt.want)
			var params map[string]string
			for _, ev := range events(t, r.path) {
				if ev.Kind == capture.SessionStart {
					params = ev.Params
				}
			}
			if params["client_encoding"] == "" || params["datestyle"] == "" {
				t.Errorf("lib/pq's startup parameters %v lack client_encoding or datestyle", params)
			}
			if _, ok := params["extra_float_digits"]; ok != (tt.params != "") {
				t.Errorf("lib/pq's startup parameters: %v", params)
			}
		})
	}
}

// TestNoProxyTrafficRecorded checks that a capture holds only the
// client's conversation: every ReadyForQuery answers a client message.
// When a client leaves, the proxy itself sends the server an empty query
// (or DISCARD ALL) to reset the connection; the answer to that is not the
// client's and must not be recorded.
func TestNoProxyTrafficRecorded(t *testing.T) {
	srv := server(t)
	r := record(t, srv)
	ctx := testCtx(t)
	c, err := pgx.Connect(ctx, r.url())
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"SELECT 1", "SET statement_timeout = '5s'"} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	c.Close(ctx)
	path := r.finish()
	pending := map[uint64]bool{} // a client message awaits its ReadyForQuery
	var stray []string
	for _, ev := range events(t, path) {
		switch ev.Kind {
		case capture.Query, capture.Sync, capture.FunctionCall:
			pending[ev.Session] = true
		case capture.Ready:
			if !pending[ev.Session] {
				stray = append(stray, fmt.Sprintf("session %d tx %d: ready %s", ev.Session, ev.Tx, ev.Status))
			}
			pending[ev.Session] = false
		}
	}
	if len(stray) > 0 {
		// The answer to the reset the proxy sends after its client left
		// must not be recorded as the client's.
		t.Fatalf("ReadyForQuery recorded without a client message: %v", stray)
	}
}

// TestStartupSearchPath: a client that sets search_path in its startup
// packet (libpq's options, pgx's runtime parameters). Record mode should
// let it in, as the server would, so that analyze reports what PgBouncer
// would refuse or drop (startup-parameter: error).
func TestStartupSearchPath(t *testing.T) {
	srv := server(t)
	r := record(t, srv)
	ctx := testCtx(t)
	c, err := pgx.Connect(ctx, r.url()+"&search_path=public")
	if err != nil {
		r.finish()
		t.Fatalf("record mode refuses a startup parameter the server accepts: %v", err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	expect(t, r.analyze(pgbouncer), map[rules.Target][]string{pgbouncer: {"startup-parameter:error"}})
}
