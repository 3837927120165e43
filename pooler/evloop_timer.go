package pooler

import (
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// The clients' timeouts (idle_transaction_timeout, query_timeout,
// client_idle_timeout) run on their deadlines: a loop stamps each client's
// activity and each change of its state with the time it woke (touch),
// and keeps one timer armed for the earliest deadline of its clients,
// which posts msgTimeouts (timeouts). The engine says which timeout runs
// for a client (engine.Client.Timeout).

// clientTimeouts reports whether any client timeout is set.
func (c *Config) clientTimeouts() bool {
	return c.IdleTransactionTimeout > 0 || c.ClientIdleTimeout > 0 || c.QueryTimeout > 0
}

// timeoutOf returns the limit of a kind of client timeout and its name, as
// the client is told when it runs out.
func (c *Config) timeoutOf(kind engine.TimeoutKind) (time.Duration, string) {
	switch kind {
	case engine.IdleTransactionTimeout:
		return c.IdleTransactionTimeout, "idle transaction timeout"
	case engine.QueryTimeout:
		return c.QueryTimeout, "query timeout"
	case engine.ClientIdleTimeout:
		return c.ClientIdleTimeout, "client_idle_timeout"
	}
	return 0, ""
}

// touch notes the client's activity (active: it sent something) or a
// change of its state at the loop's time, and makes sure the loop's timer
// fires by the deadline of the timeout that runs for it now.
func (l *evLoop) touch(c *clientConn, active bool) {
	live := l.p.live.Load()
	if !live.clientTimeouts() || !l.owns(c) {
		return
	}
	kind := c.timeout()
	if active || kind != c.tkind {
		c.tkind, c.tsince = kind, int64(l.now.Sub(statsEpoch))
	}
	if limit, _ := live.timeoutOf(kind); limit > 0 {
		l.armAt(statsEpoch.Add(time.Duration(c.tsince) + limit))
	}
}

// timeouts closes the loop's clients whose timeout ran out and arms the
// timer for the next deadline.
func (l *evLoop) timeouts() {
	l.deadline = time.Time{}
	live := l.p.live.Load()
	if !live.clientTimeouts() {
		return
	}
	now := time.Now()
	var next time.Time
	for c := range l.own {
		kind := c.timeout()
		if kind != c.tkind {
			c.tkind, c.tsince = kind, int64(now.Sub(statsEpoch))
		}
		limit, name := live.timeoutOf(kind)
		if limit <= 0 {
			continue
		}
		if d := statsEpoch.Add(time.Duration(c.tsince) + limit); now.Before(d) {
			if next.IsZero() || d.Before(next) {
				next = d
			}
		} else {
			c.closeTimedOut(name)
		}
	}
	if !next.IsZero() {
		l.armAt(next)
	}
}

// armAt makes the loop's timer fire by t.
func (l *evLoop) armAt(t time.Time) {
	if !l.deadline.IsZero() && !t.Before(l.deadline) {
		return
	}
	l.deadline = t
	d := max(t.Sub(time.Now()), 0)
	if l.timer == nil {
		l.timer = time.AfterFunc(d, func() { l.post(loopMsg{kind: msgTimeouts}) })
	} else {
		l.timer.Reset(d)
	}
}

// timeout returns the timeout that runs for the client now (its owner
// only).
func (c *clientConn) timeout() engine.TimeoutKind {
	waiting := c.gone || c.place == engine.Closing || c.place == engine.Waiting
	return c.eng.Timeout(c.server != nil, waiting)
}
