package capture

import (
	"io"
	"testing"
)

// BenchmarkSession measures what the proxy pays per recorded message: one
// extended-protocol round trip (Parse, Bind, Describe, Execute, Sync and
// ReadyForQuery), reported per event, with the background goroutine
// writing to io.Discard.
func BenchmarkSession(b *testing.B) {
	parse := []byte("\x00SELECT abalance FROM pgbench_accounts WHERE aid = $1\x00\x00\x01\x00\x00\x00\x17")
	bind := []byte("\x00\x00\x00\x01\x00\x01\x00\x01\x00\x00\x00\x04\x00\x01\xe2\x40\x00\x01\x00\x01")
	describe := []byte("P\x00")
	execute := []byte("\x00\x00\x00\x00\x00")
	w := NewWriter(io.Discard, Header{}, Options{QueueEvents: 1 << 20})
	s := w.StartSession(SessionInfo{User: "bench"})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.Frontend('P', parse, len(parse))
		s.Frontend('B', bind, len(bind))
		s.Frontend('D', describe, len(describe))
		s.Frontend('E', execute, len(execute))
		s.Frontend('S', nil, 0)
		s.Backend('T', []byte("ignored"))
		s.Backend('D', []byte("ignored"))
		s.Backend('C', []byte("SELECT 1\x00"))
		s.Backend('Z', []byte{'I'})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*6), "ns/event")
	s.End("done")
	_ = w.Close()
	b.ReportMetric(float64(w.Dropped())/float64(b.N*6), "dropped/event")
}

// BenchmarkEncode measures the background goroutine's encoding of one
// Parse event.
func BenchmarkEncode(b *testing.B) {
	ev := Event{T: 123456789, Session: 42, Tx: 7, Kind: Parse, Name: "stmtcache_1", SQL: "SELECT abalance FROM pgbench_accounts WHERE aid = $1", ParamTypes: []uint32{23}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendEvent(buf[:0], &ev)
	}
}

// BenchmarkSessionsParallel records simple-protocol round trips (Query and
// ReadyForQuery) from many goroutines at once, each its own session.
func BenchmarkSessionsParallel(b *testing.B) {
	q := []byte("SELECT abalance FROM pgbench_accounts WHERE aid = 42\x00")
	w := NewWriter(io.Discard, Header{}, Options{QueueEvents: 1 << 20})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := w.StartSession(SessionInfo{User: "bench"})
		for pb.Next() {
			s.Frontend('Q', q, len(q))
			s.Backend('C', []byte("SELECT 1\x00"))
			s.Backend('Z', []byte{'I'})
		}
		s.End("done")
	})
	b.StopTimer()
	_ = w.Close()
	b.ReportMetric(float64(w.Dropped())/float64(b.N*2), "dropped/event")
}
