// Package conformance runs client drivers' own test suites against the
// pooler: what a driver's authors test is what applications rely on, and
// it shows what a pooler breaks better than tests written for it.
//
// TestPgxSuite builds the test packages of the pgx version go.mod pins
// (root, pgconn, pgxpool, stdlib) from the module cache and runs them
// with PGX_TEST_DATABASE pointing at the pooler in session mode and in
// transaction mode on both relays. A test that fails and is not in the
// expected list for its mode fails this test, and so does a package that
// hangs (its own -test.timeout) or exits without a verdict. Tests that
// pass in a mode without testing anything there, and take minutes, are
// not run in it (skipped).
package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pgxPackages are the pgx test packages run, relative to the module.
var pgxPackages = []string{".", "pgconn", "pgxpool", "stdlib"}

// suiteConfig is one way of running the pooler under the suite.
type suiteConfig struct {
	name     string
	mode     pooler.Mode
	relay    pooler.Relay
	poolSize int
}

// suiteConfigs are the pooler's defaults but for the pool size in
// session mode, where each client holds a server: the suite opens up to
// a few dozen connections at once.
var suiteConfigs = []suiteConfig{
	{"session", pooler.ModeSession, pooler.RelayLoop, 40},
	{"transaction-loop", pooler.ModeTransaction, pooler.RelayLoop, 20},
	{"transaction-bridged", pooler.ModeTransaction, pooler.RelayBridged, 20},
}

// Why a test fails through a transaction-mode pooler.
const (
	whyPID = "terminates the backend whose PID BackendKeyData gave (pg_terminate_backend) to test a broken connection: " +
		"in transaction mode a client has no server of its own, so the PID is the pooler's and terminates nothing"
	whyNames = "looks its statement up by its own name in pg_prepared_statements: the pooler prepares it on the server " +
		"under a name of its own, shared by the clients that prepare the same text in the same context"
	whyShared = "expects statement_timeout to fire between its Parse and its Describe: the server already holds the " +
		"statement (another test prepared the same text), so the pooler answers the Parse itself and nothing runs in between"
)

// Why a test is not run through a transaction-mode pooler.
const whyWaits = "terminates the backend whose PID BackendKeyData gave during a COPY FROM whose reader never ends: " +
	"in transaction mode the PID is the pooler's and terminates nothing, so the test waits for its own " +
	"two-minute context and passes without testing anything"

// skipped are the tests ("pkg/TestName", top level) not run in each
// configuration, with the reason: they pass there but test nothing and
// take minutes.
var skipped = map[string]map[string]string{
	"transaction-loop":    transactionSkips,
	"transaction-bridged": transactionSkips,
}

var transactionSkips = map[string]string{
	"pgx/pgconn/TestConnCopyFromConnectionTerminated": whyWaits,
}

// expectedFailures are the tests ("pkg/TestName", top level) known to fail
// in each configuration, with the reason. Session mode has none.
var expectedFailures = map[string]map[string]string{
	"session":             {},
	"transaction-loop":    transactionFailures,
	"transaction-bridged": transactionFailures,
}

var transactionFailures = map[string]string{
	"pgx/TestFatalTxError":                                                 whyPID,
	"pgx/TestFatalRxError":                                                 whyPID,
	"pgx/pgxpool/TestPoolAcquireChecksIdleConns":                           whyPID,
	"pgx/stdlib/TestCheckIdleConn":                                         whyPID,
	"pgx/TestPrepareHandlesTimeoutBetweenParseAndDescribe":                 whyNames,
	"pgx/stdlib/TestConnMultiplePrepareAndDeallocate":                      whyNames,
	"pgx/TestPrepareWithDigestedNameHandlesTimeoutBetweenParseAndDescribe": whyShared,
}

func TestPgxSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the pgx suite takes minutes")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		pgtest.Optional(t, "pgx suite", "put the go command on PATH", "no go command")
		return
	}
	srv := pgtest.Shared(t)
	work := t.TempDir()
	binaries := buildPgxTests(t, goBin, work)

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]string, len(suiteConfigs))
	for i, sc := range suiteConfigs {
		db := "pgx_test_" + strings.ReplaceAll(sc.name, "-", "_")
		setupDatabase(ctx, t, srv, db)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runSuite(ctx, t, srv, sc, db, binaries, work)
		}()
	}
	wg.Wait()
	for _, r := range results {
		t.Log(r)
	}
}

