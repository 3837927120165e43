package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgserver"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// runDemoCmd runs `pgpoolcheck demo args…` in this process.
func runDemoCmd(ctx context.Context, t *testing.T, stdout *syncBuffer, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := run(ctx, append([]string{"demo"}, args...), &env{
		stdin: strings.NewReader(""), stdout: stdout, stderr: &stderr,
		getenv: func(string) string { return "" },
	})
	return code, stderr.String()
}

// syncBuffer is the demo's standard output; onWrite, when set, sees the
// output so far after every write (the tests cancel the demo from it).
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	onWrite func(string)
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	s := b.buf.String()
	f := b.onWrite
	b.mu.Unlock()
	if f != nil {
		f(s)
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// demoSections splits the demo's output at its "== title ==" headings,
// keyed by the title.
func demoSections(out string) map[string]string {
	m := map[string]string{}
	title := ""
	for _, line := range strings.SplitAfter(out, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "== "); ok && strings.HasSuffix(t, " ==") {
			title = strings.TrimSuffix(t, " ==")
			continue
		}
		m[title] += line
	}
	return m
}

func section(t *testing.T, secs map[string]string, prefix string) string {
	t.Helper()
	for title, body := range secs {
		if strings.HasPrefix(title, prefix) {
			return body
		}
	}
	t.Fatalf("no section %q in the demo's output", prefix)
	return ""
}

var resultLine = regexp.MustCompile(`^  (\S.{0,18}?) +(ok|BROKEN): (.*)$`)

// demoResults reads the per-hazard result lines of a block of output:
// hazard name → "ok: …" or "BROKEN: …", continuation lines joined.
func demoResults(block string) map[string]string {
	m := map[string]string{}
	last := ""
	for _, line := range strings.Split(block, "\n") {
		if r := resultLine.FindStringSubmatch(line); r != nil {
			last = r[1]
			m[last] = r[2] + ": " + r[3]
			continue
		}
		if last != "" && strings.HasPrefix(line, strings.Repeat(" ", 22)) {
			m[last] += " " + strings.TrimSpace(line)
			continue
		}
		last = ""
	}
	return m
}

var hazardNames = func() []string {
	var names []string
	for _, h := range hazards {
		names = append(names, h.name)
	}
	return names
}()

// checkAllOK checks that every hazard has an ok result in block.
func checkAllOK(t *testing.T, what, block string) map[string]string {
	t.Helper()
	res := demoResults(block)
	for _, name := range hazardNames {
		if r, found := res[name]; !found {
			t.Errorf("%s: no result for %s in:\n%s", what, name, block)
		} else if !strings.HasPrefix(r, "ok: ") {
			t.Errorf("%s: %s: %s", what, name, r)
		}
	}
	return res
}

