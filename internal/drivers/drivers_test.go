// Package drivers runs real client drivers of other languages through the
// pooler in transaction mode, with a pool of 2 servers and many more
// concurrent clients, and checks every result they get.
//
// Each variant is a program under testdata (psycopg2, psycopg 3 and
// asyncpg in Python, node-postgres, pgjdbc) started with the proxy's URL, a
// variant name, a number of clients and a number of rounds. Every client
// connects before any starts, then runs the same round:
//
//   - SELECT $1::int + 1 with a value of its own, and a second statement
//     with two parameters; both texts recur every round, so drivers that
//     prepare recurring statements (psycopg 3, asyncpg, pgjdbc) switch to
//     named server-side statements;
//   - every 10th round a transaction: txid_current() and pg_backend_pid()
//     twice (they must agree: one server for the whole transaction) around
//     an INSERT into driver_rows that commits;
//   - every 25th round a division by zero outside a transaction (SQLSTATE
//     22012), then a query that must work;
//   - every 50th round a division by zero inside a transaction, a query
//     that must fail with 25P02, and ROLLBACK.
//
// The program prints one line of JSON: ok (rounds that passed every
// check), errors, first_error and rows (rows it inserted and committed).
// The test asserts no errors, ok = clients × rounds, and that the table
// holds exactly the rows the program reports and the variant should have
// inserted. When a variant fails through the pooler the test runs it again
// directly against PostgreSQL and says whether it passes there.
//
// Runtimes: Debian's /usr/bin/python3 with python3-psycopg2,
// python3-psycopg and python3-asyncpg; node with the pg package installed
// into testdata/node/node_modules (`npm ci --prefix
// internal/drivers/testdata/node`); java and javac with the pgjdbc jar
// (Debian's libpostgresql-jdbc-java, /usr/share/java/postgresql.jar, or
// $PGJDBC_JAR). .ci/run installs all of them. A missing runtime skips the
// variant, or fails it when CI=true.
//
// Environment: DRIVERS_PYTHON overrides the Python interpreter,
// DRIVERS_CLIENTS and DRIVERS_ROUNDS the load, DRIVERS_DEBUG=1 logs the
// proxy at debug level.
//
// Another pooler: with DRIVERS_EXTERNAL_URL (the pooler, e.g.
// postgres://postgres@127.0.0.1:27461/postgres) and DRIVERS_EXTERNAL_SERVER
// (the PostgreSQL behind it, e.g.
// postgres://postgres@127.0.0.1:27460/postgres) both set, the test starts
// neither pgtest's server nor the proxy: every variant runs through
// DRIVERS_EXTERNAL_URL, and the table, the row counts and the direct run
// of a failing variant use DRIVERS_EXTERNAL_SERVER, which must hold no
// password. Both name the user postgres and the database postgres (the
// programs connect as them); the pooler must reach that server with them.
// Nothing is checked about the pooler's pool size or mode: that is the
// caller's. scripts/drivers-vs-pgbouncer.sh runs the variants through
// PgBouncer so.
//
// DRIVERS_SUMMARY=1 logs one line per variant for scripts to read:
// "DRIVERS-RESULT", the variant, PASS or FAIL, the direct run's verdict
// (direct-pass, direct-fail or -) and the first error, separated by tabs.
package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}

// cleanups run after every test (temporary directories shared by tests).
var cleanups []func()

// poolSize is the pool the drivers share; every variant runs many more
// clients than this.
const poolSize = 2

// A variant is one driver configuration.
type variant struct {
	// name is the subtest name, driver/variant; the program is told the
	// part after the slash.
	name string
	// runtime is python, node or java.
	runtime string
	// module is the Python module the program imports.
	module string
	// script is the program under testdata (python and node).
	script string
	// rowsPerTx is how many rows the transaction step inserts.
	rowsPerTx int
}

func (v variant) mode() string { return v.name[strings.IndexByte(v.name, '/')+1:] }

