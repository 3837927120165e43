package pooler

import (
	"fmt"
	"sync"
	"time"
)

// The event loops (docs/design-event-loop.md). A logged-in client belongs
// to one of a few event loops: a goroutine with an epoll set
// (edge-triggered; evloop_sys.go) that reads the client's messages and its
// attached server's answers as the sockets become readable and runs them
// through the per-message functions of step.go (admit, forward,
// serverMessage). A goroutine per connection costs the Go runtime a park
// and a wake-up for every socket event; a loop handles whatever one
// epoll_wait returns in one go. A socket the loop cannot watch itself (no
// descriptor, an epoll set that refuses it, a system without epoll) is
// bridged (bridge.go): goroutines move its bytes and post its events to
// the loop's inbox.
//
// Nothing blocks a loop. A new server logs in on a goroutine that holds
// only the server (loginAside); the pooler's own queries on a server (its
// setup for a client, the read of its state after routine calls, its
// clean at a release) are written by the loop and their answers read as
// they come (runQueries), while the client waits on its loop (lwait).
// Messages larger than the read buffers are streamed (or gathered, when
// the pooler must see them whole); a wait for a paused database runs
// aside (pauseAside).
//
// Ownership: a client is the loop's from adopt to forget (which finish
// and the ends of a client all go through), and only the loop reads it
// and its buffers then. The loop's own record of what it owns (evLoop.own)
// is the one answer to "is this client still mine?": once a client has
// left it, other goroutines may be writing its fields, so the loop asks
// its record, never the client. A server is the loop's while it
// is attached to one of the loop's clients (s.lclient). Its descriptor
// stays in the epoll set of the loop that last had it (s.loop) until
// another owner takes it out (bind, leaveLoop), so a server that goes back
// and forth between the clients of one loop costs no epoll_ctl.

// evLoop is one event loop.
type evLoop struct {
	p   *Proxy
	sys loopSys // the system's poller (evloop_sys.go, evloop_nosys.go)
	// outMax bounds what a socket may hold back unwritten before the loop
	// stops relaying into it until it drains (max_pending_output).
	outMax int

	mu    sync.Mutex
	inbox []loopMsg
	// ready holds the events of bridged sockets (notify), handled like
	// those of the epoll set.
	ready []loopEvent
	awake bool // the loop will look at the inbox before it sleeps
	// stopped is set once the loop has ended (msgStop).
	stopped bool

	// Loop goroutine only. own holds the clients the loop owns, with
	// their sockets' descriptors (see forget).
	clients fdTable[clientConn]
	own     map[*clientConn]int32
	servers fdTable[serverConn]
	work    []loopMsg
	events  []loopEvent
	// spare are waiters for the loop's clients to queue with, reused
	// (waiterFor, waitEnded).
	spare []*waiter
	// now is when the loop woke for the batch it handles (one clock read
	// per wake-up), the time of its clients' activity (touch); deadline
	// is when timer posts msgTimeouts (zero: not armed).
	now      time.Time
	timer    *time.Timer
	deadline time.Time
}

// loopEvent is what a bridge tells its loop: input arrived (evIn) or its
// output is written (evOut), on the socket known by token.
type loopEvent struct {
	token  int32
	events uint32
}

// The events' bits are epoll's; evHup: the peer closed its end, or the
// socket failed (EPOLLRDHUP, EPOLLHUP, EPOLLERR).
const (
	evIn  = 0x1
	evOut = 0x4
	evHup = 0x2000 | 0x10 | 0x8
)

// notify hands the loop an event of a bridged socket (bridge.go).
func (l *evLoop) notify(token int32, events uint32) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.ready = append(l.ready, loopEvent{token, events})
	wake := !l.awake
	l.awake = true
	l.mu.Unlock()
	if wake {
		l.wake()
	}
}

type loopMsgKind uint8

