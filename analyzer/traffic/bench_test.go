package traffic_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
)

// writeLoadCapture records pgbench-like traffic: sessions that prepare a
// statement, run it in many transactions, and sometimes SET a parameter.
func writeLoadCapture(b *testing.B, path string, sessions, txs int) int {
	w, err := capture.Create(path, capture.Header{Mode: "record"}, capture.Options{QueueEvents: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	parse := []byte("P_0\x00SELECT abalance FROM pgbench_accounts WHERE aid = $1\x00\x00\x01\x00\x00\x00\x17")
	bind := []byte("\x00P_0\x00\x00\x00\x00\x01\x00\x00\x00\x041234\x00\x00")
	exec := []byte("\x00\x00\x00\x00\x00")
	events := 0
	for i := range sessions {
		s := w.StartSession(capture.SessionInfo{User: "bench", ApplicationName: fmt.Sprintf("app%d", i%4)})
		s.Frontend('P', parse, len(parse))
		s.Frontend('S', nil, 0)
		s.Backend('Z', []byte{'I'})
		if i%10 == 0 {
			q := []byte("SET work_mem = '64MB'\x00")
			s.Frontend('Q', q, len(q))
			s.Backend('Z', []byte{'I'})
			events += 2
		}
		for range txs {
			s.Frontend('B', bind, len(bind))
			s.Frontend('E', exec, len(exec))
			s.Frontend('S', nil, 0)
			s.Backend('Z', []byte{'I'})
		}
		s.End("client closed")
		events += 5 + 4*txs
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return events
}

// BenchmarkAnalyzeCaptures measures analyze over a capture of 100 sessions
// of 200 transactions each, per event.
func BenchmarkAnalyzeCaptures(b *testing.B) {
	path := filepath.Join(b.TempDir(), "load.jsonl")
	events := writeLoadCapture(b, path, 100, 200)
	cfg := &analyzer.Config{}
	b.ResetTimer()
	for b.Loop() {
		rep, _, err := traffic.Analyze(cfg, []string{path}, traffic.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Findings) != 2 {
			b.Fatalf("%d findings", len(rep.Findings))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}
