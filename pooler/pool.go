package pooler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// poolKey identifies a pool: server connections are shared only by
// clients of the same database and user.
type poolKey struct{ database, user string }

// pool holds the server connections of one key. open counts every server
// that exists or is being connected, and never exceeds the pool size;
// clients that find no idle server and no free slot wait in FIFO order.
type pool struct {
	proxy    *Proxy
	key      poolKey
	password string
	size     int
	// knownClean is the classifier's pre-filter test for the pool's
	// database (Proxy.knownClean), made once for its clients.
	knownClean func(name string) bool
	// clients counts the logged-in clients of the pool and lastUsed is
	// when the last one left (under Proxy.mu; forgetPools).
	clients  int
	lastUsed time.Time

	mu      sync.Mutex
	idle    []*serverConn
	open    int
	waiters waitQueue
	// expiry fires at the first waiter's deadline (expireWaiters); armed
	// is set while it is pending. One timer per pool, not per wait.
	expiry *time.Timer
	armed  bool
	// defaults are the parameters a server reports with no client
	// settings: the welcome ParameterStatus values.
	defaults map[string]string
	closed   bool
	// reconnectBefore: servers connected before it are closed when they
	// go back to the pool (RECONNECT on the console).
	reconnectBefore time.Time
	// downErr is set while the pool's server logins fail for a reason
	// that may pass (the server is down, starting or full); retryAt is
	// when the next login may be tried, backoff after the last one
	// (doubling from firstLoginRetry up to Config.ServerLoginRetry).
	downErr error
	retryAt time.Time
	backoff time.Duration

	// stats counts protocol prepared statements (PgBouncer's
	// total_client_parse_count, total_server_parse_count and
	// total_bind_count, plus evictions from the servers' caches).
	stats struct {
		clientParses, serverParses, binds, evictions atomic.Int64
	}
	// ctr are the other cumulative counters (stats.go).
	ctr poolCounters
	// dbCap and userCap count the servers of the pool's database and
	// user over all pools (caps.go).
	dbCap, userCap *connCap
}

// waiter is a client waiting for a server. It receives a server, nil
// (which grants it a slot to connect a new server in) or waitExpired. A
// client keeps one waiter (channel included) for all its waits, so a wait
// allocates nothing.
type waiter struct {
	ch       chan *serverConn
	since    time.Time
	deadline time.Time
	// queued is set while the waiter is in a pool's queue (prev/next).
	queued     bool
	prev, next *waiter
	// loop is set while a client of an event loop waits: it gets its
	// server as a message of that loop (give).
	loop *evLoop
	// c is the waiting client (nil: an internal wait).
	c *clientConn
}

// killed reports whether the waiting client is being closed (KILL sets
// its kill message before it empties the queue): its wait ends with
// errKilled rather than a timeout.
func (w *waiter) killed() bool { return w != nil && w.c != nil && w.c.kill.Load() != nil }

// give hands the waiter a server, nil (a slot to connect one in) or
// waitExpired.
func (w *waiter) give(s *serverConn) {
	if w.loop == nil {
		w.ch <- s
		return
	}
	m := loopMsg{kind: msgServer, c: w.c, s: s}
	switch s {
	case nil:
		m.kind = msgGrant
	case waitExpired:
		m.kind, m.s = msgExpired, nil
	}
	w.loop.post(m)
}

// closeWait tells the waiter its pool closed.
func (w *waiter) closeWait() {
	if w.loop == nil {
		// The pool is closed, so the channel is never used again.
		close(w.ch)
		return
	}
	w.loop.post(loopMsg{kind: msgClosed, c: w.c})
}

// waitQueue is a FIFO of waiters, linked through the waiters themselves.
type waitQueue struct {
	head, tail *waiter
	n          int
}

func (q *waitQueue) Len() int { return q.n }

// front returns the longest-waiting waiter, or nil.
func (q *waitQueue) front() *waiter { return q.head }

