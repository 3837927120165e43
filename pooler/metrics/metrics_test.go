package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// classifier reports "SET …" as a session setting, for the hazard metric.
type classifier struct{}

func (classifier) Classify(sql string) ([]pooler.StateEffect, string) {
	if len(sql) > 4 && sql[:4] == "SET " {
		return []pooler.StateEffect{{Kind: effects.SetParam, Name: "work_mem", Rule: "set-work-mem"}}, "fp"
	}
	return nil, ""
}

// serveWithMetrics starts a proxy of cfg on a loopback port with a
// metrics listener and serves it; stop shuts it down and waits for it.
func serveWithMetrics(t *testing.T, cfg pooler.Config) (p *pooler.Proxy, stop func()) {
	t.Helper()
	cfg.Listen, cfg.MetricsListen, cfg.MetricsHandler = "127.0.0.1:0", "127.0.0.1:0", Handler
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := pooler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background()) }()
	return p, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestMetricsScrape runs a proxy with a metrics listener, makes some
// traffic, holds a transaction open, and scrapes /metrics with net/http,
// parsing the text format.
func TestMetricsScrape(t *testing.T) {
	srv := pgtest.Shared(t)
	p, stop := serveWithMetrics(t, pooler.Config{
		Upstream:   srv.SocketURL(pgtest.SuperUser),
		PoolSize:   3,
		Classifier: classifier{},
	})
	defer func() {
		stop()
		if _, err := http.Get(fmt.Sprintf("http://%s/metrics", p.MetricsAddr())); err == nil {
			t.Error("the metrics server still answers after Shutdown")
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgtest.SuperUser, p.Addr(), pgtest.Database)
	c1, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close(ctx)
	c2, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	// Two transactions at once need two servers, whatever the timing of
	// the rest.
	for _, q := range []string{"BEGIN", "COMMIT"} {
		for _, c := range []*pgx.Conn{c1, c2} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 10 {
		if _, err := c1.Exec(ctx, "SELECT $1::int", i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c1.Exec(ctx, "SET work_mem = '8MB'", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, p.MetricsAddr())
	pool := map[string]string{"database": pgtest.Database, "user": pgtest.SuperUser}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for a, b := range pool {
			m[a] = b
		}
		return m
	}
	checks := []struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
		want   string
	}{
		{"pgpoolcheck_pool_clients", with("state", "active"), func(v float64) bool { return v == 1 }, "1"},
		{"pgpoolcheck_pool_clients", with("state", "idle"), func(v float64) bool { return v == 1 }, "1"},
		{"pgpoolcheck_pool_clients", with("state", "waiting"), func(v float64) bool { return v == 0 }, "0"},
		{"pgpoolcheck_pool_servers", with("state", "active"), func(v float64) bool { return v == 1 }, "1"},
		{"pgpoolcheck_pool_clients_pinned", pool, func(v float64) bool { return v == 0 }, "0"},
		{"pgpoolcheck_pool_size", pool, func(v float64) bool { return v == 3 }, "3"},
		{"pgpoolcheck_pool_transactions_total", pool, func(v float64) bool { return v >= 11 }, "≥ 11"},
		{"pgpoolcheck_pool_queries_total", pool, func(v float64) bool { return v >= 12 }, "≥ 12"},
		{"pgpoolcheck_pool_server_assignments_total", pool, func(v float64) bool { return v >= 12 }, "≥ 12"},
		{"pgpoolcheck_pool_wait_seconds", pool, func(v float64) bool { return v >= 12 }, "count ≥ 12"},
		{"pgpoolcheck_pool_binds_total", pool, func(v float64) bool { return v >= 1 }, "≥ 1"},
		{"pgpoolcheck_pool_received_bytes_total", pool, func(v float64) bool { return v > 0 }, "> 0"},
		{"pgpoolcheck_pool_sent_bytes_total", pool, func(v float64) bool { return v > 0 }, "> 0"},
		{"pgpoolcheck_hazards_total", map[string]string{"rule": "set-work-mem", "action": "replayed"}, func(v float64) bool { return v == 1 }, "1"},
		{"pgpoolcheck_servers_opened_total", nil, func(v float64) bool { return v >= 2 }, "≥ 2"},
		{"pgpoolcheck_invalid_client_moves_total", nil, func(v float64) bool { return v == 0 }, "0"},
	}
	for _, c := range checks {
		v, ok := value(fams, c.name, c.labels)
		if !ok || !c.ok(v) {
			t.Errorf("%s%v = %v (found %v), want %s", c.name, c.labels, v, ok, c.want)
		}
	}
	if f := fams["pgpoolcheck_pool_wait_seconds"]; f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("pgpoolcheck_pool_wait_seconds is not a histogram: %v", f)
	}
	if fams["go_goroutines"] == nil {
		t.Error("no Go runtime metrics")
	}
	for _, name := range captureMetrics {
		if fams[name] != nil {
			t.Errorf("%s exported without a capture", name)
		}
	}
	if _, err := c2.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
}

// scrape reads /metrics at addr and parses the text format.
func scrape(t *testing.T, addr net.Addr) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s/metrics", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value finds a sample by its labels.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// captureMetrics are exported only with a capture.
var captureMetrics = []string{
	"pgpoolcheck_capture_events_total",
	"pgpoolcheck_capture_dropped_events_total",
	"pgpoolcheck_capture_failures_total",
	"pgpoolcheck_capture_resumes_total",
	"pgpoolcheck_capture_writing",
}

// noSpace fails every write as a full disk does.
type noSpace struct{}

func (noSpace) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestMetricsCapture runs a recording proxy against PostgreSQL, makes
// traffic, and scrapes the capture's metrics: with a capture file they
// count the events written; with a capture whose every write fails (a full
// disk) they show it stopped, its events dropped.
func TestMetricsCapture(t *testing.T) {
	tests := []struct {
		name  string
		open  func(t *testing.T) *capture.Writer
		ready func(v map[string]float64) bool // the state to wait for
		want  map[string]float64
	}{
		{
			name: "writing to a file",
			open: func(t *testing.T) *capture.Writer {
				w, err := capture.Create(filepath.Join(t.TempDir(), "cap.jsonl"), capture.Header{}, capture.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return w
			},
			ready: func(v map[string]float64) bool { return v["pgpoolcheck_capture_events_total"] >= 8 },
			want: map[string]float64{
				"pgpoolcheck_capture_dropped_events_total": 0,
				"pgpoolcheck_capture_failures_total":       0,
				"pgpoolcheck_capture_resumes_total":        0,
				"pgpoolcheck_capture_writing":              1,
			},
		},
		{
			name: "on a full disk",
			open: func(t *testing.T) *capture.Writer {
				return capture.NewWriter(noSpace{}, capture.Header{}, capture.Options{})
			},
			ready: func(v map[string]float64) bool { return v["pgpoolcheck_capture_failures_total"] == 1 },
			want: map[string]float64{
				"pgpoolcheck_capture_events_total":   0,
				"pgpoolcheck_capture_resumes_total":  0,
				"pgpoolcheck_capture_writing":        0,
				"pgpoolcheck_capture_failures_total": 1,
			},
		},
	}
	srv := pgtest.Shared(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.open(t)
			defer w.Close()
			p, stop := serveWithMetrics(t, pooler.Config{
				Upstream: srv.SocketURL(pgtest.SuperUser),
				PoolSize: 2,
				Capture:  w,
			})
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			url := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgtest.SuperUser, p.Addr(), pgtest.Database)
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if _, err := c.Exec(ctx, "SELECT $1::int", i); err != nil {
					t.Fatal(err)
				}
			}
			// The session's end makes the writer flush.
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			var got map[string]float64
			for deadline := time.Now().Add(10 * time.Second); ; {
				fams := scrape(t, p.MetricsAddr())
				got = map[string]float64{}
				for _, name := range captureMetrics {
					if v, ok := value(fams, name, nil); ok {
						got[name] = v
					}
				}
				if tc.ready(got) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("capture metrics %v", got)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(got) != len(captureMetrics) {
				t.Errorf("capture metrics %v, want all of %v", got, captureMetrics)
			}
			for name, want := range tc.want {
				if v, ok := got[name]; !ok || v != want {
					t.Errorf("%s = %v (found %v), want %v", name, v, ok, want)
				}
			}
			if tc.name == "on a full disk" && got["pgpoolcheck_capture_dropped_events_total"] < 1 {
				t.Errorf("no events dropped on a full disk: %v", got)
			}
		})
	}
}
