package analyzer

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// benchSize is the size of the generated dump the benchmarks scan.
const benchSize = 4 << 20

var (
	benchOnce  sync.Once
	benchSrc   []byte
	benchTexts []string
)

func benchCorpus(b *testing.B) ([]byte, []string) {
	benchOnce.Do(func() {
		benchSrc = dumpCorpus(benchSize)
		for _, c := range sqlparse.Split(benchSrc).Chunks {
			benchTexts = append(benchTexts, string(benchSrc[c.Start:c.End]))
		}
	})
	return benchSrc, benchTexts
}

// The benchmarks use one worker per core: run them with -cpu 1,2 to see
// one worker on one core beside all workers on all cores (a single worker
// on a machine with more cores is not single-threaded: splitting and the
// rules run in stages of their own).
func workers() int { return runtime.GOMAXPROCS(0) }

// BenchmarkScan measures the whole scan of a generated pg_dump-like file:
// split, parse, routine bodies, rules, positions. Compare its stmts/s with
// BenchmarkRawParse, which only calls the parser on the same statements.
func BenchmarkScan(b *testing.B) {
	src, texts := benchCorpus(b)
	cfg := &Config{Workers: workers()}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		res := cfg.AnalyzeSource("dump.sql", src)
		if res.Statements != len(texts) {
			b.Fatalf("scanned %d statements, want %d", res.Statements, len(texts))
		}
	}
	b.ReportMetric(float64(len(texts))*float64(b.N)/b.Elapsed().Seconds(), "stmts/s")
}

// BenchmarkRawParse parses the same statements with nothing but the
// parser, spread over the same number of goroutines.
func BenchmarkRawParse(b *testing.B) {
	src, texts := benchCorpus(b)
	w := workers()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range w {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(texts) {
						return
					}
					if _, err := sqlparse.Parse(texts[i]); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(len(texts))*float64(b.N)/b.Elapsed().Seconds(), "stmts/s")
}