func (q *waitQueue) pushBack(w *waiter) {
	w.prev, w.next, w.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
	q.n++
}

func (q *waitQueue) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	q.n--
}

// newPool makes the pool of key; p.mu is held.
func newPool(p *Proxy, key poolKey, password string) *pool {
	pl := &pool{proxy: p, key: key, password: password, size: p.poolSize(key.database)}
	pl.knownClean = p.knownClean(key.database)
	if p.dbCaps == nil {
		p.dbCaps, p.userCaps = map[string]*connCap{}, map[string]*connCap{}
	}
	pl.dbCap = capFor(p.dbCaps, key.database, p.dbCapMax(key.database))
	pl.userCap = capFor(p.userCaps, key.user, p.live.Load().MaxUserConnections)
	pl.dbCap.add(pl)
	pl.userCap.add(pl)
	return pl
}

func (p *pool) lock()   { p.mu.Lock() }
func (p *pool) unlock() { p.mu.Unlock() }

// aliveCheckAfter is how long a server must have been idle before acquire
// checks that it is still connected (one non-blocking peek at the
// socket). A server reused sooner is taken as alive: it answered a
// ReadyForQuery a moment ago, and checking every transaction would cost a
// system call each.
const aliveCheckAfter = 50 * time.Millisecond

// errWaitTimeout is a client that waited longer than the query wait timeout.
var errWaitTimeout = errors.New("query_wait_timeout")

// errPoolClosed is an acquire during shutdown.
var errPoolClosed = errors.New("pooler is shutting down")

// acquire returns a server for the caller's exclusive use, connecting a
// new one (with params as its run-time parameters) when there is a free
// slot, and otherwise waiting until deadline, with w (nil: a new one) as
// its place in the queue.
func (p *pool) acquire(ctx context.Context, deadline time.Time, params map[string]string, w *waiter) (*serverConn, error) {
	if p.proxy.pause.active() {
		if err := p.pauseWait(ctx, deadline, w); err != nil {
			return nil, err
		}
	}
	if w == nil {
		w = new(waiter)
	}
	if w.ch == nil {
		w.ch = make(chan *serverConn, 1)
	}
	w.loop = nil
	a, s, err := p.admit(w, deadline)
	switch a {
	case admitServer:
		return s, nil
	case admitSlot:
		return p.connectSlot(ctx, params)
	case admitRefused:
		return nil, err
	}
	s, err = p.wait(w)
	p.ctr.observeWait(time.Since(w.since))
	if err != nil {
		return nil, err
	}
	if s != nil {
		// Handed over straight from a transaction that just ended
		// with ReadyForQuery: alive a moment ago, so not checked.
		return s, nil
	}
	// A slot was freed for this client.
	return p.connectGranted(ctx, params)
}

// admission is a pool's answer to a client that asks for a server
// (pool.admit).
type admission uint8

const (
	// admitServer: an idle server, the caller's now.
	admitServer admission = iota
	// admitSlot: a slot (counted in open and the caps) in which the
	// caller logs a new server in (connectSlot).
	admitSlot
	// admitQueued: the client waits in the pool's queue; its server, a
	// slot or the end of its wait comes through its waiter.
	admitQueued
	// admitRefused: the pool is closed, or its server is down and no
	// server of the pool will come back to wait for.
	admitRefused
)

