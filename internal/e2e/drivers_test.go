package e2e

// Client drivers of other languages, each doing one thing with a known
// consequence: the programs under testdata/drivers take the proxy's URL
// and a scenario name and run that scenario on one connection.
//
// Runtimes, installed as internal/drivers documents them: Debian's
// /usr/bin/python3 with python3-psycopg2, python3-psycopg and
// python3-asyncpg (E2E_PYTHON overrides the interpreter); node with the pg
// package in testdata/drivers/node/node_modules (`npm ci --prefix
// internal/e2e/testdata/drivers/node`; internal/drivers/testdata/node's
// node_modules is used when this one is missing); java and javac with
// the pgjdbc jar (Debian's libpostgresql-jdbc-java,
// /usr/share/java/postgresql.jar, or $PGJDBC_JAR). A missing runtime skips
// the driver's scenarios, or fails them when CI=true.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// both is the same expected findings behind PgBouncer and PgBouncer < 1.21.
func both(findings ...string) map[rules.Target][]string {
	return map[rules.Target][]string{pgbouncer: findings, legacy: findings}
}

// prepared is what a statement prepared in one round trip and bound in
// later ones gives: info behind PgBouncer 1.21+, error behind older ones.
func prepared(extra ...string) map[rules.Target][]string {
	return map[rules.Target][]string{
		pgbouncer: append([]string{"protocol-prepare:info"}, extra...),
		legacy:    append([]string{"protocol-prepare:error"}, extra...),
	}
}

// jdbcConnect is what every pgjdbc connection brings: its startup packet
// holds extra_float_digits=2 (PgBouncer refuses the connection unless
// ignore_startup_parameters lists it: warning, dropping it is harmless),
// then it runs SET extra_float_digits = 3 and SET application_name in
// transactions of their own, and the client's later transactions run
// without the first behind a transaction pooler (application_name is
// tracked by PgBouncer: info).
var jdbcConnect = []string{"startup-parameter:warning", "session-set:error", "session-set:info"}

func jdbc(extra ...string) map[rules.Target][]string { return both(append(extra, jdbcConnect...)...) }

// jdbcPrepared: pgjdbc's statements, its own COMMIT included, become S_N
// from their fifth run (prepareThreshold), or its COMMIT from the first
// commit() on, bound in later transactions.
func jdbcPrepared(extra ...string) map[rules.Target][]string {
	return prepared(append(extra, jdbcConnect...)...)
}

type driverScenario struct {
	driver, scenario string
	want             map[rules.Target][]string
	// stmt is the prefix of the named statement the driver prepares, and
	// named how the protocol-prepare finding names the driver.
	stmt, named string
}

