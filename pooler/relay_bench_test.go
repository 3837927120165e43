package pooler

import (
	"bufio"
	"encoding/binary"
	"io"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// BenchmarkRelay measures the pooler's cost per transaction in process:
// one op is one round trip through the proxy in transaction mode (attach,
// relay, release) from a hand-written client that allocates nothing, so
// allocs/op are the pooler's. Run: go test ./pooler -run XXX -bench Relay -benchmem
// (PostgreSQL's own time is in ns/op too).
func BenchmarkRelay(b *testing.B) {
	srv := pgtest.Shared(b)
	tp := startProxy(b, srv, Config{PoolSize: 2})
	for _, bc := range []struct {
		name string
		msgs []byte
	}{
		{"simple", encodeMsgs(msg('Q', "SELECT 1\x00"))},
		{"extended-unnamed", encodeMsgs(
			msg('P', "\x00SELECT 1\x00\x00\x00"),
			msg('B', "\x00\x00\x00\x00\x00\x00\x00\x00"),
			msg('E', "\x00\x00\x00\x00\x00"),
			msg('S', ""))},
		{"prepared-named", encodeMsgs(
			msg('B', "\x00bench_stmt\x00\x00\x00\x00\x00\x00\x00"),
			msg('E', "\x00\x00\x00\x00\x00"),
			msg('S', ""))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			conn, err := rawIdleClient(tp)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			r := bufio.NewReaderSize(conn, 4096)
			h := make([]byte, 5)
			roundTrip := func(out []byte) {
				if _, err := conn.Write(out); err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := io.ReadFull(r, h); err != nil {
						b.Fatal(err)
					}
					n := int(binary.BigEndian.Uint32(h[1:])) - 4
					if _, err := r.Discard(n); err != nil {
						b.Fatal(err)
					}
					if h[0] == 'E' {
						b.Fatal("error from the server")
					}
					if h[0] == 'Z' {
						return
					}
				}
			}
			roundTrip(encodeMsgs(msg('P', "bench_stmt\x00SELECT 1\x00\x00\x00"), msg('S', "")))
			roundTrip(bc.msgs) // warm up
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				roundTrip(bc.msgs)
			}
		})
	}
}

func msg(typ byte, body string) []byte {
	m := make([]byte, 5, 5+len(body))
	m[0] = typ
	binary.BigEndian.PutUint32(m[1:], uint32(4+len(body)))
	return append(m, body...)
}

func encodeMsgs(ms ...[]byte) []byte {
	var out []byte
	for _, m := range ms {
		out = append(out, m...)
	}
	return out
}