// admit is the pool's one admission, for both drivers; it never blocks.
// It gives an idle server (checked alive when it was idle long), else a
// slot when the pool and its caps have room and logins are not held back
// (loginBlocked), else queues w (set up by the caller: a channel or a
// loop) until deadline.
func (p *pool) admit(w *waiter, deadline time.Time) (admission, *serverConn, error) {
	for {
		p.lock()
		if p.closed {
			p.unlock()
			return admitRefused, nil, errPoolClosed
		}
		if s := p.popIdle(); s != nil {
			p.unlock()
			if !s.aliveAfterIdle() {
				p.putBack(s, closeServer)
				continue
			}
			return admitServer, s, nil
		}
		var capped bool
		var blocked error
		if p.open < p.size {
			blocked = p.loginBlocked(time.Now())
		}
		room := p.open < p.size && blocked == nil
		if room && !p.takeCaps() {
			room, capped = false, true
		}
		switch {
		case room:
			p.open++
			p.unlock()
			return admitSlot, nil, nil
		case blocked != nil && p.open == 0:
			// The client learns why at once.
			p.unlock()
			return admitRefused, nil, blocked
		}
		w.since, w.deadline = time.Now(), deadline
		p.waiters.pushBack(w)
		if !p.armed {
			p.arm(deadline)
		}
		p.unlock()
		if capped {
			p.capped()
		}
		return admitQueued, nil, nil
	}
}

// connectSlot logs a server in, in a slot the caller was granted (while
// the pool is down, only when a retry is due). On failure the slot is
// given up; a failure that may pass marks the pool down.
func (p *pool) connectSlot(ctx context.Context, params map[string]string) (*serverConn, error) {
	s, err := p.connectAside(ctx, params)
	if err == nil {
		p.loginWorked()
		return s, nil
	}
	p.slotFreed()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The client's wait ran out while the server logged in: it gets
		// what any wait that runs out gets.
		return nil, errWaitTimeout
	case ctx.Err() != nil:
		return nil, errPoolClosed
	case isRetryableConnectError(err):
		err = p.loginFailed(err)
	}
	return nil, err
}

// serverDownError is a server login failure that may pass: the pool
// retries after Config.ServerLoginRetry and fails clients fast meanwhile.
type serverDownError struct{ err error }

func (e *serverDownError) Error() string { return e.err.Error() + " (server down)" }
func (e *serverDownError) Unwrap() error { return e.err }

// loginBlocked returns the pool's login failure while no login may be
// tried. When a retry is due it returns nil and moves retryAt on, so that
// this caller tries while the others keep failing fast. p is locked.
func (p *pool) loginBlocked(now time.Time) error {
	if p.downErr == nil {
		return nil
	}
	if now.Before(p.retryAt) {
		return p.downErr
	}
	p.retryAt = now.Add(p.backoff)
	return nil
}

// firstLoginRetry is the first wait after a failed server login: a server
// that restarts refuses logins for a moment, and clients should not pay
// the full Config.ServerLoginRetry for that.
const firstLoginRetry = 250 * time.Millisecond

// loginFailed marks the pool down after a login that failed with err and
// returns the error its clients get; the first failure is logged.
func (p *pool) loginFailed(err error) error {
	down := &serverDownError{err}
	p.lock()
	first := p.downErr == nil
	if first {
		p.backoff = min(firstLoginRetry, p.proxy.live.retry())
	} else {
		p.backoff = min(2*p.backoff, p.proxy.live.retry())
	}
	p.downErr, p.retryAt = down, time.Now().Add(p.backoff)
	p.unlock()
	if first {
		p.proxy.log.Warn("server down: login failed; clients that find no server get the error until a retry works",
			"database", p.key.database, "user", p.key.user, "retry_up_to_every", p.proxy.live.retry(), "err", err)
	}
	return down
}

// loginWorked clears the pool's down state after a login that worked.
func (p *pool) loginWorked() {
	p.lock()
	was := p.downErr
	p.downErr = nil
	p.unlock()
	if was != nil {
		p.proxy.log.Info("server up: login works again", "database", p.key.database, "user", p.key.user)
	}
}

// waitExpired is what a waiter receives when its deadline passed.
var waitExpired = new(serverConn)

// wait blocks until w is served or its deadline passes (the pool's expiry
// timer takes it out of the queue then). A wait that only receives costs
// no timer and no select per transaction.
func (p *pool) wait(w *waiter) (*serverConn, error) {
	s, ok := <-w.ch
	switch {
	case !ok:
		return nil, errPoolClosed
	case s == waitExpired && w.killed():
		return nil, errKilled // KILL emptied the queue
	case s == waitExpired:
		return nil, errWaitTimeout
	}
	return s, nil
}