var driverScenarios = []driverScenario{
	// psycopg2: simple Query with inlined values; without autocommit,
	// BEGIN before each transaction's first statement.
	{driver: "psycopg2", scenario: "autocommit-set", want: both("session-set:error")},
	// With autocommit on, set_session(readonly=True) is psycopg2's own
	// SET default_transaction_read_only.
	{driver: "psycopg2", scenario: "readonly-autocommit", want: both("session-set:error")},
	// Without autocommit it sends BEGIN READ ONLY instead.
	{driver: "psycopg2", scenario: "readonly", want: both()},
	// set_client_encoding: SET client_encoding, a parameter PgBouncer
	// tracks per client.
	{driver: "psycopg2", scenario: "client-encoding", want: both("session-set:info")},
	// SET inside a transaction block outlives its COMMIT, unlike SET LOCAL.
	{driver: "psycopg2", scenario: "implicit-set", want: both("session-set:error")},
	{driver: "psycopg2", scenario: "implicit-set-rollback", want: both()},
	{driver: "psycopg2", scenario: "set-local", want: both()},
	{driver: "psycopg2", scenario: "advisory-lock", want: both("advisory-lock-session:error")},
	{driver: "psycopg2", scenario: "withhold-cursor", want: both("cursor-with-hold:error")},
	{driver: "psycopg2", scenario: "named-cursor", want: both()},
	// options=-c … in the connection string: startup parameter options.
	// PgBouncer 1.20+ keeps tracked settings in it (TimeZone) and refuses
	// others; before, it refuses options whatever it holds.
	{driver: "psycopg2", scenario: "options", want: both("startup-parameter:error")},
	{driver: "psycopg2", scenario: "options-tracked", want: map[rules.Target][]string{
		pgbouncer: nil,
		legacy:    {"startup-parameter:error"},
	}},
	// The implicit transaction left open while the program sleeps 1.5s.
	{driver: "psycopg2", scenario: "idle", want: both("idle-in-transaction:warning")},

	// psycopg 3: the unnamed statement, Parse to Sync in one round trip,
	// until a statement has run prepare_threshold times.
	{driver: "psycopg3", scenario: "prepare0", want: prepared(), stmt: "_pg3_", named: "named by psycopg 3"},
	{driver: "psycopg3", scenario: "repeat", want: prepared(), stmt: "_pg3_", named: "named by psycopg 3"},
	{driver: "psycopg3", scenario: "noprepare", want: both()},
	// prepared_max=2 and three statements: psycopg evicts _pg3_0 with
	// the SQL statement DEALLOCATE _pg3_0 (libpq before 17 has no Close
	// of a statement), in a later transaction than its Parse. No PgBouncer
	// version handles a DEALLOCATE in SQL: behind 1.21+ the server
	// statement is PgBouncer's PGBOUNCER_N and the DEALLOCATE fails with
	// "does not exist" (PgBouncer issue 991, PHP PDO's DEALLOCATE): an
	// error of the protocol-prepare rule besides the info of the Parse
	// and Binds; before 1.21 it reaches whichever connection is free
	// (protocol-prepare:error, as the Binds already are).
	{driver: "psycopg3", scenario: "evict", want: map[rules.Target][]string{
		pgbouncer: {"protocol-prepare:error", "protocol-prepare:info"},
		legacy:    {"protocol-prepare:error", "protocol-prepare:error"},
	}, stmt: "_pg3_", named: "named by psycopg 3"},
	// prepare_threshold=0 in pipeline mode: prepared and bound before the
	// pipeline's one Sync.
	{driver: "psycopg3", scenario: "pipeline", want: both()},
	// A pipeline whose first statement fails: the pg_advisory_lock after
	// it never runs (the server skips to the Sync).
	{driver: "psycopg3", scenario: "pipeline-error", want: both()},
	{driver: "psycopg3", scenario: "set-in-transaction", want: both("session-set:error")},
	{driver: "psycopg3", scenario: "set-local", want: both()},
	// A SET inside a nested transaction block (a savepoint) that is
	// rolled back: ROLLBACK TO SAVEPOINT undoes it.
	{driver: "psycopg3", scenario: "savepoint-rollback", want: both()},
	{driver: "psycopg3", scenario: "listen", want: both("listen:error")},

	// asyncpg: Parse, Describe and Flush, then Bind, Execute and Sync, in
	// one transaction; with its statement cache (the default) the named
	// statement is bound again in later transactions. Without the cache
	// the unnamed statement never crosses a Sync.
	{driver: "asyncpg", scenario: "cache", want: prepared(), stmt: "__asyncpg_stmt_", named: "named by asyncpg"},
	{driver: "asyncpg", scenario: "no-cache", want: both()},
	// server_settings go in the startup packet.
	{driver: "asyncpg", scenario: "server-settings", want: both("startup-parameter:error")},
	{driver: "asyncpg", scenario: "advisory-lock", want: both("advisory-lock-session:error")},
	// A pool of one: release() runs the reset query; nothing else.
	{driver: "asyncpg", scenario: "pool", want: both()},

	// node-postgres: Parse to Sync in one write; a named query is parsed
	// once per connection (the name is the application's).
	{driver: "node", scenario: "named", want: prepared(), stmt: "e2e_q1", named: "named by the application"},
	{driver: "node", scenario: "params", want: both()},
	{driver: "node", scenario: "set", want: both("session-set:error")},
	{driver: "node", scenario: "set-local", want: both()},
	{driver: "node", scenario: "temp-table", want: both("temp-table:error")},
	{driver: "node", scenario: "idle", want: both("idle-in-transaction:warning")},

	// pgjdbc: Parse to Sync in one round trip; S_N from the fifth run of
	// a PreparedStatement.
	{driver: "jdbc", scenario: "prepared", want: jdbcPrepared(), stmt: "S_", named: "named by the PostgreSQL JDBC driver"},
	{driver: "jdbc", scenario: "threshold0", want: jdbc()},
	{driver: "jdbc", scenario: "threshold0-set-local", want: jdbc()},
	{driver: "jdbc", scenario: "set", want: jdbc("session-set:error")},
	// setTransactionIsolation: SET SESSION CHARACTERISTICS.
	{driver: "jdbc", scenario: "isolation", want: jdbc("session-set:error")},
	// currentSchema: startup parameter search_path.
	{driver: "jdbc", scenario: "current-schema", want: jdbc("startup-parameter:error")},
	// setSchema: SET SESSION SCHEMA, the search_path.
	{driver: "jdbc", scenario: "schema", want: jdbc("session-set:critical")},
	// A fetch size: a portal read in several round trips of one
	// transaction.
	{driver: "jdbc", scenario: "fetch-size", want: jdbc()},
	// Autocommit off, two commit()s: S_1 is pgjdbc's COMMIT.
	{driver: "jdbc", scenario: "set-local", want: jdbcPrepared(), stmt: "S_", named: "named by the PostgreSQL JDBC driver"},
	{driver: "jdbc", scenario: "advisory-lock", want: jdbcPrepared("advisory-lock-session:error"), stmt: "S_", named: "named by the PostgreSQL JDBC driver"},
}