// buildPgxTests copies the pinned pgx module out of the module cache
// (read-only there) and compiles its test packages once.
func buildPgxTests(t *testing.T, goBin, work string) map[string]string {
	t.Helper()
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/jackc/pgx/v5").Output()
	if err != nil {
		t.Fatalf("go list pgx: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 || fields[0] == "" {
		if dl, err := exec.Command(goBin, "mod", "download", "github.com/jackc/pgx/v5").CombinedOutput(); err != nil {
			t.Fatalf("go mod download pgx: %v\n%s", err, dl)
		}
		out, err = exec.Command(goBin, "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/jackc/pgx/v5").Output()
		if fields = strings.Fields(string(out)); err != nil || len(fields) != 2 {
			t.Fatalf("go list pgx: %v %q", err, out)
		}
	}
	src, version := fields[0], fields[1]
	t.Logf("pgx %s from %s", version, src)
	mod := filepath.Join(work, "pgx")
	if err := os.CopyFS(mod, os.DirFS(src)); err != nil { // writable copies of the read-only module cache
		t.Fatal(err)
	}
	bins := map[string]string{}
	for _, pkg := range pgxPackages {
		bin := filepath.Join(work, "pgx-"+strings.ReplaceAll(strings.Trim(pkg, "./"), "/", "-")+".test")
		if pkg == "." {
			bin = filepath.Join(work, "pgx-root.test")
		}
		cmd := exec.Command(goBin, "test", "-c", "-o", bin, "./"+strings.TrimPrefix(pkg, "."))
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building pgx tests %s: %v\n%s", pkg, err, b)
		}
		bins[pkg] = bin
	}
	return bins
}

// setupDatabase makes a database as pgx's own CI does
// (testsetup/postgresql_setup.sql): the extensions and the domain its
// tests use.
func setupDatabase(ctx context.Context, t *testing.T, srv *pgtest.Server, db string) {
	t.Helper()
	if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	c, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", pgtest.SuperUser, db, srv.Dir, srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, `CREATE EXTENSION hstore; CREATE EXTENSION ltree; CREATE DOMAIN uint64 AS numeric(20,0)`).ReadAll()
	c.Close(ctx)
	if err != nil {
		t.Fatalf("%s: %v (hstore and ltree come with postgresql-contrib)", db, err)
	}
	if err := srv.Exec(ctx, `DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ' tricky, '' } " \ test user ') THEN CREATE USER " tricky, ' } "" \ test user " SUPERUSER PASSWORD 'secret'; END IF; END$$`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
}

var failLine = regexp.MustCompile(`^--- FAIL: (\S+)`)

// runSuite runs every pgx test package against a pooler in configuration
// sc and checks the failures against the expected ones. It returns a
// summary line.
func runSuite(ctx context.Context, t *testing.T, srv *pgtest.Server, sc suiteConfig, db string, bins map[string]string, work string) string {
	logFile, err := os.Create(filepath.Join(work, sc.name+".pooler.log"))
	if err != nil {
		t.Error(err)
		return ""
	}
	defer logFile.Close()
	_, port := proxytest.Start(t, pooler.Config{
		Upstream:         srv.SocketURL(pgtest.SuperUser),
		Mode:             sc.mode,
		Relay:            sc.relay,
		PoolSize:         sc.poolSize,
		QueryWaitTimeout: 30 * time.Second,
		Classifier:       sessionstate.New(),
		OnSessionState:   pooler.PolicyPreserve,
		Logger:           slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}, 20*time.Second)
	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, port, db)

	expected := expectedFailures[sc.name]
	failed := map[string]bool{}
	var problems []string
	passedCount := 0
	var took []string
	for _, pkg := range pgxPackages {
		name := "pgx"
		if pkg != "." {
			name = "pgx/" + pkg
		}
		start := time.Now()
		args := []string{"-test.v", "-test.count=1", "-test.timeout=6m"}
		if skip := skipPattern(skipped[sc.name], name); skip != "" {
			args = append(args, "-test.skip", skip)
		}
		cmd := exec.CommandContext(ctx, bins[pkg], args...)
		cmd.Dir = filepath.Join(work, "pgx", pkg)
		cmd.Env = append(os.Environ(), "PGX_TEST_DATABASE="+url)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		runErr := cmd.Run()
		if err := os.WriteFile(filepath.Join(work, sc.name+"-"+strings.ReplaceAll(name, "/", "-")+".log"), out.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
		verdict := false
		sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := failLine.FindStringSubmatch(line); m != nil {
				failed[name+"/"+m[1]] = true
			}
			if strings.HasPrefix(line, "--- PASS: ") {
				passedCount++
			}
			if line == "PASS" || line == "FAIL" {
				verdict = true
			}
			if strings.HasPrefix(line, "panic: test timed out") {
				problems = append(problems, fmt.Sprintf("%s hung (-test.timeout): %s", name, lastRunning(out.Bytes())))
			}
		}
		if !verdict && runErr != nil {
			problems = append(problems, fmt.Sprintf("%s ended without a verdict after %v: %v", name, time.Since(start).Round(time.Second), runErr))
		}
		took = append(took, fmt.Sprintf("%s %v", name, time.Since(start).Round(100*time.Millisecond)))
	}
	var unexpected, fixed, flaky []string
	for name := range failed {
		if _, ok := expected[name]; ok {
			continue
		}
		// The suite has timing-sensitive tests (deadlines of a few
		// milliseconds) and the three configurations run at once: an
		// unexpected failure is run again alone before it counts.
		if rerun(ctx, bins, work, url, name) {
			flaky = append(flaky, name)
			continue
		}
		unexpected = append(unexpected, name)
	}
	if len(flaky) > 0 {
		sort.Strings(flaky)
		t.Logf("%s: failed once, passed when run again alone: %s", sc.name, strings.Join(flaky, ", "))
	}
	if len(flaky) > 0 || len(unexpected) > 0 || len(problems) > 0 {
		// The work directory goes with the test: what the failures and
		// the pooler said stays in its log.
		var b strings.Builder
		for _, name := range append(slices.Clone(flaky), unexpected...) {
			b.WriteString(failureReport(work, sc.name, name))
		}
		pl, _ := os.ReadFile(logFile.Name())
		fmt.Fprintf(&b, "the pooler's log (warnings and errors), last lines:\n%s", lastLines(pl, 40))
		t.Logf("%s: %s", sc.name, b.String())
	}
	for name := range expected {
		if !failed[name] {
			fixed = append(fixed, name)
		}
	}
	sort.Strings(unexpected)
	sort.Strings(fixed)
	for _, p := range problems {
		t.Errorf("%s: %s", sc.name, p)
	}
	if len(unexpected) > 0 {
		t.Errorf("%s: %d unexpected failures (logs in %s):\n  %s", sc.name, len(unexpected), work, strings.Join(unexpected, "\n  "))
	}
	if len(fixed) > 0 {
		t.Logf("%s: expected to fail but passed (remove from the list if it stays so): %s", sc.name, strings.Join(fixed, ", "))
	}
	return fmt.Sprintf("%s: %d tests passed, %d failed (%d expected), %d not run; %s", sc.name, passedCount, len(failed), len(failed)-len(unexpected),
		len(skipped[sc.name]), strings.Join(took, ", "))
}