// arm sets the expiry timer for at. p must be locked.
func (p *pool) arm(at time.Time) {
	d := time.Until(at)
	if p.expiry == nil {
		p.expiry = time.AfterFunc(d, p.expireWaiters)
	} else {
		p.expiry.Reset(d)
	}
	p.armed = true
}

// expireWaiters sends waitExpired to the waiters whose deadline passed
// (the queue is in deadline order: every wait lasts the query wait
// timeout) and sets the timer for the next one.
func (p *pool) expireWaiters() {
	now := time.Now()
	p.lock()
	defer p.unlock()
	p.armed = false
	for w := p.waiters.front(); w != nil && !w.deadline.After(now); w = p.waiters.front() {
		p.waiters.remove(w)
		w.give(waitExpired)
	}
	if w := p.waiters.front(); w != nil && !p.closed {
		p.arm(w.deadline)
	}
}

// connect logs a new server in. The first server of a pool is made without
// client parameters so its ParameterStatus values become the defaults.
func (p *pool) connect(ctx context.Context, params map[string]string) (*serverConn, error) {
	p.lock()
	first := p.defaults == nil
	p.unlock()
	if first {
		params = nil
	}
	p.ctr.connecting.Add(1)
	s, err := p.dialServer(ctx, params)
	p.ctr.connecting.Add(-1)
	if err != nil {
		return nil, err
	}
	if first {
		d := make(map[string]string, len(s.params))
		for k, v := range s.params {
			d[k] = v
		}
		p.lock()
		if p.defaults == nil {
			p.defaults = d
		}
		p.unlock()
	}
	p.proxy.stats.serversOpened.Add(1)
	return s, nil
}

// connectAside runs connect on a goroutine of its own: a server login
// (TLS, SCRAM) needs a deep stack, which the waiting client's goroutine
// would otherwise keep for as long as the client stays connected.
func (p *pool) connectAside(ctx context.Context, params map[string]string) (*serverConn, error) {
	type result struct {
		s   *serverConn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := p.connect(ctx, params)
		ch <- result{s, err}
	}()
	r := <-ch
	return r.s, r.err
}

// connectGranted connects a server in a slot the pool granted a waiting
// client (waiter.give(nil)), unless logins are held back after a failure.
func (p *pool) connectGranted(ctx context.Context, params map[string]string) (*serverConn, error) {
	p.lock()
	blocked := p.loginBlocked(time.Now())
	p.unlock()
	if blocked != nil {
		p.slotFreed()
		return nil, blocked
	}
	return p.connectSlot(ctx, params)
}

// popIdle removes and returns the most recently used idle server, or nil.
// p must be locked.
func (p *pool) popIdle() *serverConn {
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	s := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return s
}

// aliveAfterIdle checks, for a server idle long enough to have died
// unnoticed (aliveCheckAfter), that it is still connected.
func (s *serverConn) aliveAfterIdle() bool {
	return time.Since(s.idleSince) < aliveCheckAfter || s.alive()
}

// popWaiter removes and returns the first waiter, or nil. p must be locked.
func (p *pool) popWaiter() *waiter {
	w := p.waiters.front()
	if w != nil {
		p.waiters.remove(w)
	}
	return w
}

// fate is what a server going back to its pool asks for (putBack).
type fate uint8

const (
	// reuse: the server is clean and may serve another client: the first
	// waiter gets it, else it goes idle; unless it is past its lifetime,
	// was connected before a RECONNECT, the pool is closed, or a client
	// of another pool waits for a slot of a full cap: then it is closed.
	reuse fate = iota
	// closeServer: closed; its slot is freed once its backend has exited
	// (terminate): until then PostgreSQL counts the backend, so the
	// pool's size and the caps count it too.
	closeServer
	// evictServer: closed to give its slot to a client of another pool
	// waiting under a full cap (evict).
	evictServer
	// closeNow: closed and its slot freed at once (the pool is being shut
	// down: nobody waits for the slot, and nothing is left running).
	closeNow
)