// TestDriverScenarios runs each driver program's scenario through the
// proxy in record mode, one connection and one capture per scenario, and
// checks the exact findings behind PgBouncer and PgBouncer before 1.21.
func TestDriverScenarios(t *testing.T) {
	srv := server(t)
	rts := newDriverRuntimes(t)
	for _, sc := range driverScenarios {
		t.Run(sc.driver+"/"+sc.scenario, func(t *testing.T) {
			t.Parallel()
			cmd := rts.get(t, sc.driver)
			r := record(t, srv)
			if out, err := cmd(r.url(), sc.scenario); err != nil {
				r.finish()
				msg := fmt.Sprintf("%s %s through the proxy: %v\n%s", sc.driver, sc.scenario, err, out)
				// Tell a proxy bug from a broken program: the same
				// scenario straight against PostgreSQL.
				if dout, derr := cmd(directURL(srv), sc.scenario); derr != nil {
					t.Fatalf("%s\nit fails directly against PostgreSQL too: %v\n%s", msg, derr, dout)
				}
				t.Fatalf("%s\nit passes directly against PostgreSQL: the failure is the proxy's", msg)
			}
			got := r.analyze(pgbouncer, legacy)
			expect(t, got, sc.want)
			if t.Failed() || os.Getenv("E2E_DEBUG") != "" {
				logCapture(t, r.path)
			}
			if sc.stmt != "" {
				checkPrepared(t, r.path, sc)
			}
		})
	}
}

// checkPrepared checks that the capture holds the driver's named
// statement and that protocol-prepare names the driver.
func checkPrepared(t *testing.T, path string, sc driverScenario) {
	t.Helper()
	var names []string
	for _, ev := range events(t, path) {
		if ev.Kind == capture.Parse && ev.Name != "" {
			names = append(names, ev.Name)
		}
	}
	found := false
	for _, n := range names {
		found = found || strings.HasPrefix(n, sc.stmt)
	}
	if !found {
		t.Errorf("no Parse of a %s… statement in the capture (named statements: %v)", sc.stmt, names)
	}
	cfg := &analyzer.Config{Target: pgbouncer, Rules: rules.All()}
	rep, _, err := traffic.Analyze(cfg, []string{path}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule == rules.ProtocolPrepare.ID && !strings.Contains(f.Message, "("+sc.named+")") {
			t.Errorf("protocol-prepare does not say %q: %s", sc.named, f.Message)
		}
	}
}

// logCapture logs the lines of a capture file.
func logCapture(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("capture %s:\n%s", path, b)
}

func directURL(srv *pgtest.Server) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, srv.Port, pgtest.Database)
}

// A driverCmd runs one scenario of a driver program against a URL.
type driverCmd func(url, scenario string) (string, error)

