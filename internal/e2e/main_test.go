// Package e2e records real clients through the proxy in record mode and
// analyzes the captures, end to end: pooler (record mode) → capture file →
// analyzer, against the throwaway PostgreSQL of internal/pgtest.
//
// Each scenario is one capture; the test asserts the exact set of findings
// (rule:severity) that analyze reports for it, judged with the
// configuration the command line uses (every rule, --target pgbouncer
// unless the scenario names another target, the default idle threshold).
package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	removeBuilt()
	os.Exit(code)
}

// recording is a proxy in record mode writing one capture file.
type recording struct {
	t    *testing.T
	srv  *pgtest.Server
	p    *pooler.Proxy
	w    *capture.Writer
	path string
	port int
	done chan error
	stop bool
}

// record starts a proxy in record mode in front of srv with a capture on a
// temporary file, on a port in 21000–29999 (below the ephemeral range).
func record(t *testing.T, srv *pgtest.Server) *recording {
	t.Helper()
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	w, err := capture.Create(path, capture.Header{Upstream: srv.SocketURL(pgtest.SuperUser), Mode: string(pooler.ModeRecord)}, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	level := slog.LevelWarn
	if os.Getenv("E2E_DEBUG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
	// The capture is closed by finish; this one is for a test that fails
	// before (Close again does nothing).
	t.Cleanup(func() { w.Close() })
	p, port := proxytest.Listen(t, pooler.Config{
		Upstream: srv.SocketURL(pgtest.SuperUser),
		Mode:     pooler.ModeRecord,
		PoolSize: 10,
		Logger:   logger,
		Capture:  w,
	})
	r := &recording{t: t, srv: srv, p: p, w: w, path: path, port: port, done: make(chan error, 1)}
	go func() { r.done <- p.Serve(context.Background()) }()
	t.Cleanup(func() {
		if !r.stop {
			r.finish()
		}
	})
	return r
}

// finish stops the proxy and closes the capture; it returns the capture's path.
func (r *recording) finish() string {
	r.t.Helper()
	r.stop = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.p.Shutdown(ctx)
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("proxy: %v", err)
		}
	case <-time.After(25 * time.Second):
		r.t.Error("the proxy did not stop")
	}
	if err := r.w.Close(); err != nil {
		r.t.Fatal(err)
	}
	return r.path
}

// url is a connection URL to the proxy as the superuser.
func (r *recording) url() string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, r.port, pgtest.Database)
}

// analyze stops the recording and analyzes its capture against each
// target, as `pgpoolcheck analyze --target T` does (every rule, the default
// idle threshold). It returns the findings as sorted "rule:severity"
// strings, per target.
func (r *recording) analyze(targets ...rules.Target) map[rules.Target][]string {
	r.t.Helper()
	path := r.finish()
	out := map[rules.Target][]string{}
	for _, target := range targets {
		cfg := &analyzer.Config{Target: target, Rules: rules.All()}
		rep, warns, err := traffic.Analyze(cfg, []string{path}, traffic.Options{IdleThreshold: traffic.DefaultIdleThreshold})
		if err != nil {
			r.t.Fatal(err)
		}
		if len(warns) > 0 {
			r.t.Errorf("analyze warnings: %v", warns)
		}
		got := []string{}
		for _, f := range rep.Findings {
			got = append(got, f.Rule+":"+f.Severity.String())
			r.t.Logf("--target %s: %s:%d %s [%s] %s", target, filepath.Base(f.File), f.Line, f.Severity, f.Rule, f.Message)
		}
		slices.Sort(got)
		out[target] = got
	}
	return out
}

// expect checks the findings against each target's expected set.
func expect(t *testing.T, got map[rules.Target][]string, want map[rules.Target][]string) {
	t.Helper()
	for target, w := range want {
		if w == nil {
			w = []string{}
		}
		slices.Sort(w)
		if !slices.Equal(got[target], w) {
			t.Errorf("--target %s: found %v, want %v", target, got[target], w)
		}
	}
}

// events returns the events of a capture file.
func events(t *testing.T, path string) []*capture.Event {
	t.Helper()
	f, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []*capture.Event
	for {
		ev, err := f.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// tool returns the path of a client program of the server, skipping the
// test without it (failing it when CI=true).
func tool(t *testing.T, srv *pgtest.Server, name string) string {
	t.Helper()
	p := srv.Tool(name)
	if p == "" {
		pgtest.Optional(t, name, "install PostgreSQL's client programs", fmt.Sprintf("not found next to the server binaries (%s) or on PATH", srv.BinDir))
	}
	return p
}

// runTool runs a client program with a timeout and returns its output.
func runTool(t *testing.T, path string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C", "PGCONNECT_TIMEOUT=10", "PGOPTIONS=", "PSQLRC=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, out)
	}
	return string(out)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// built is the pgpoolcheck binary of this test run, built once.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// pgpoolcheckBinary builds cmd/pgpoolcheck as a release is built (go
// build) and returns its path; TestMain removes it. Without the go
// command (a test binary run on its own) the test is skipped, or fails
// when CI=true.
func pgpoolcheckBinary(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go") // go test puts its GOROOT/bin first on PATH
	if err != nil {
		pgtest.Optional(t, "go-build", "run the tests with go test (the go command on PATH)", "the go command is needed to build pgpoolcheck: "+err.Error())
	}
	built.once.Do(func() {
		start := time.Now()
		built.dir, built.err = os.MkdirTemp("", "pgpoolcheck-e2e-")
		if built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "pgpoolcheck")
		out, err := exec.Command(goCmd, "build", "-o", bin, "github.com/pgpoolcheck/pgpoolcheck/cmd/pgpoolcheck").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.path = bin
		t.Logf("built %s in %s", bin, time.Since(start).Round(time.Millisecond))
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// removeBuilt removes the binary pgpoolcheckBinary built.
func removeBuilt() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