// skipPattern is the -test.skip pattern of the tests of skip in package
// name ("pgx", "pgx/pgconn"), or "" for none.
func skipPattern(skip map[string]string, name string) string {
	var tests []string
	for full := range skip {
		if i := strings.LastIndexByte(full, '/'); full[:i] == name {
			tests = append(tests, regexp.QuoteMeta(full[i+1:]))
		}
	}
	if len(tests) == 0 {
		return ""
	}
	sort.Strings(tests)
	return "^(" + strings.Join(tests, "|") + ")$"
}

// failureReport returns what the package's output says of a failed test
// ("pgx/pkg/TestName"): its "--- FAIL" line and the indented lines that
// follow it.
func failureReport(work, suite, name string) string {
	pkg, test := "pgx", strings.TrimPrefix(name, "pgx/")
	if i := strings.LastIndexByte(test, '/'); i >= 0 {
		pkg, test = "pgx/"+test[:i], test[i+1:]
	}
	out, err := os.ReadFile(filepath.Join(work, suite+"-"+strings.ReplaceAll(pkg, "/", "-")+".log"))
	if err != nil {
		return fmt.Sprintf("%s: %v\n", name, err)
	}
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "--- FAIL: "+test+" "):
			in = true
		case in && !strings.HasPrefix(line, " "):
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("%s: no output of its failure\n", name)
	}
	return b.String()
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// lastRunning names the test a hung package was running.
func lastRunning(out []byte) string {
	lines := strings.Split(string(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "=== RUN") {
			return strings.TrimSpace(strings.TrimPrefix(lines[i], "=== RUN"))
		}
	}
	return "?"
}

// rerun runs one failed test ("pkg/TestName") again alone and reports
// whether it passed.
func rerun(ctx context.Context, bins map[string]string, work, url, name string) bool {
	rest := strings.TrimPrefix(name, "pgx/")
	pkg, test := ".", rest
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		pkg, test = rest[:i], rest[i+1:]
	}
	bin, ok := bins[pkg]
	if !ok {
		return false
	}
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^"+regexp.QuoteMeta(test)+"$", "-test.count=1", "-test.timeout=3m")
	cmd.Dir = filepath.Join(work, "pgx", pkg)
	cmd.Env = append(os.Environ(), "PGX_TEST_DATABASE="+url)
	return cmd.Run() == nil
}