var variants = []variant{
	{name: "psycopg2/plain", runtime: "python", module: "psycopg2", script: "psycopg2_load.py"},
	{name: "psycopg2/implicit", runtime: "python", module: "psycopg2", script: "psycopg2_load.py"},
	{name: "psycopg2/named-cursor", runtime: "python", module: "psycopg2", script: "psycopg2_load.py"},
	{name: "psycopg3/default", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/autocommit", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/prepare0", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/noprepare", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/evict", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/pipeline", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/async", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "psycopg3/async-pipeline", runtime: "python", module: "psycopg", script: "psycopg3_load.py"},
	{name: "asyncpg/default", runtime: "python", module: "asyncpg", script: "asyncpg_load.py"},
	{name: "asyncpg/nocache", runtime: "python", module: "asyncpg", script: "asyncpg_load.py"},
	{name: "asyncpg/executemany", runtime: "python", module: "asyncpg", script: "asyncpg_load.py", rowsPerTx: 3},
	{name: "asyncpg/cursor", runtime: "python", module: "asyncpg", script: "asyncpg_load.py"},
	{name: "asyncpg/pool", runtime: "python", module: "asyncpg", script: "asyncpg_load.py"},
	{name: "node-postgres/plain", runtime: "node", script: "node/load.js"},
	{name: "node-postgres/named", runtime: "node", script: "node/load.js"},
	{name: "node-postgres/pool", runtime: "node", script: "node/load.js"},
	{name: "jdbc/default", runtime: "java"},
	{name: "jdbc/threshold1", runtime: "java"},
	{name: "jdbc/threshold0", runtime: "java"},
	{name: "jdbc/forcebinary", runtime: "java"},
	{name: "jdbc/batch", runtime: "java", rowsPerTx: 3},
	{name: "jdbc/fetchsize", runtime: "java"},
	{name: "jdbc/cache-everything", runtime: "java"},
	{name: "jdbc/extended-for-prepared", runtime: "java"},
	{name: "jdbc/simple", runtime: "java"},
}

// result is the line of JSON a driver program prints.
type result struct {
	OK         int     `json:"ok"`
	Errors     int     `json:"errors"`
	FirstError *string `json:"first_error"`
	Rows       int     `json:"rows"`
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// An endpoint is where the test connects: a PostgreSQL server or a pooler.
type endpoint struct {
	// url is a connection URL as the superuser, for the test's own
	// statements.
	url string
	// host and port are where the driver programs connect (over TCP).
	host string
	port int
}

// exec runs SQL on the endpoint.
func (e endpoint) exec(ctx context.Context, sql string) error {
	c, err := pgconn.Connect(ctx, e.url)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql).ReadAll()
	return err
}

// parseEndpoint reads DRIVERS_EXTERNAL_URL or DRIVERS_EXTERNAL_SERVER: a
// postgres:// URL with a host and port, the user postgres and the
// database postgres, which the programs use.
func parseEndpoint(name, s string) (endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s: %v", name, err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return endpoint{}, fmt.Errorf("%s=%q: want a postgres:// URL", name, s)
	}
	port := 5432
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return endpoint{}, fmt.Errorf("%s=%q: port: %v", name, s, err)
		}
	}
	if u.Hostname() == "" {
		return endpoint{}, fmt.Errorf("%s=%q: want a host: the programs connect over TCP", name, s)
	}
	if u.User.Username() != pgtest.SuperUser || strings.TrimPrefix(u.Path, "/") != pgtest.Database {
		return endpoint{}, fmt.Errorf("%s=%q: want the user %s and the database %s: the programs connect as them", name, s, pgtest.SuperUser, pgtest.Database)
	}
	return endpoint{url: s, host: u.Hostname(), port: port}, nil
}

// external reads DRIVERS_EXTERNAL_URL and DRIVERS_EXTERNAL_SERVER: the
// pooler and its server, or ok false when neither is set.
func external(t *testing.T) (pool, server endpoint, ok bool) {
	t.Helper()
	p, s := os.Getenv("DRIVERS_EXTERNAL_URL"), os.Getenv("DRIVERS_EXTERNAL_SERVER")
	if p == "" && s == "" {
		return endpoint{}, endpoint{}, false
	}
	if p == "" || s == "" {
		t.Fatal("DRIVERS_EXTERNAL_URL and DRIVERS_EXTERNAL_SERVER go together: the pooler and the PostgreSQL behind it")
	}
	var err error
	if pool, err = parseEndpoint("DRIVERS_EXTERNAL_URL", p); err != nil {
		t.Fatal(err)
	}
	if server, err = parseEndpoint("DRIVERS_EXTERNAL_SERVER", s); err != nil {
		t.Fatal(err)
	}
	return pool, server, true
}

