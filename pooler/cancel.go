package pooler

import (
	"encoding/binary"

	"github.com/jackc/pgx/v5/pgproto3"
)

// cancelKey is the BackendKeyData the pooler gives a client: a random
// process ID and secret, unique among connected clients.
type cancelKey struct{ pid, secret uint32 }

// registerCancelKey makes a unique key for c: its process ID is pid when
// not 0 (the real one of the client's own server, in session mode),
// otherwise random; its secret is random either way.
func (p *Proxy) registerCancelKey(c *clientConn, pid uint32) cancelKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		k := randomKey()
		if pid != 0 {
			k.pid = pid // the client's own server's (session mode)
		}
		if _, taken := p.keys[k]; !taken {
			p.keys[k] = c
			return k
		}
	}
}

func (p *Proxy) unregisterCancelKey(k cancelKey) {
	p.mu.Lock()
	delete(p.keys, k)
	p.mu.Unlock()
}

// forwardCancel sends a client's CancelRequest on to the server attached to
// that client, if any. Without an attached server the request is dropped,
// so a late cancel never reaches another client's query.
func (p *Proxy) forwardCancel(req *pgproto3.CancelRequest) {
	if len(req.SecretKey) != 4 {
		return
	}
	k := cancelKey{pid: req.ProcessID, secret: binary.BigEndian.Uint32(req.SecretKey)}
	p.mu.Lock()
	c := p.keys[k]
	p.mu.Unlock()
	if c == nil {
		p.log.Debug("cancel request with an unknown key dropped")
		return
	}
	// Holding c.mu keeps the server attached (the pump cannot release it)
	// until PostgreSQL has taken the request.
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.server
	if s == nil {
		p.log.Debug("cancel request for a client without a server dropped", "user", c.user)
		return
	}
	if err := s.sendCancel(); err != nil {
		p.log.Warn("cancel request failed", "user", c.user, "err", err)
	}
}