const (
	msgAdopt    loopMsgKind = iota // a client to own
	msgServer                      // a waiting client's server
	msgGrant                       // a waiting client may connect a server
	msgExpired                     // a waiting client's wait timed out
	msgClosed                      // a waiting client's pool closed
	msgShutdown                    // close the clients between transactions
	msgStop                        // shut down: close every client
	msgLoggedIn                    // a server logged in aside for a waiting client (s), or err
	msgResumed                     // a waiting client's database is no longer paused, or err
	msgTimeouts                    // close the clients whose timeouts ran out (the loop's timer, the janitor's tick)
	msgCancel                      // a cancel request for the client's server (forwardCancel)
	msgReport                      // report the loop's clients (Snapshot)
	msgKill                        // close the client with its FATAL (clientConn.end)
)

type loopMsg struct {
	kind loopMsgKind
	c    *clientConn
	s    *serverConn
	err  error
	// views takes the loop's report of its clients (msgReport).
	views chan<- []clientView
	// done is closed once a cancel request is dropped or PostgreSQL has
	// taken it (msgCancel).
	done chan struct{}
}

// clientView is what a loop reports of one of its clients (Snapshot):
// the client's info but its socket's, and its attached server's.
type clientView struct {
	c      *clientConn
	info   ClientInfo
	server *ServerInfo
	srv    *serverConn // the attached server (tests)
}

// startLoops starts n loops.
func (p *Proxy) startLoops(n int) error {
	var loops []*evLoop
	for range n {
		l, err := newLoop(p)
		if err != nil {
			for _, l := range loops {
				l.post(loopMsg{kind: msgStop})
			}
			return fmt.Errorf("event loop: %w", err)
		}
		loops = append(loops, l)
		go l.run()
	}
	p.loops = loops
	return nil
}

// stopLoops stops the loops of a proxy that did not start.
func (p *Proxy) stopLoops() {
	for _, l := range p.loops {
		l.post(loopMsg{kind: msgStop})
	}
	p.loops = nil
}

func newLoop(p *Proxy) (*evLoop, error) {
	l := &evLoop{p: p, awake: true, own: make(map[*clientConn]int32), outMax: p.cfg.MaxPendingOutput}
	if err := l.sys.init(); err != nil {
		return nil, err
	}
	return l, nil
}

// post hands the loop a message from any goroutine (the loop's own
// included).
func (l *evLoop) post(m loopMsg) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		switch m.kind {
		case msgCancel:
			close(m.done) // the loop closed its clients
			return
		case msgKill:
			return // the loop closed its clients
		case msgReport:
			m.views <- nil
			return
		}
		// Shutdown is over. A server on its way to a client goes back;
		// a client the loop owned was closed as it stopped, and one on
		// its way to it is still the sender's, which closes it here.
		if m.s != nil {
			m.c.pool.putBack(m.s, closeServer)
		}
		if m.kind == msgAdopt {
			m.c.loop.Store(nil)
			m.c.conn.Close()
			go m.c.closed()
		}
		return
	}
	l.inbox = append(l.inbox, m)
	wake := !l.awake
	l.awake = true
	l.mu.Unlock()
	if wake {
		l.wake()
	}
}

// pickLoop returns the loop for a new client, round robin.
func (p *Proxy) pickLoop() *evLoop {
	return p.loops[int(p.nextLoop.Add(1))%len(p.loops)]
}

func (l *evLoop) run() {
	for {
		l.mu.Lock()
		l.work, l.inbox = l.inbox, l.work[:0]
		l.events, l.ready = l.ready, l.events[:0]
		if len(l.work) == 0 && len(l.events) == 0 {
			l.awake = false
		}
		l.mu.Unlock()
		if len(l.events) > 0 || len(l.work) > 0 {
			// awake stays set: the inbox is looked at again before the
			// loop sleeps.
			l.now = time.Now()
			for _, ev := range l.events {
				l.event(ev.token, ev.events)
			}
			for i, m := range l.work {
				l.work[i] = loopMsg{}
				if m.kind == msgStop {
					l.stop(l.work[i+1:])
					return
				}
				l.handle(m)
				if m.c != nil {
					l.armOut(m.c)
					l.touch(m.c, false)
				}
			}
			continue
		}
		// Nothing in the inbox: wait for it or for the sockets.
		if err := l.wait(); err != nil {
			// Its clients are closed, and what is posted to it later
			// is answered as after a shutdown (post).
			l.p.log.Error("event loop failed; its clients are closed", "err", err)
			l.stop(nil)
			return
		}
	}
}