// driverRuntimes finds each driver's runtime once.
type driverRuntimes struct {
	dir  string // testdata/drivers
	tmp  string // compiled Java classes
	mu   sync.Mutex
	cmds map[string]driverCmd
	errs map[string]error
}

func newDriverRuntimes(t *testing.T) *driverRuntimes {
	dir, err := filepath.Abs(filepath.Join("testdata", "drivers"))
	if err != nil {
		t.Fatal(err)
	}
	return &driverRuntimes{dir: dir, tmp: t.TempDir(), cmds: map[string]driverCmd{}, errs: map[string]error{}}
}

// get returns the driver's command, skipping the test when the runtime is
// missing (failing it when CI=true).
func (d *driverRuntimes) get(t *testing.T, driver string) driverCmd {
	t.Helper()
	d.mu.Lock()
	cmd, ok := d.cmds[driver]
	err := d.errs[driver]
	if !ok && err == nil {
		cmd, err = d.find(driver)
		d.cmds[driver], d.errs[driver] = cmd, err
	}
	d.mu.Unlock()
	if err != nil {
		pgtest.Optional(t, "driver "+driver, ".ci/run installs the drivers", err.Error())
	}
	return cmd
}

var pythonModules = map[string]struct{ module, script, pkg string }{
	"psycopg2": {"psycopg2", "psycopg2_scenario.py", "python3-psycopg2"},
	"psycopg3": {"psycopg", "psycopg3_scenario.py", "python3-psycopg"},
	"asyncpg":  {"asyncpg", "asyncpg_scenario.py", "python3-asyncpg"},
}

func (d *driverRuntimes) find(driver string) (driverCmd, error) {
	if m, ok := pythonModules[driver]; ok {
		interp := os.Getenv("E2E_PYTHON")
		if interp == "" {
			// Debian's interpreter sees Debian's driver packages.
			interp = "/usr/bin/python3"
		}
		if out, err := exec.Command(interp, "-c", "import "+m.module).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s cannot import %s (Debian package %s): %v: %s", interp, m.module, m.pkg, err, bytes.TrimSpace(out))
		}
		script := filepath.Join(d.dir, m.script)
		return func(url, scenario string) (string, error) {
			return runProgram(nil, interp, script, url, scenario)
		}, nil
	}
	switch driver {
	case "node":
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, fmt.Errorf("no node on PATH: %v", err)
		}
		var env []string
		if !fileExists(filepath.Join(d.dir, "node", "node_modules", "pg", "package.json")) {
			other := filepath.Join(d.dir, "..", "..", "..", "drivers", "testdata", "node", "node_modules")
			if !fileExists(filepath.Join(other, "pg", "package.json")) {
				return nil, fmt.Errorf("node-postgres is not installed (npm ci --prefix internal/e2e/testdata/drivers/node)")
			}
			env = []string{"NODE_PATH=" + other}
		}
		script := filepath.Join(d.dir, "node", "scenario.js")
		return func(url, scenario string) (string, error) {
			return runProgram(env, node, script, url, scenario)
		}, nil
	case "jdbc":
		java, err := exec.LookPath("java")
		if err != nil {
			return nil, fmt.Errorf("no java on PATH: %v", err)
		}
		javac, err := exec.LookPath("javac")
		if err != nil {
			return nil, fmt.Errorf("no javac on PATH: %v", err)
		}
		jar := os.Getenv("PGJDBC_JAR")
		if jar == "" {
			jar = "/usr/share/java/postgresql.jar"
		}
		if !fileExists(jar) {
			return nil, fmt.Errorf("no pgjdbc jar at %s (Debian package libpostgresql-jdbc-java, or set PGJDBC_JAR)", jar)
		}
		if out, err := exec.Command(javac, "-d", d.tmp, "-cp", jar, filepath.Join(d.dir, "JdbcScenario.java")).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("javac JdbcScenario.java: %v\n%s", err, out)
		}
		cp := jar + string(os.PathListSeparator) + d.tmp
		return func(url, scenario string) (string, error) {
			return runProgram(nil, java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp, "JdbcScenario", url, scenario)
		}, nil
	}
	return nil, fmt.Errorf("unknown driver %q", driver)
}

// runProgram runs a driver program with a timeout and returns its output.
func runProgram(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
