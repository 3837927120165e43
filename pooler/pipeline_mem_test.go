package pooler

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// BenchmarkPipelineWithoutReading: clients that send Bind, Execute and
// Sync for SELECT 1 as fast as the pooler takes them and never read an
// answer, for PIPELINE_SECONDS (default 12) each; it reports how much the
// process grew (heap in use, and RSS) and how much each client got to
// send. Back-pressure should hold the growth to the buffers of a few
// messages per client whatever the clients send. Not a test: run with
// go test ./pooler -run XXX -bench PipelineWithoutReading -benchtime 1x
func BenchmarkPipelineWithoutReading(b *testing.B) {
	srv := pgtest.Shared(b)
	tp := startProxy(b, srv, Config{PoolSize: 4})
	secs := 12
	if s, err := strconv.Atoi(os.Getenv("PIPELINE_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	const clients = 4
	var batch []byte
	batch, _ = (&pgproto3.Bind{}).Encode(batch)
	batch, _ = (&pgproto3.Execute{}).Encode(batch)
	batch, _ = (&pgproto3.Sync{}).Encode(batch)
	chunk := []byte(strings.Repeat(string(batch), (64<<10)/len(batch)))
	for i := 0; i < b.N; i++ {
		runtime.GC()
		heap0, rss0 := heapInUse(), rssKB()
		var wg sync.WaitGroup
		sent := make([]int, clients)
		conns := make([]net.Conn, clients)
		for k := range clients {
			nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
			if err != nil {
				b.Fatal(err)
			}
			conns[k] = nc
			fe := pgproto3.NewFrontend(nc, nc)
			fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": pgtest.SuperUser, "database": pgtest.Database}})
			fe.Flush()
			for {
				m, err := fe.Receive()
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := m.(*pgproto3.ReadyForQuery); ok {
					break
				}
			}
			fe.Send(&pgproto3.Parse{Query: "SELECT 1"})
			fe.Flush()
			wg.Add(1)
			go func() {
				defer wg.Done()
				nc.SetWriteDeadline(time.Now().Add(time.Duration(secs) * time.Second))
				for {
					n, err := nc.Write(chunk)
					sent[k] += n
					if err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		heap1, rss1 := heapInUse(), rssKB()
		if f := os.Getenv("PIPELINE_HEAP_PROFILE"); f != "" {
			if w, err := os.Create(f); err == nil {
				pprof.WriteHeapProfile(w)
				w.Close()
			}
		}
		total := 0
		for _, n := range sent {
			total += n
		}
		for _, nc := range conns {
			nc.Close()
		}
		b.ReportMetric(float64(heap1-heap0)/(1<<20), "heap-MB-grown")
		b.ReportMetric(float64(rss1-rss0)/1024, "rss-MB-grown")
		b.ReportMetric(float64(total)/clients/(1<<20), "MB-sent/client")
	}
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// rssKB is the process's resident set in kB (0 where /proc has none).
func rssKB() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// TestLongPipeline: a batch of far more statements than the answers a
// server may owe a client (max_owed_answers, engine.DefaultMaxOwed) goes through: the client's
// messages wait for answers as it reads them, and none is lost or
// reordered. pgx writes the batch while it reads.
func TestLongPipeline(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{string(RelayLoop), Config{Relay: RelayLoop}},
		{string(RelayBridged), Config{Relay: RelayBridged}},
		// The smallest bounds the settings take.
		{"smallest", Config{Relay: RelayLoop, MaxOwedAnswers: 4096, MaxPendingOutput: 16 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.PoolSize = 2
			tp := startProxy(t, srv, cfg)
			ctx := testCtx(t, 120*time.Second)
			c := tp.connect(t, pgx.QueryExecModeCacheStatement)
			const n = 30000
			b := &pgx.Batch{}
			for i := range n {
				b.Queue("SELECT $1::int", i)
			}
			br := c.SendBatch(ctx, b)
			for i := range n {
				var got int
				if err := br.QueryRow().Scan(&got); err != nil || got != i {
					t.Fatalf("statement %d: %d, %v", i, got, err)
				}
			}
			if err := br.Close(); err != nil {
				t.Fatal(err)
			}
			var one int
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("after the batch: %d, %v", one, err)
			}
		})
	}
}