// event handles what epoll or a bridge reports of a socket.
func (l *evLoop) event(fd int32, events uint32) {
	if c := l.clients.get(fd); c != nil {
		if events&evHup != 0 {
			// Input and the end may have come in one edge: a short
			// read does not mean that nothing more is to be read.
			c.lhup = true
		}
		if events&evOut != 0 {
			l.clientWritable(c)
		}
		if events&^evOut != 0 && l.clients.get(fd) == c {
			l.clientReadable(c)
			l.touch(c, true)
		}
		l.armOut(c)
		return
	}
	if s := l.servers.get(fd); s != nil {
		c := s.lclient
		if events&evHup != 0 {
			s.lhup = true
		}
		if events&evOut != 0 {
			l.serverWritable(s)
		}
		if events&^evOut != 0 && l.servers.get(fd) == s {
			l.serverReadable(s)
			// s may have gone back to its pool, and on to another
			// loop: it is looked at only while still c's.
			if c != nil && l.owns(c) && c.server == s && c.eng.Holding() && !c.lwait && !c.eng.Saturated(&s.eng) && s.raw.pending() <= l.outMax {
				// The client's next message waited for answers
				// owed (frontend): they came.
				l.clientReadable(c)
			}
		}
		if c != nil {
			l.armOut(c)
			l.touch(c, false)
		}
	}
}

// handle runs one inbox message.
func (l *evLoop) handle(m loopMsg) {
	c := m.c
	switch m.kind {
	case msgAdopt:
		l.adopt(c)
	case msgServer:
		c.lwait = false
		l.waitEnded(c, true)
		l.bind(c, m.s, true)
	case msgGrant:
		l.waitEnded(c, true)
		l.loginAside(c, true)
	case msgLoggedIn:
		c.lwait = false
		if m.err != nil {
			l.noServer(c, m.err)
			return
		}
		l.bind(c, m.s, true)
	case msgResumed:
		c.lwait = false
		if m.err != nil {
			l.noServer(c, m.err)
			return
		}
		if l.attach(c) {
			l.relayClient(c, !c.lmore)
		}
	case msgShutdown:
		l.shutdownIdle()
	case msgCancel:
		l.cancel(c, m.done)
	case msgReport:
		m.views <- l.report()
	case msgKill:
		if l.owns(c) {
			c.shutRead()
			l.clientReadable(c) // reads to the end of the stream: vanish
		}
	case msgTimeouts:
		l.timeouts()
	case msgExpired, msgClosed:
		c.lwait = false
		err := errWaitTimeout
		switch {
		case m.kind == msgClosed:
			err = errPoolClosed
		case c.wt.killed():
			err = errKilled
		}
		l.waitEnded(c, false)
		l.noServer(c, err)
	}
}

// waiterFor returns a waiter for c to queue in its pool with: the loop's
// inbox gets what the pool gives it.
func (l *evLoop) waiterFor(c *clientConn) *waiter {
	var w *waiter
	if n := len(l.spare); n > 0 {
		w, l.spare = l.spare[n-1], l.spare[:n-1]
	} else {
		w = new(waiter)
	}
	w.loop, w.c = l, c
	return w
}

// waitEnded ends c's wait in its pool's queue (the pool gave its waiter
// a server, a slot, the end of its wait or its closing: the waiter is in
// no queue and nothing else holds it), counting the time waited when the
// wait was served, and keeps the waiter for another wait.
func (l *evLoop) waitEnded(c *clientConn, served bool) {
	w := c.wt
	if w == nil {
		return
	}
	if served {
		c.pool.ctr.observeWait(time.Since(w.since))
	}
	c.wt = nil
	l.spareWaiter(w)
}