// setupFate is the fate of a server on which setting a client up failed:
// one that only answered with an error is fine for others, one whose
// stream failed is closed.
func setupFate(err error) fate {
	var se *serverError
	if errors.As(err, &se) {
		return reuse
	}
	return closeServer
}

// putBack is the one place where a server leaves a client, a login or the
// idle list for good, whatever the path: a release after a transaction
// (after cleaning or verifying it), a client that left, a setup that
// failed, a server lost or found dead, the caps, the lifetime and idle
// timeouts, shutdown. The pool's invariants live here: a server put back
// is either with exactly one waiter, or idle, or closed with its slot
// freed once (the count of open servers and the caps go down by one).
func (p *pool) putBack(s *serverConn, f fate) {
	if f == reuse && s.holdForCancels() {
		return
	}
	if f == reuse && time.Since(s.created) > p.proxy.live.lifetime() {
		f = closeServer
	}
	if f == reuse {
		p.lock()
		switch {
		case p.closed || s.created.Before(p.reconnectBefore):
			f = closeServer
		case p.waiters.front() != nil:
			w := p.popWaiter()
			p.unlock()
			w.give(s)
			return
		case p.capStarved():
			// A client of another pool waits for a slot of a full cap.
			f = evictServer
		default:
			s.idleSince = time.Now()
			p.idle = append(p.idle, s)
			p.unlock()
			return
		}
		p.unlock()
	}
	switch f {
	case evictServer:
		p.evict(s)
	case closeNow:
		s.close()
		p.lock()
		p.open--
		p.unlock()
		p.freeCaps()
	default:
		s.terminate(p.slotFreed)
	}
}

// slotFreed gives up one slot: a waiter gets it, or it is freed.
func (p *pool) slotFreed() {
	p.lock()
	if w := p.popWaiter(); w != nil && !p.closed {
		p.unlock()
		w.give(nil)
		return
	}
	p.open--
	p.unlock()
	p.freeCaps()
}

// reap closes servers idle longer than the idle timeout, older than their
// lifetime, or connected before a RECONNECT.
func (p *pool) reap(now time.Time) {
	idleTimeout, lifetime := p.proxy.live.idleTimeout(), p.proxy.live.lifetime()
	var old []*serverConn
	p.lock()
	keep := p.idle[:0]
	for _, s := range p.idle {
		if now.Sub(s.idleSince) > idleTimeout || now.Sub(s.created) > lifetime || s.created.Before(p.reconnectBefore) {
			old = append(old, s)
		} else {
			keep = append(keep, s)
		}
	}
	for i := len(keep); i < len(p.idle); i++ {
		p.idle[i] = nil
	}
	p.idle = keep
	p.unlock()
	for _, s := range old {
		p.putBack(s, closeServer)
	}
}

// closeIdle closes every idle server and stops the pool handing out more.
func (p *pool) closeIdle() {
	p.lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	for w := p.popWaiter(); w != nil; w = p.popWaiter() {
		w.closeWait()
	}
	p.unlock()
	for _, s := range idle {
		p.putBack(s, closeNow)
	}
}

// welcomeParams returns the pool's default parameters, connecting a first
// server if there is none yet.
func (p *pool) welcomeParams(ctx context.Context, deadline time.Time) (map[string]string, error) {
	p.lock()
	d := p.defaults
	p.unlock()
	if d != nil {
		return d, nil
	}
	s, err := p.acquire(ctx, deadline, nil, nil)
	if err != nil {
		return nil, err
	}
	p.putBack(s, reuse)
	p.lock()
	d = p.defaults
	p.unlock()
	if d == nil {
		return nil, errors.New("no server parameters")
	}
	return d, nil
}
