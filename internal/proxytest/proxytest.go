// Package proxytest starts pgpoolcheck's pooler for the tests of other
// packages: on a free loopback port in 21000–29999 (below the kernel's
// ephemeral range, where ports can fail to bind after heavy traffic).
// The pooler package's own tests have their own helper, since they
// cannot import this one.
package proxytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// Listen makes a proxy with cfg (its Listen is set here) and has it
// listen on a free port, trying another port while the one picked is in
// use. It fails the test when the proxy cannot be made or no port works.
func Listen(t testing.TB, cfg pooler.Config) (*pooler.Proxy, int) {
	t.Helper()
	var last error
	for range 20 {
		port := 21000 + rand.IntN(9000)
		cfg.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		p, err := pooler.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Listen(); err != nil {
			last = err
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			t.Fatal(err)
		}
		return p, port
	}
	t.Fatalf("no free port: %v", last)
	return nil, 0
}

// Start is Listen, then serves until the test ends: the cleanup shuts the
// proxy down (giving it stop to finish) and reports an error Serve
// returned, a proxy that did not stop within stop and 5 s more, or client
// moves the pooler's state machine refused, with the pooler's log records
// of them (cfg.Logger still gets every record it takes).
func Start(t testing.TB, cfg pooler.Config, stop time.Duration) (*pooler.Proxy, int) {
	t.Helper()
	moves := newMoveLog(cfg.Logger)
	cfg.Logger = slog.New(moves)
	p, port := Listen(t, cfg)
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stop)
		defer cancel()
		p.Shutdown(ctx)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("proxy: %v", err)
			}
		case <-time.After(stop + 5*time.Second):
			t.Errorf("the proxy did not stop; what it still held:\n%s", Stuck(p))
		}
		if n := p.Snapshot().InvalidMoves; n != 0 {
			t.Errorf("%d client moves refused by the pooler's state machine; its log of them:\n%s", n, moves.text())
		}
	})
	return p, port
}

// Stuck describes what keeps a proxy from stopping: its clients (state,
// attached server, descriptor) and the stacks of the goroutines that run
// the pooler's code.
func Stuck(p *pooler.Proxy) string {
	var b strings.Builder
	snap := p.Snapshot()
	fmt.Fprintf(&b, "%d clients, %d servers\n", len(snap.Clients), len(snap.Servers))
	for _, c := range snap.Clients {
		fmt.Fprintf(&b, "  client %d %s/%s %s pinned=%v server_pid=%d fd=%d since %s\n",
			c.Key, c.Database, c.User, c.State, c.Pinned, c.ServerPID, c.FD, c.ConnectTime.Format(time.TimeOnly))
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("pgpoolcheck/pooler.")) {
			b.Write(g)
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// invalidMove is in the message of the pooler's log record of a client
// move its state machine refused.
const invalidMove = "invalid move"

// maxMoveLines bounds the records a moveLog keeps.
const maxMoveLines = 20

// moveLog is a slog handler that passes every record on to the test's
// logger (the pooler's default, slog.Default(), when it has none) and
// keeps the text of the records of refused client moves, whatever the
// test's logger's level or destination (a file, io.Discard), for the
// failure that reports them.
type moveLog struct {
	next slog.Handler
	// rec writes the kept records into buf (shared by the handlers
	// WithAttrs and WithGroup make).
	rec   slog.Handler
	state *moveText
}

type moveText struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	kept, n int
}

func newMoveLog(l *slog.Logger) *moveLog {
	if l == nil {
		l = slog.Default()
	}
	st := &moveText{}
	return &moveLog{next: l.Handler(), rec: slog.NewTextHandler(&st.buf, nil), state: st}
}

func (h *moveLog) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelError || h.next.Enabled(ctx, level)
}

func (h *moveLog) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, invalidMove) {
		st := h.state
		st.mu.Lock()
		st.n++
		if st.kept < maxMoveLines {
			st.kept++
			h.rec.Handle(ctx, r)
		}
		st.mu.Unlock()
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *moveLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &moveLog{next: h.next.WithAttrs(as), rec: h.rec.WithAttrs(as), state: h.state}
}

func (h *moveLog) WithGroup(name string) slog.Handler {
	return &moveLog{next: h.next.WithGroup(name), rec: h.rec.WithGroup(name), state: h.state}
}

// text returns the kept records, one a line, and how many were left out.
func (h *moveLog) text() string {
	st := h.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.n == 0 {
		return "(no record of them)"
	}
	s := strings.TrimRight(st.buf.String(), "\n")
	if st.n > st.kept {
		s += fmt.Sprintf("\n(%d more)", st.n-st.kept)
	}
	return s
}