// spareWaiter keeps w for another wait.
func (l *evLoop) spareWaiter(w *waiter) {
	*w = waiter{}
	l.spare = append(l.spare, w)
}

// cancel sends a client's cancel request for the server attached to it,
// if the loop owns the client, and closes done once the request is
// dropped or PostgreSQL has taken it. The request goes out aside (it dials
// PostgreSQL); until PostgreSQL has taken it, a release of the server
// waits (serverConn.cancels), so that it cannot cancel another client's
// query.
func (l *evLoop) cancel(c *clientConn, done chan struct{}) {
	if !l.owns(c) || c.server == nil {
		l.p.log.Debug("cancel request for a client without a server dropped", "user", c.user)
		close(done)
		return
	}
	s := c.server
	s.cancelStarted()
	go func() {
		if err := s.sendCancel(); err != nil {
			l.p.log.Warn("cancel request failed", "user", c.user, "err", err)
		}
		s.cancelDone()
		close(done)
	}()
}

// report returns what Snapshot shows of the loop's clients.
func (l *evLoop) report() []clientView {
	views := make([]clientView, 0, len(l.own))
	for c := range l.own {
		v := clientView{c: c, info: c.info()}
		v.info.PreparedStatements = c.eng.Statements()
		v.info.FD = connFD(c.conn)
		if s := c.server; s != nil {
			pinned := c.eng.State().Pinned
			v.info.State, v.info.ServerPID, v.info.Pinned = "active", s.pid, pinned
			si := serverInfo(c.pool, s, "active")
			si.Pinned, si.ClientKey = pinned, c.key.pid
			v.server, v.srv = &si, s
		}
		views = append(views, v)
	}
	return views
}

// stop ends the loop at shutdown: its clients are closed.
func (l *evLoop) stop(work []loopMsg) {
	l.mu.Lock()
	l.stopped = true
	rest := append(work, l.inbox...)
	l.inbox = nil
	l.mu.Unlock()
	for _, m := range rest {
		if m.kind == msgCancel {
			close(m.done)
		}
		if m.kind != msgStop && m.kind != msgShutdown && m.kind != msgTimeouts && m.kind != msgCancel && m.kind != msgKill {
			l.post(m) // closes the client
		}
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	l.servers.each(func(s *serverConn) {
		// Running a query of the pooler's own: nothing waits for it any
		// more.
		pooled := s.lquery != nil
		s.lquery = nil
		if c := s.lclient; c != nil && c.server == s {
			if l.owns(c) {
				return // closed with its client below
			}
			// Its client left and waits for it to answer the
			// clean-up (afterVanish): both end here.
			c.server = nil
			l.dropServer(s)
			s.pool.putBack(s, closeServer)
			c.done()
			return
		}
		if pooled {
			l.dropServer(s)
			s.pool.putBack(s, closeServer)
		}
	})
	l.clients.each(func(c *clientConn) {
		l.forget(c)
		c.conn.Close()
		s := c.server
		if s != nil && s.lclient == c {
			c.server = nil
		} else {
			s = nil
		}
		if s != nil {
			l.dropServer(s)
			c.pool.putBack(s, closeServer)
		}
		c.vanish()
		c.done()
	})
	l.sys.close()
}

// shutdownIdle closes the loop's clients that are between transactions
// (Proxy.Shutdown); the others are closed at their release.
func (l *evLoop) shutdownIdle() {
	l.clients.each(func(c *clientConn) {
		if c.lwait || !c.detached() {
			return
		}
		c.closeForShutdown()
		l.finish(c)
	})
}

// loopsStarted returns the running event loops (tests).
func (p *Proxy) loopsStarted() []*evLoop { return p.loops }
