package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"golang.org/x/sys/unix"
)

// partLimit is the file-size limit (RLIMIT_FSIZE) the recorder runs
// under: a write past it fails with EFBIG, as a write to a full disk
// fails with ENOSPC. The limit is per file, so the part the capture
// resumes in starts empty and has room again.
const partLimit = 64 << 10

// resumeWait bounds the wait for the capture to resume: the writer tries
// every 10 s (capture.resumeEvery), counted from the failure.
const resumeWait = 20 * time.Second

// TestCaptureFullDiskMetrics runs the real binary, `pgpoolcheck proxy
// --mode record --capture FILE --metrics-listen ADDR`, under a file-size
// limit, drives pgx traffic through it until the capture's first part
// cannot grow, and checks what an operator sees: /metrics shows the
// failure and the drops while the capture is stopped (writing 0) and the
// resume 10 s later (writing 1, events written growing again); the log
// has one error, the resume and the drops at shutdown; the proxy served
// every query throughout and exits 0; and the two parts on disk are read
// by the capture reader and by `pgpoolcheck analyze`, with a warning for
// the part without trailer and one for the dropped events.
func TestCaptureFullDiskMetrics(t *testing.T) {
	srv := pgtest.Shared(t)
	bin := pgpoolcheckBinary(t)
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	part2 := capture.PartPath(path, 2)

	rec := startRecorder(t, bin, srv, path)
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgtest.SuperUser, rec.listen, pgtest.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	queries := 0
	run := func(n int, sql func(i int) string) {
		t.Helper()
		for i := range n {
			var s string
			if err := conn.QueryRow(ctx, sql(queries+i)).Scan(&s); err != nil {
				t.Fatalf("query %d through the proxy: %v", queries+i, err)
			}
		}
		queries += n
	}
	small := func(i int) string { return fmt.Sprintf("SELECT 'q%d'", i) }
	// About 2 KiB of SQL per query: the capture's lines are long.
	large := func(i int) string { return fmt.Sprintf("SELECT 'q%d %s'", i, strings.Repeat("x", 2000)) }

	// Writing: some events reach the file.
	run(5, small)
	m := rec.waitMetrics(t, "the first events written", 10*time.Second, func(m capMetrics) bool { return m.events > 0 })
	if m.writing != 1 || m.failures != 0 || m.resumes != 0 || m.dropped != 0 {
		t.Fatalf("before the limit: %+v, want writing 1, no failure, resume or drop", m)
	}

	// Fill the first part until a write fails.
	deadline := time.Now().Add(15 * time.Second)
	for m = rec.scrape(t); m.failures == 0; m = rec.scrape(t) {
		if time.Now().After(deadline) {
			t.Fatalf("no write failure after %d queries: %+v", queries, m)
		}
		run(10, large)
		time.Sleep(50 * time.Millisecond)
	}
	failedAt := time.Now()
	atFailure := m
	if m.failures != 1 || m.writing != 0 || m.resumes != 0 {
		t.Errorf("after the write error: %+v, want 1 failure, writing 0, no resume", m)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != partLimit {
		t.Errorf("first part: %v, %v; want it filled to the limit, %d bytes", st, err, partLimit)
	}

	// Stopped: the proxy goes on, the capture drops what it cannot write.
	run(20, small)
	// Every event of those queries counted: the count grew and holds.
	for last := atFailure; ; last = m {
		time.Sleep(300 * time.Millisecond)
		if m = rec.scrape(t); m.dropped > atFailure.dropped && m.dropped == last.dropped {
			break
		}
		if time.Since(failedAt) > 8*time.Second {
			t.Fatalf("the events of the stopped capture were not counted as dropped: %+v, at the failure %+v", m, atFailure)
		}
	}
	stopped := m
	if m.writing != 0 || m.failures != 1 || m.resumes != 0 || m.events != atFailure.events {
		t.Errorf("while stopped: %+v, want writing 0, 1 failure, no resume and %d events written as at the failure", m, atFailure.events)
	}
	if _, err := os.Stat(part2); err == nil && time.Since(failedAt) < 9*time.Second {
		t.Errorf("%s exists %s after the failure: the capture resumed before its retry interval", part2, time.Since(failedAt).Round(time.Millisecond))
	}

	// The capture resumes in a new part after its retry interval.
	m = rec.waitMetrics(t, "the capture to resume", resumeWait, func(m capMetrics) bool { return m.resumes > 0 })
	t.Logf("resumed %s after the failure was seen", time.Since(failedAt).Round(time.Millisecond))
	if m.resumes != 1 || m.writing != 1 || m.failures != 1 || m.dropped != stopped.dropped || m.events != atFailure.events {
		t.Errorf("after the resume: %+v, want 1 resume, writing 1, 1 failure, %d dropped and %d events as while stopped", m, stopped.dropped, atFailure.events)
	}
	resumed := m
	run(20, small)
	m = rec.waitMetrics(t, "events written after the resume", 10*time.Second, func(m capMetrics) bool { return m.events > resumed.events })
	if m.writing != 1 || m.failures != 1 || m.resumes != 1 || m.dropped != resumed.dropped {
		t.Errorf("writing again: %+v, want writing 1, 1 failure, 1 resume, no new drop", m)
	}
	final := m
	t.Logf("/metrics at the failure %+v, while stopped %+v, at the resume %+v, at the end %+v", atFailure, stopped, resumed, final)
	conn.Close(ctx)

	// Shutdown: exit 0, and the log says what happened.
	rec.stop(t)
	errs := rec.log.find("ERROR", "")
	if len(errs) != 1 || errs[0]["msg"] != "capture stopped writing; the proxy goes on without it" ||
		!strings.Contains(str(errs[0]["err"]), "file too large") || errs[0]["path"] != path {
		t.Errorf("errors logged: %v; want one, the capture's write error (EFBIG) on %s", errs, path)
	}
	res := rec.log.find("INFO", "capture resumed")
	if len(res) != 1 || res[0]["path"] != part2 || str(res[0]["dropped"]) != strconv.FormatInt(stopped.dropped, 10) {
		t.Errorf("resume logged as %v; want one in %s with %d dropped", res, part2, stopped.dropped)
	}
	closed := rec.log.find("WARN", "capture closed with an error")
	if len(closed) != 1 || closed[0]["last"] != part2 || str(closed[0]["parts"]) != "2" ||
		!strings.Contains(str(closed[0]["err"]), fmt.Sprintf("%d events dropped", final.dropped)) {
		t.Errorf("close logged as %v; want 2 parts, the last %s, %d events dropped", closed, part2, final.dropped)
	}

	// The parts on disk, read by the capture reader.
	if _, err := os.Stat(capture.PartPath(path, 3)); err == nil {
		t.Errorf("a third part exists")
	}
	perFile := map[string]int64{}
	warns, err := capture.ReadFiles([]string{path, part2}, func(h capture.Header, file string, ev *capture.Event) error {
		perFile[file]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if perFile[path] != atFailure.events {
		t.Errorf("%d events read in the first part; /metrics counted %d written when it stopped", perFile[path], atFailure.events)
	}
	if perFile[path]+perFile[part2] < final.events {
		t.Errorf("%d events read in both parts, fewer than the %d /metrics counted written", perFile[path]+perFile[part2], final.events)
	}
	joined := strings.Join(warns, "\n")
	t.Logf("events read: %v; reader warnings:\n%s", perFile, joined)
	for _, want := range []string{
		path + ": no trailer",
		fmt.Sprintf("%s: the capture dropped %d events", part2, final.dropped),
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("reader warnings lack %q:\n%s", want, joined)
		}
	}
	f, err := capture.Open(part2)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	first, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Header(); h.Part != 2 || h.ID != first.Header().ID {
		t.Errorf("second part's header: part %d, id %s; want part 2 of capture %s", h.Part, h.ID, first.Header().ID)
	}
	if tr := f.Trailer(); tr == nil || tr.Dropped != final.dropped || tr.Events != perFile[part2] {
		t.Errorf("second part's trailer %+v; want %d events and %d dropped", tr, perFile[part2], final.dropped)
	}
	f.Close()
	first.Close()

	// And by the operator's command: both parts, with the warnings.
	cmd := exec.Command(bin, "analyze", "--no-config", "--fail-on", "never", path)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pgpoolcheck analyze: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"pgpoolcheck: warning: " + path + ": no trailer",
		fmt.Sprintf("pgpoolcheck: warning: %s: the capture dropped %d events", part2, final.dropped),
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("analyze's stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if want := "2 capture files"; !strings.Contains(stdout.String(), want) {
		t.Errorf("analyze's report lacks %q:\n%s", want, stdout.String())
	}
}

// capMetrics are the capture's metrics in one scrape of /metrics.
type capMetrics struct {
	events, dropped, failures, resumes, writing int64
}

// recorder is a `pgpoolcheck proxy --mode record` process.
type recorder struct {
	cmd             *exec.Cmd
	log             *procLog
	listen, metrics string
	exited          chan struct{}
	exitErr         error
}

// startRecorder starts bin as a recorder in front of srv, capturing to
// path, on loopback ports the kernel picks, with JSON logs, and lowers its
// file-size limit to partLimit. It returns once both listeners are up.
func startRecorder(t *testing.T, bin string, srv *pgtest.Server, path string) *recorder {
	t.Helper()
	cmd := exec.Command(bin, "proxy", "--mode", "record", "--capture", path,
		"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
		"--upstream", srv.SocketURL(pgtest.SuperUser), "--log-format", "json", "--shutdown-timeout", "5s")
	stderr, err := cmd.StderrPipe() // a pipe: the file-size limit does not apply to it
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &recorder{cmd: cmd, log: &procLog{}, exited: make(chan struct{})}
	logDone := make(chan struct{})
	go func() { r.log.read(stderr); close(logDone) }()
	go func() { <-logDone; r.exitErr = cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() {
			t.Logf("the recorder's log:\n%s", r.log.text())
		}
	})
	// RLIMIT_FSIZE is set on the running process (prlimit(2)), not in the
	// test: nothing else of the test's is limited. The Go runtime ignores
	// SIGXFSZ (it handles the signal and takes no action), so a write past
	// the limit fails with EFBIG instead of killing the recorder; the
	// test checks that it lives on.
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: partLimit, Max: partLimit}, nil); err != nil {
		t.Fatalf("prlimit(RLIMIT_FSIZE) on the recorder: %v", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for r.listen == "" || r.metrics == "" {
		select {
		case <-r.exited:
			t.Fatalf("the recorder exited: %v", r.exitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the recorder did not log its listeners")
		}
		if l := r.log.find("INFO", "proxy listening"); len(l) > 0 {
			r.listen = str(l[0]["listen"])
		}
		if l := r.log.find("INFO", "metrics listening"); len(l) > 0 {
			r.metrics = str(l[0]["listen"])
		}
	}
	return r
}

// scrape reads the capture's metrics from /metrics. The recorder must be
// alive: a SIGXFSZ that killed it shows here.
func (r *recorder) scrape(t *testing.T) capMetrics {
	t.Helper()
	select {
	case <-r.exited:
		t.Fatalf("the recorder exited: %v", r.exitErr)
	default:
	}
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	fields := map[string]*int64{}
	var m capMetrics
	for name, p := range map[string]*int64{
		"events_total": &m.events, "dropped_events_total": &m.dropped, "failures_total": &m.failures,
		"resumes_total": &m.resumes, "writing": &m.writing,
	} {
		fields["pgpoolcheck_capture_"+name] = p
	}
	seen := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		p := fields[name]
		if !ok || p == nil {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("/metrics: %q: %v", sc.Text(), err)
		}
		*p = int64(v)
		seen++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(fields) {
		t.Fatalf("/metrics has %d of the %d capture metrics", seen, len(fields))
	}
	return m
}

// waitMetrics scrapes until cond holds, for at most d.
func (r *recorder) waitMetrics(t *testing.T, what string, d time.Duration, cond func(capMetrics) bool) capMetrics {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		m := r.scrape(t)
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %+v", what, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the recorder as an operator does (SIGTERM) and checks that it
// exits 0.
func (r *recorder) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the recorder did not stop on SIGTERM")
	}
	if r.exitErr != nil {
		t.Fatalf("the recorder: %v", r.exitErr)
	}
}

// procLog keeps a process's JSON log records (and its other lines, as
// text).
type procLog struct {
	mu    sync.Mutex
	recs  []map[string]any
	lines []string
}

func (l *procLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		err := json.Unmarshal(sc.Bytes(), &rec)
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		if err == nil {
			l.recs = append(l.recs, rec)
		}
		l.mu.Unlock()
	}
	io.Copy(io.Discard, r) // a line too long: keep the pipe drained
}

// find returns the records at level with message msg (any message for "").
func (l *procLog) find(level, msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, rec := range l.recs {
		if rec["level"] == level && (msg == "" || rec["msg"] == msg) {
			out = append(out, rec)
		}
	}
	return out
}

func (l *procLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// str is a log attribute as text (numbers as JSON gives them).
func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}