func TestDrivers(t *testing.T) {
	pool, server, ext := external(t)
	if !ext {
		srv := pgtest.Shared(t)
		server = endpoint{url: srv.SocketURL(pgtest.SuperUser), host: "127.0.0.1", port: srv.Port}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := server.exec(ctx, `CREATE TABLE IF NOT EXISTS driver_rows (variant text NOT NULL, client int NOT NULL, round int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	clients := envInt(t, "DRIVERS_CLIENTS", 20)
	rounds := envInt(t, "DRIVERS_ROUNDS", 100)
	if rounds%10 != 0 {
		t.Fatalf("DRIVERS_ROUNDS=%d: want a multiple of 10", rounds)
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			var through *endpoint
			if ext {
				through = &pool
			}
			runVariant(t, ctx, server, through, v, clients, rounds)
		})
	}
}

// runVariant runs a variant through an in-process proxy in front of
// server, or through the external pooler when through is not nil.
func runVariant(t *testing.T, ctx context.Context, server endpoint, through *endpoint, v variant, clients, rounds int) {
	rt := runtimeFor(t, v)
	// first is the first error, one line, for DRIVERS_SUMMARY; direct the
	// direct run's verdict.
	first, direct := "", "-"
	if os.Getenv("DRIVERS_SUMMARY") == "1" {
		defer func() {
			status := "PASS"
			if t.Failed() {
				status = "FAIL"
				if first == "" {
					first = "(see the test log)"
				}
			}
			t.Logf("DRIVERS-RESULT\t%s\t%s\t%s\t%s", v.name, status, direct, oneLine(first))
		}()
	}
	if err := server.exec(ctx, fmt.Sprintf(`DELETE FROM driver_rows WHERE variant IN ('%[1]s', '%[1]s-failed')`, v.name)); err != nil {
		t.Fatal(err)
	}
	var p *pooler.Proxy
	host, port, via := "127.0.0.1", 0, fmt.Sprintf("a pool of %d", poolSize)
	if through != nil {
		host, port, via = through.host, through.port, through.url
	} else {
		p, port = startProxyTo(t, server.url)
	}
	start := time.Now()
	res, out, err := rt.run(ctx, t, v, host, port, clients, rounds)
	t.Logf("%s: %d clients × %d rounds through %s in %v", v.name, clients, rounds, via, time.Since(start).Round(time.Millisecond))
	if p != nil {
		snap := p.Snapshot()
		for _, ps := range snap.Pools {
			t.Logf("pool %s/%s: %d server assignments, %d transactions, %d queries, %d waits; servers opened %d, lost %d",
				ps.Database, ps.User, ps.Totals.ServerAssignments, ps.Totals.Transactions, ps.Totals.Queries, ps.Totals.Waits, snap.ServersOpened, snap.ServersLost)
		}
	}
	failed := false
	switch {
	case err != nil:
		t.Errorf("%s: %v\n%s", v.name, err, out)
		first = programError(err, out)
		failed = true
	case res.Errors != 0 || res.OK != clients*rounds:
		if res.FirstError != nil {
			first = *res.FirstError
		}
		t.Errorf("%s through the pooler: %d rounds ok (want %d), %d errors; first: %s", v.name, res.OK, clients*rounds, res.Errors, first)
		if first == "" {
			first = fmt.Sprintf("%d rounds ok (want %d), %d errors", res.OK, clients*rounds, res.Errors)
		}
		failed = true
	default:
		rowsPerTx := max(v.rowsPerTx, 1)
		want := clients * (rounds / 10) * rowsPerTx
		if res.Rows != want {
			t.Errorf("%s: the program reports %d rows inserted, want %d", v.name, res.Rows, want)
			first = fmt.Sprintf("the program reports %d rows inserted, want %d", res.Rows, want)
		}
		if n := countRows(t, ctx, server, v.name); n != want {
			t.Errorf("%s: driver_rows holds %d rows of the variant, want %d", v.name, n, want)
			if first == "" {
				first = fmt.Sprintf("driver_rows holds %d rows of the variant, want %d", n, want)
			}
		}
		// Rows of a failed statement (jdbc/batch: a batch whose second
		// row fails) must not have been committed.
		if n := countRows(t, ctx, server, v.name+"-failed"); n != 0 {
			t.Errorf("%s: driver_rows holds %d rows of a batch that failed", v.name, n)
			if first == "" {
				first = fmt.Sprintf("driver_rows holds %d rows of a batch that failed", n)
			}
		}
	}
	if failed {
		// Tell a pooler bug from a broken program: the same run straight
		// against PostgreSQL.
		if err := server.exec(ctx, fmt.Sprintf(`DELETE FROM driver_rows WHERE variant = '%s'`, v.name)); err != nil {
			t.Fatal(err)
		}
		dres, dout, derr := rt.run(ctx, t, v, server.host, server.port, clients, rounds)
		if derr != nil || dres.Errors != 0 || dres.OK != clients*rounds {
			t.Errorf("%s fails directly against PostgreSQL too (%v, %+v):\n%s", v.name, derr, dres, dout)
			direct = "direct-fail"
		} else {
			t.Errorf("%s passes directly against PostgreSQL: the failure is the pooler's", v.name)
			direct = "direct-pass"
		}
	}
}

// programError is one line for a program that failed: the exception of a
// Python traceback (its last line), else the first line that starts with
// an exception's name ("Error: …", "org.postgresql.util.PSQLException: …"),
// else the first line that names an error or exception, else the error.
func programError(err error, out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if strings.Contains(out, "Traceback (most recent call last):") && len(lines) > 0 {
		return lines[len(lines)-1]
	}
	for _, l := range lines {
		if name, _, ok := strings.Cut(l, ": "); ok && !strings.ContainsAny(name, " \t") &&
			(strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception")) {
			return l
		}
	}
	for _, l := range lines {
		if ll := strings.ToLower(l); strings.Contains(ll, "error") || strings.Contains(ll, "exception") {
			return l
		}
	}
	return err.Error()
}

// oneLine makes a message one line without tabs.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func countRows(t *testing.T, ctx context.Context, server endpoint, name string) int {
	t.Helper()
	c, err := pgx.Connect(ctx, server.url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM driver_rows WHERE variant = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// startProxy starts the pooler as the command line does by default
// (transaction mode, the session-state classifier with the preserve
// policy), with a pool of poolSize, on a free port in 21000–29999 (below
// the ephemeral range).
func startProxy(t *testing.T, srv *pgtest.Server) (*pooler.Proxy, int) {
	t.Helper()
	return startProxyTo(t, srv.SocketURL(pgtest.SuperUser))
}

// startProxyTo is startProxy in front of the server at upstream.
func startProxyTo(t *testing.T, upstream string) (*pooler.Proxy, int) {
	t.Helper()
	level := slog.LevelWarn
	if os.Getenv("DRIVERS_DEBUG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
	return proxytest.Start(t, pooler.Config{
		Upstream: upstream,
		Mode:     pooler.ModeTransaction,
		PoolSize: poolSize,
		// Clients wait milliseconds for a server here; a server kept
		// by a client (a pooler bug) fails the waiters soon.
		QueryWaitTimeout: 15 * time.Second,
		Logger:           logger,
		Classifier:       sessionstate.New(),
		OnSessionState:   pooler.PolicyPreserve,
	}, 20*time.Second)
}

// testWriter sends the proxy's log lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// missing skips the test for a runtime or driver that is not installed,
// or fails it when CI=true: CI installs every one of them.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	group := t.Name()
	if i := strings.IndexByte(group, '/'); i >= 0 {
		group = group[i+1:]
	}
	if i := strings.IndexByte(group, '/'); i >= 0 {
		group = group[:i] // the driver: node-postgres, pgjdbc, …
	}
	pgtest.Optional(t, "driver "+group, ".ci/run installs the drivers", fmt.Sprintf(format, args...))
}

// A runner starts one variant's program.
type runner interface {
	command(ctx context.Context, v variant, host string, port, clients, rounds int) *exec.Cmd
}

type runtime struct{ runner }

// run starts the program and decodes its last line of output.
func (r runtime) run(ctx context.Context, t *testing.T, v variant, host string, port, clients, rounds int) (result, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := r.command(ctx, v, host, port, clients, rounds)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := stdout.String() + stderr.String()
	if err != nil {
		return result{}, out, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return result{}, out, fmt.Errorf("%s: output is no JSON summary: %w", strings.Join(cmd.Args, " "), err)
	}
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", v.name, stderr.String())
	}
	return res, out, nil
}

func pgURL(host string, port int) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", pgtest.SuperUser, host, port, pgtest.Database)
}

// --- Python ---------------------------------------------------------------

type python struct{ interp, dir string }

func (p python) command(ctx context.Context, v variant, host string, port, clients, rounds int) *exec.Cmd {
	return exec.CommandContext(ctx, p.interp, filepath.Join(p.dir, v.script), pgURL(host, port), v.mode(), strconv.Itoa(clients), strconv.Itoa(rounds))
}

// --- Node.js ----------------------------------------------------------------

type node struct{ bin, dir string }

func (n node) command(ctx context.Context, v variant, host string, port, clients, rounds int) *exec.Cmd {
	return exec.CommandContext(ctx, n.bin, filepath.Join(n.dir, v.script), pgURL(host, port), v.mode(), strconv.Itoa(clients), strconv.Itoa(rounds))
}

// --- Java -----------------------------------------------------------------

type java struct{ classpath string }

func (j java) command(ctx context.Context, v variant, host string, port, clients, rounds int) *exec.Cmd {
	return exec.CommandContext(ctx, "java", "-cp", j.classpath, "Load", host, strconv.Itoa(port), v.mode(), strconv.Itoa(clients), strconv.Itoa(rounds))
}

var (
	javaOnce    sync.Once
	javaClasses string
	javaJar     string
	javaErr     error
)

// pgjdbcJar finds the pgjdbc jar: $PGJDBC_JAR, or Debian's
// libpostgresql-jdbc-java.
func pgjdbcJar() (string, error) {
	if p := os.Getenv("PGJDBC_JAR"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("PGJDBC_JAR: %v", err)
		}
		return p, nil
	}
	const debian = "/usr/share/java/postgresql.jar"
	if _, err := os.Stat(debian); err != nil {
		return "", fmt.Errorf("no pgjdbc jar at %s (Debian package libpostgresql-jdbc-java) and PGJDBC_JAR is not set", debian)
	}
	return debian, nil
}

// compileJava compiles testdata/jdbc/Load.java once per test binary into
// a temporary directory.
func compileJava(dir string) (classes, jar string, err error) {
	javaOnce.Do(func() {
		for _, tool := range []string{"java", "javac"} {
			if _, err := exec.LookPath(tool); err != nil {
				javaErr = fmt.Errorf("no %s on PATH (a JDK, e.g. Debian's default-jdk-headless)", tool)
				return
			}
		}
		if javaJar, javaErr = pgjdbcJar(); javaErr != nil {
			return
		}
		javaClasses, javaErr = os.MkdirTemp("", "pgpoolcheck-drivers-java-")
		if javaErr != nil {
			return
		}
		cleanups = append(cleanups, func() { os.RemoveAll(javaClasses) })
		out, err := exec.Command("javac", "-cp", javaJar, "-d", javaClasses, filepath.Join(dir, "jdbc", "Load.java")).CombinedOutput()
		if err != nil {
			javaErr = fmt.Errorf("javac Load.java: %v\n%s", err, out)
		}
	})
	return javaClasses, javaJar, javaErr
}

var (
	importMu   sync.Mutex
	importErrs = map[string]error{}
)

// importable tells whether the interpreter imports module, once per module.
func importable(interp, module string) error {
	importMu.Lock()
	defer importMu.Unlock()
	if err, ok := importErrs[module]; ok {
		return err
	}
	out, err := exec.Command(interp, "-c", "import "+module).CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%s cannot import %s: %v: %s", interp, module, err, bytes.TrimSpace(out))
	}
	importErrs[module] = err
	return err
}

// debianPackage names the Debian package of a Python module.
var debianPackage = map[string]string{
	"psycopg2": "python3-psycopg2",
	"psycopg":  "python3-psycopg",
	"asyncpg":  "python3-asyncpg",
}

func runtimeFor(t *testing.T, v variant) runtime {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	switch v.runtime {
	case "python":
		interp := os.Getenv("DRIVERS_PYTHON")
		if interp == "" {
			// Debian's interpreter, which sees Debian's driver packages
			// (a pyenv python3 first on PATH does not).
			interp = "/usr/bin/python3"
		}
		if _, err := os.Stat(interp); err != nil {
			missing(t, "%s: no Python interpreter (%v)", v.name, err)
		}
		if err := importable(interp, v.module); err != nil {
			missing(t, "%s: %v (Debian package %s)", v.name, err, debianPackage[v.module])
		}
		return runtime{python{interp: interp, dir: dir}}
	case "node":
		bin, err := exec.LookPath("node")
		if err != nil {
			missing(t, "%s: no node on PATH", v.name)
		}
		if _, err := os.Stat(filepath.Join(dir, "node", "node_modules", "pg", "package.json")); err != nil {
			missing(t, "%s: the pg package is not installed in testdata/node (npm ci --prefix internal/drivers/testdata/node)", v.name)
		}
		return runtime{node{bin: bin, dir: dir}}
	case "java":
		classes, jar, err := compileJava(dir)
		if err != nil {
			missing(t, "%s: %v", v.name, err)
		}
		return runtime{java{classpath: classes + string(os.PathListSeparator) + jar}}
	}
	t.Fatalf("%s: unknown runtime %q", v.name, v.runtime)
	return runtime{}
}

var _ io.Writer = testWriter{}