// checkDemoOutput checks everything the demo prints after a full run.
func checkDemoOutput(t *testing.T, out string) {
	t.Helper()
	secs := demoSections(out)

	// Record mode behaves as without a pooler.
	record := section(t, secs, "2. Record")
	checkAllOK(t, "record mode", record)

	// analyze finds every hazard of the workload in the capture.
	analyze := section(t, secs, "3. Analyze")
	for _, rule := range []string{"session-set", "advisory-lock-session", "listen", "temp-table", "protocol-prepare", "unnamed-statement-reuse"} {
		if !strings.Contains(analyze, "["+rule+"]") {
			t.Errorf("analyze: no %s finding in:\n%s", rule, analyze)
		}
	}
	if !strings.Contains(analyze, "(exit status 1)") {
		t.Errorf("analyze: want exit status 1, got:\n%s", analyze)
	}

	// gate fails for pgbouncer, passes for pgpoolcheck.
	gate := section(t, secs, "4. Gate")
	pgbouncer, pgpoolcheck, found := strings.Cut(gate, "gate --target pgpoolcheck")
	if !found {
		t.Fatalf("gate: no second verdict in:\n%s", gate)
	}
	if !regexp.MustCompile(`(?m)^NOT READY: [1-9][0-9]* blocking findings?\n\(exit status 1\)`).MatchString(pgbouncer) {
		t.Errorf("gate --target pgbouncer: want NOT READY and exit status 1, got:\n%s", pgbouncer)
	}
	for _, rule := range []string{"session-set", "advisory-lock-session", "listen", "temp-table", "unnamed-statement-reuse"} {
		if !strings.Contains(pgbouncer, "["+rule+"]") {
			t.Errorf("gate --target pgbouncer: %s does not block:\n%s", rule, pgbouncer)
		}
	}
	if !strings.Contains(pgpoolcheck, "READY for transaction pooling behind pgpoolcheck\n(exit status 0)") {
		t.Errorf("gate --target pgpoolcheck: want READY, got:\n%s", pgpoolcheck)
	}

	// Transaction mode: passing state through leaks it, preserve keeps
	// each client's state its own.
	pool := section(t, secs, "5. Pool")
	allow, preserve, found := strings.Cut(pool, "pgpoolcheck's default\n")
	if !found || !strings.Contains(allow, "--on-session-state allow") || !strings.Contains(preserve, "--on-session-state preserve") {
		t.Fatalf("pool: the two runs are not there:\n%s", pool)
	}
	leaks := demoResults(allow)
	// LISTEN breaks one of two ways: B gets A's server, still
	// listening; or that server, idle past the pooler's check with the
	// NOTIFY unread, is closed as one that sent data while idle (as
	// PgBouncer does), and A never hears it. Which one depends on timing.
	for name, wants := range map[string][]string{
		"session SET":     {"B, which never ran SET, got A's search_path"},
		"advisory lock":   {"B was granted the lock while A held it"},
		"LISTEN":          {"B's server connection listens on A's channel", "A never received the NOTIFY sent to its channel"},
		"temporary table": {"B sees A's temporary table"},
	} {
		got := leaks[name]
		ok := strings.HasPrefix(got, "BROKEN: ")
		if ok {
			ok = slices.ContainsFunc(wants, func(w string) bool { return strings.Contains(got, w) })
		}
		if !ok {
			t.Errorf("pool, passing state through: %s: want BROKEN with one of %q, got %q", name, wants, got)
		}
	}
	kept := checkAllOK(t, "pool, preserve", preserve)
	for name, want := range map[string]string{
		"session SET":        "kept for A, which set it (search_path = pgpoolcheck_demo, public), and not seen by B",
		"advisory lock":      "B got the lock only after A's unlock; B waited",
		"LISTEN":             "A received the NOTIFY sent to its channel; B's connection listens on nothing",
		"temporary table":    "B does not see it",
		"prepared statement": `A: "A's demo_stmt: run later", B: "B's demo_stmt: run later"`,
		"unnamed statement":  `A: "A's unnamed statement", B: "B's unnamed statement"`,
	} {
		if !strings.Contains(kept[name], want) {
			t.Errorf("pool, preserve: %s: want %q, got %q", name, want, kept[name])
		}
	}
	for _, want := range []string{"session-set replayed", "advisory-lock-session pinned", "listen pinned", "temp-table pinned"} {
		if !strings.Contains(strings.Join(strings.Fields(preserve), " "), want) {
			t.Errorf("pool, preserve: the pooler did not count %q:\n%s", want, preserve)
		}
	}
	if !strings.Contains(preserve, "6 of 6 as without a pooler, 0 broken") {
		t.Errorf("pool, preserve: no summary line in:\n%s", preserve)
	}
}

