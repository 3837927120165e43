package pooler

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// cancelKey is the BackendKeyData the pooler gives a client: a random
// process ID and secret, unique among connected clients.
type cancelKey struct{ pid, secret uint32 }

// Peers (Config.PeerID, Config.Peers): several poolers behind one address
// (a TCP load balancer, SO_REUSEPORT) each own the keys they gave out,
// and a CancelRequest may reach any of them. So with a peer id the key
// says whose it is: the secret's top 14 bits are the owner's peer id and
// the next bit marks a request already forwarded once (the bit is 0 in
// the key a client gets). The other 17 bits of the secret and the 31 of
// the process ID are random: 48 random bits, as many as PgBouncer's
// peered keys keep. An instance that gets a key of another peer sends
// the request on to that peer with the forwarded bit set, and drops a
// forwarded request that is not its own: a request is forwarded at most
// once, whatever the peer lists say.
const (
	peerShift     = 18
	MaxPeerID     = 1<<14 - 1
	forwardedBit  = 1 << 17
	peerRandomMax = forwardedBit - 1
	// peerCancelTimeout bounds forwarding a request to a peer.
	peerCancelTimeout = 5 * time.Second
)

// peerOf returns the peer id a key carries (0 without peering).
func peerOf(k cancelKey) int { return int(k.secret >> peerShift) }

// registerCancelKey makes a unique key for c: its process ID is pid when
// not 0 (the real one of the client's own server, in session mode) and
// the pooler has no peer id, otherwise random; its secret is random,
// with the peer id in its top bits when there is one.
func (p *Proxy) registerCancelKey(c *clientConn, pid uint32) cancelKey {
	for {
		k := randomKey()
		if peer := p.cfg.PeerID; peer > 0 {
			// A real process ID would leave only the secret's 17
			// random bits to guess.
			k.secret = uint32(peer)<<peerShift | k.secret&peerRandomMax
		} else if pid != 0 {
			k.pid = pid // the client's own server's (session mode)
		}
		if _, taken := p.keys.LoadOrStore(k, c); !taken {
			return k
		}
	}
}

func (p *Proxy) unregisterCancelKey(k cancelKey) {
	p.keys.Delete(k)
}

// forwardCancel sends a client's CancelRequest on to the server attached to
// that client, if any. Without an attached server the request is dropped,
// so a late cancel never reaches another client's query. It returns once
// the request is dropped or PostgreSQL has taken it (at most
// cancelAckWait): the caller closes the requester's connection then, as
// PostgreSQL does, and libpq and pgx wait for that close, so a query the
// client sends after its cancel returned is never the one cancelled.
func (p *Proxy) forwardCancel(req *pgproto3.CancelRequest) {
	if len(req.SecretKey) != 4 {
		return
	}
	k := cancelKey{pid: req.ProcessID, secret: binary.BigEndian.Uint32(req.SecretKey)}
	if p.cfg.PeerID > 0 {
		forwarded := k.secret&forwardedBit != 0
		k.secret &^= forwardedBit
		if owner := peerOf(k); owner != p.cfg.PeerID {
			if forwarded {
				p.log.Debug("forwarded cancel request for another peer dropped", "peer", owner)
				return
			}
			p.forwardToPeer(owner, k)
			return
		}
	}
	v, _ := p.keys.Load(k)
	c, _ := v.(*clientConn)
	if c == nil {
		p.log.Debug("cancel request with an unknown key dropped")
		return
	}
	// The loop that owns the client sends the request for the server
	// attached now (evLoop.cancel); a client on no loop (logging in, the
	// console's) has no server to cancel.
	l := c.loop.Load()
	if l == nil {
		return
	}
	done := make(chan struct{})
	l.post(loopMsg{kind: msgCancel, c: c, done: done})
	t := time.NewTimer(cancelAckWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		p.log.Warn("cancel request not taken in time", "wait", cancelAckWait.String())
	}
}

// cancelAckWait bounds how long a CancelRequest's connection waits for the
// request to be dropped or taken by PostgreSQL (sendCancel's own limit).
const cancelAckWait = 6 * time.Second

// forwardToPeer sends a CancelRequest for key k, marked forwarded, to the
// peer that owns it.
func (p *Proxy) forwardToPeer(owner int, k cancelKey) {
	addr, ok := p.cfg.Peers[owner]
	if !ok {
		p.log.Debug("cancel request for an unknown peer dropped", "peer", owner)
		return
	}
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	ctx, cancel := context.WithTimeout(context.Background(), peerCancelTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		p.log.Warn("cancel request could not reach its peer", "peer", owner, "addr", addr, "err", err)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(peerCancelTimeout))
	req := pgproto3.CancelRequest{ProcessID: k.pid, SecretKey: binary.BigEndian.AppendUint32(nil, k.secret|forwardedBit)}
	msg, err := req.Encode(nil)
	if err != nil {
		return
	}
	if _, err := conn.Write(msg); err != nil {
		p.log.Warn("cancel request could not reach its peer", "peer", owner, "addr", addr, "err", err)
		return
	}
	// The peer closes the connection when it has taken the request.
	var b [1]byte
	_, _ = conn.Read(b[:])
}
