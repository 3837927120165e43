package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// classifier reports "SET …" as a session setting, for the hazard metric.
type classifier struct{}

func (classifier) Classify(sql string) ([]pooler.StateEffect, string) {
	if len(sql) > 4 && sql[:4] == "SET " {
		return []pooler.StateEffect{{Kind: pooler.StateSet, Name: "work_mem", Rule: "set-work-mem"}}, "fp"
	}
	return nil, ""
}

// TestMetricsScrape runs a proxy with a metrics listener, makes some
// traffic, holds a transaction open, and scrapes /metrics with net/http,
// parsing the text format.
func TestMetricsScrape(t *testing.T) {
	srv := pgtest.Shared(t)
	p, err := pooler.New(pooler.Config{
		Listen:         "127.0.0.1:0",
		Upstream:       srv.SocketURL(pgtest.SuperUser),
		PoolSize:       3,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		Classifier:     classifier{},
		MetricsListen:  "127.0.0.1:0",
		MetricsHandler: Handler,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background()) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Error(err)
		}
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

	resp, err := http.Get(fmt.Sprintf("http://%s/metrics", p.MetricsAddr()))
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
	// value finds a sample by its labels.
	value := func(name string, labels map[string]string) (float64, bool) {
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
		v, ok := value(c.name, c.labels)
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
	if _, err := c2.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
}
