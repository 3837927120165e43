package pooler

import (
	"io"
	"log/slog"
	"testing"
)

// FuzzTrackFrontend feeds client messages of the kinds the prepared-
// statement relay decodes (Parse, Bind, Describe, Close, Execute, Sync,
// Query) with arbitrary bodies to trackFrontend, as one client on one
// server: whatever the bytes, it must not panic, the server's cache must
// stay within its bound and every planned rename must fit its message.
func FuzzTrackFrontend(f *testing.F) {
	f.Add([]byte("P"), []byte("s1\x00SELECT $1\x00\x00\x01\x00\x00\x00\x17"))
	f.Add([]byte("B"), []byte("\x00s1\x00\x00\x00\x00\x01\x00\x00\x00\x015\x00\x00"))
	f.Add([]byte("D"), []byte("Ss1\x00"))
	f.Add([]byte("C"), []byte("Ss1\x00"))
	f.Add([]byte("PBDCESQ"), []byte("\x00"))
	f.Add([]byte("PP"), []byte("s1\x00SELECT 1\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, types, body []byte) {
		p := &Proxy{cfg: Config{MaxPreparedStatements: 2, OnSessionState: PolicyPreserve, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
		pl := newPool(p, poolKey{"db", "u"}, "")
		c := &clientConn{proxy: p, pool: pl, tracked: true}
		s := &serverConn{pool: pl}
		if len(types) > 16 {
			types = types[:16]
		}
		for i, typ := range types {
			// Vary the body a little per message so names differ.
			b := body
			if i%2 == 1 && len(b) > 0 {
				b = b[1:]
			}
			pl := c.trackFrontend(s, typ, b, len(b))
			if s.lru.len() > 2+1 {
				t.Fatalf("cache holds %d statements, bound 2", s.lru.len())
			}
			if pl.action == planRename && pl.skip > len(b) {
				t.Fatalf("rename skips %d bytes of a %d-byte body", pl.skip, len(b))
			}
		}
	})
}