// TestDemoUpstream runs the demo against the shared test server and
// checks what it printed, that --keep keeps the capture, and that the
// server is left as it was.
func TestDemoUpstream(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out syncBuffer
	code, stderr := runDemoCmd(ctx, t, &out, "--upstream", srv.TCPURL(pgtest.SuperUser, ""), "--keep")
	t.Log(out.String())
	kept := regexp.MustCompile(`(?m)^kept (\S+): capture\.jsonl`).FindStringSubmatch(out.String())
	if kept != nil {
		t.Cleanup(func() { os.RemoveAll(kept[1]) })
	}
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
	if strings.Contains(out.String(), "throwaway PostgreSQL") {
		t.Error("started a server of its own despite --upstream")
	}
	checkDemoOutput(t, out.String())

	// --keep: the capture is still there and analyze reads it.
	if kept == nil {
		t.Fatal("no 'kept DIR' line")
	}
	var aout, aerr bytes.Buffer
	if code := run(ctx, []string{"analyze", "--no-config", "--format", "json", filepath.Join(kept[1], "capture.jsonl")},
		&env{stdin: strings.NewReader(""), stdout: &aout, stderr: &aerr, getenv: func(string) string { return "" }}); code != ExitFindings {
		t.Errorf("analyze of the kept capture: exit %d, %s", code, aerr.String())
	}
	if _, err := os.Stat(filepath.Join(kept[1], "pooler.log")); err != nil {
		t.Error(err)
	}

	// Nothing of the demo is left on the server: no sessions, no locks,
	// no tables.
	c, err := pgx.Connect(ctx, srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var sessions, locks, tables int
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Backends end a moment after their clients close.
		if err := c.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'pgpoolcheck-demo-%'),
			(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
			(SELECT count(*) FROM pg_class WHERE relname = $1)`, demoTempTable).Scan(&sessions, &locks, &tables); err != nil {
			t.Fatal(err)
		}
		if sessions+locks+tables == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sessions+locks+tables != 0 {
		t.Errorf("left on the server: %d demo sessions, %d advisory locks, %d demo tables", sessions, locks, tables)
	}
}

// demoTempDir points TMPDIR, where the demo makes its directories, at
// a new directory of the test's own, so that what the demo leaves behind
// can be told from other programs' files.
func demoTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgpoolcheck-demotest-")
	if err != nil {
		t.Fatal(err)
	}
	// As root, PostgreSQL runs as the postgres OS user, which must reach
	// its directory below this one.
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMPDIR", dir)
	return dir
}

// checkCleanedUp checks that the demo left nothing in tmp and that the
// PostgreSQL it said it had started is gone.
func checkCleanedUp(t *testing.T, tmp, out string) {
	t.Helper()
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind: %s", filepath.Join(tmp, e.Name()))
	}
	if m := regexp.MustCompile(`PostgreSQL pid (\d+), port \d+, directory (\S+)`).FindStringSubmatch(out); m != nil {
		pid, _ := strconv.Atoi(m[1])
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("PostgreSQL (pid %d) still running: kill -0 gave %v", pid, err)
		}
		if _, err := os.Stat(m[2]); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("PostgreSQL's directory %s: %v", m[2], err)
		}
	}
}

func needInitdb(t *testing.T) {
	t.Helper()
	if _, err := pgserver.FindBinDir(); err != nil {
		pgtest.Optional(t, "demo-initdb", "install PostgreSQL's server binaries (Debian: apt-get install postgresql)", err.Error())
	}
}

// TestDemoOwnServer runs the demo as a newcomer would: it starts its own
// PostgreSQL, and stops and removes everything at the end.
func TestDemoOwnServer(t *testing.T) {
	needInitdb(t)
	tmp := demoTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out syncBuffer
	start := time.Now()
	code, stderr := runDemoCmd(ctx, t, &out)
	t.Logf("the demo took %s:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !regexp.MustCompile(`PostgreSQL pid \d+`).MatchString(out.String()) {
		t.Fatal("no PostgreSQL started")
	}
	checkDemoOutput(t, out.String())
	checkCleanedUp(t, tmp, out.String())
}

// TestDemoCancel cancels the demo at several points and checks that it
// stops the PostgreSQL it started and removes its directories.
func TestDemoCancel(t *testing.T) {
	needInitdb(t)
	for _, tt := range []struct {
		name, at string
		after    time.Duration // from the output naming the point
		sigint   bool          // send SIGINT to the process instead of cancelling
	}{
		{"during initdb", "starting a throwaway PostgreSQL", 0, false},
		{"before recording", "== 2. Record", 0, false},
		// The preserve run holds state for at least 3 × 250ms: 150ms in,
		// client B is waiting inside the pooler for A's server.
		{"while pooling", "pgpoolcheck's default\n", 150 * time.Millisecond, false},
		// The demo catches SIGINT from its start to its return, so the
		// signal does not end the test binary.
		{"SIGINT while pooling", "pgpoolcheck's default\n", 150 * time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := demoTempDir(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var once sync.Once
			out := &syncBuffer{onWrite: func(s string) {
				if strings.Contains(s, tt.at) {
					once.Do(func() {
						time.AfterFunc(tt.after, func() {
							if tt.sigint {
								syscall.Kill(os.Getpid(), syscall.SIGINT)
							} else {
								cancel()
							}
						})
					})
				}
			}}
			code, stderr := runDemoCmd(ctx, t, out)
			t.Log(out.String())
			if code != ExitError || !strings.Contains(stderr, "demo interrupted") {
				t.Fatalf("exit %d, stderr %q: want exit %d and 'demo interrupted'", code, stderr, ExitError)
			}
			if strings.Contains(out.String(), "== Next ==") {
				t.Fatal("the demo ran to its end: the cancellation came too late")
			}
			checkCleanedUp(t, tmp, out.String())
		})
	}
}

// TestDemoNoPostgres: without server binaries and without --upstream the
// demo says what to install or pass, exits 2 and leaves nothing behind.
func TestDemoNoPostgres(t *testing.T) {
	saved := findPostgres
	findPostgres = func() (string, error) { return "", pgserver.ErrNoBinaries }
	defer func() { findPostgres = saved }()
	tmp := demoTempDir(t)
	var out syncBuffer
	code, stderr := runDemoCmd(context.Background(), t, &out)
	if code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	for _, want := range []string{"initdb", "apt-get install postgresql", "--upstream postgres://"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, stderr)
		}
	}
	if out.String() != "" {
		t.Errorf("stdout: %q", out.String())
	}
	checkCleanedUp(t, tmp, "")
}

// TestDemoBadUpstream: a server that cannot be reached is an error (exit
// 2) naming it, and nothing is left behind.
func TestDemoBadUpstream(t *testing.T) {
	tmp := demoTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out syncBuffer
	// Port 1 on loopback: nothing listens there.
	code, stderr := runDemoCmd(ctx, t, &out, "--upstream", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5")
	if code != ExitError || !strings.Contains(stderr, "connecting to PostgreSQL") {
		t.Fatalf("exit %d, stderr %q: want exit %d and the connection error", code, stderr, ExitError)
	}
	checkCleanedUp(t, tmp, out.String())
}
