package pooler

import (
	"net"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// Statistics (SHOW POOLS, SHOW STATS, SHOW CLIENTS, SHOW SERVERS and the
// Prometheus collector all read Proxy.Snapshot).
//
// The hot path stays cheap: the client's loop counts its messages, bytes
// and query round trips in plain fields of clientConn.ctr, which only it
// touches (noteFrontend), and the bytes it relays to the client; and at each ReadyForQuery (noteReady) it
// adds what accumulated to the pool's atomic counters, so a transaction costs a few
// atomic adds and two or three clock reads, and no lock or allocation of
// its own. Wait times are measured in pool.acquire around the wait only.

// statsEpoch is the origin of the monotonic clock readings in the client
// counters.
var statsEpoch = time.Now()

// monoNow returns monotonic nanoseconds since statsEpoch, never 0.
func monoNow() int64 { return int64(time.Since(statsEpoch)) | 1 }

// WaitBuckets are the upper bounds, in seconds, of the wait-time
// histogram (PoolTotals.WaitCounts).
var WaitBuckets = []float64{0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60}

// poolCounters are a pool's cumulative counters (PgBouncer's SHOW STATS).
type poolCounters struct {
	assignments, xacts, queries atomic.Int64
	recv, sent                  atomic.Int64
	xactTimeUs, queryTimeUs     atomic.Int64
	waitTimeUs, waits           atomic.Int64
	// waitCounts[i] counts waits ≤ WaitBuckets[i] (and > the bound
	// before); the last one counts longer waits.
	waitCounts [13]atomic.Int64
	// pauseWaiting counts clients waiting because of PAUSE; connecting
	// the servers being logged in.
	pauseWaiting, connecting atomic.Int64
}

// observeWait counts one wait for a server of d.
func (pc *poolCounters) observeWait(d time.Duration) {
	pc.waits.Add(1)
	pc.waitTimeUs.Add(d.Microseconds())
	s := d.Seconds()
	i := sort.SearchFloat64s(WaitBuckets, s)
	pc.waitCounts[i].Add(1)
}

// clientCounters are what a client's relay counts between two
// ReadyForQuery messages, and when it connected; the client's loop's
// only.
type clientCounters struct {
	connected time.Time
	rx, tx    int64
	queries   int64
	// qStart is when the current query round trip began (monoNow), xStart
	// when the current transaction began; 0 when none is under way.
	qStart, xStart int64
}

// noteFrontend counts a client message about to go to the server. It is
// small enough to be inlined in the relay loop.
func (c *clientConn) noteFrontend(typ byte, n int) {
	c.ctr.rx += int64(n) + headerLen
	c.ctr.queries += int64(queryMessages[typ])
	if c.ctr.qStart == 0 {
		c.ctr.startRoundTrip()
	}
}

// queryMessages marks the client messages that count as queries: simple
// Query and Execute.
var queryMessages = [256]uint8{'Q': 1, 'E': 1}

// startRoundTrip notes the start of a query round trip (and of a
// transaction when none is under way).
func (k *clientCounters) startRoundTrip() {
	now := monoNow()
	k.qStart = now
	if k.xStart == 0 {
		k.xStart = now
	}
}

// noteReady adds what the client's relay counted to its pool at a
// ReadyForQuery with the given status, after the engine recorded it (the
// client's loop).
func (c *clientConn) noteReady(status byte) {
	k := &c.ctr
	pc := &c.pool.ctr
	if k.rx != 0 {
		pc.recv.Add(k.rx)
		k.rx = 0
	}
	if k.tx != 0 {
		pc.sent.Add(k.tx)
		k.tx = 0
	}
	if k.queries != 0 {
		pc.queries.Add(k.queries)
		k.queries = 0
	}
	idle := engine.Quiet(c.eng.State())
	roundTrip := idle && k.qStart != 0
	if status != 'I' && !roundTrip {
		return
	}
	now := monoNow()
	if roundTrip {
		pc.queryTimeUs.Add((now - k.qStart) / 1000)
		k.qStart = 0
	}
	if status == 'I' {
		// Every ReadyForQuery 'I' ends a transaction (each Sync or Query of
		// a pipeline in autocommit is one), except the pooler's own
		// clean-up after the client left.
		if !c.gone {
			pc.xacts.Add(1)
			if k.xStart != 0 {
				pc.xactTimeUs.Add((now - k.xStart) / 1000)
			}
		}
		k.xStart = 0
		if !idle {
			k.xStart = now // the pipeline's next transaction is under way
		}
	}
}

// Snapshot is the pooler's state and counters at one moment.
type Snapshot struct {
	Taken time.Time
	// Pools are sorted by database and user.
	Pools []PoolStats
	// Clients and Servers are sorted by pool, then connect time.
	Clients []ClientInfo
	Servers []ServerInfo
	Hazards []HazardCount
	// Paused is set while PAUSE (all databases) is in force;
	// PausedDatabases lists the databases paused one by one.
	Paused          bool
	PausedDatabases []string
	ServersOpened   int64
	ServersLost     int64
	// LoggingIn counts connections still logging in; LoginsRefused those
	// refused because Config.MaxLoginClients were.
	LoggingIn     int
	LoginsRefused int64
	// AdminClients counts clients of the admin console.
	AdminClients int
	// Bridged counts the sockets an event loop bridged (bridge.go)
	// because its epoll set refused them (max_user_watches).
	Bridged int64
	// InvalidMoves counts moves of a client between places that the
	// engine's state machine refused (engine.Move): pooler bugs, logged.
	InvalidMoves int64
	// Verifications counts reads of a server's session state after
	// statements whose effects only the server knew (a DO block, a call
	// of a routine not known to change nothing).
	Verifications int64
	// ReachReads counts reads of what statements reach in a database's
	// catalog without naming it (views, triggers, defaults, …), kept
	// for routineTTL.
	ReachReads int64
	// Capture holds the capture writer's counters when Config.Capture is
	// set, nil otherwise.
	Capture *capture.Stats
}

// PoolStats are one pool's figures.
type PoolStats struct {
	Database, User string
	Mode           Mode
	Size           int
	// Clients attached to a server, waiting for one (in the wait queue or
	// held by PAUSE), and the others; pinned clients hold their server
	// for session state.
	ClientsActive, ClientsWaiting, ClientsIdle, ClientsPinned int
	// Servers attached to a client, idle in the pool, being logged in,
	// and pinned; ServersUsed are the others that exist: between a
	// client and the pool (being handed on, or cleaned of session
	// state), PgBouncer's sv_used.
	ServersActive, ServersIdle, ServersLogin, ServersPinned, ServersUsed int
	// MaxWait is how long the oldest waiting client has waited.
	MaxWait time.Duration
	Paused  bool
	Totals  PoolTotals
}

// PoolTotals are a pool's cumulative counters, in PgBouncer's SHOW STATS
// terms.
type PoolTotals struct {
	ServerAssignments int64
	Transactions      int64
	Queries           int64
	BytesReceived     int64 // from clients
	BytesSent         int64 // to clients
	XactTimeUs        int64
	QueryTimeUs       int64
	WaitTimeUs        int64
	// Waits counts acquisitions that had to wait; WaitCounts splits them
	// by WaitBuckets (the last entry: longer than the last bound).
	Waits        int64
	WaitCounts   []int64
	ClientParses int64
	ServerParses int64
	Binds        int64
	Evictions    int64
}

// ClientInfo is one client (SHOW CLIENTS).
type ClientInfo struct {
	Database, User, ApplicationName string
	// State is active (a server attached), waiting (in the queue for a
	// server) or idle.
	State       string
	Addr        string
	Port        int
	LocalAddr   string
	LocalPort   int
	ConnectTime time.Time
	Pinned      bool
	Admin       bool
	// ServerPID is the attached server's backend PID (0 without one).
	ServerPID uint32
	// PreparedStatements counts the client's protocol prepared statements.
	PreparedStatements int
	// Key is the client's cancel key PID, which identifies it.
	Key uint32
	// FD is the client socket's descriptor (-1: closed, none, or on its way
	// to a loop).
	FD int
}

// ServerInfo is one server connection (SHOW SERVERS).
type ServerInfo struct {
	Database, User string
	// State is active (attached) or idle.
	State       string
	Addr        string
	Port        int
	LocalAddr   string
	LocalPort   int
	ConnectTime time.Time
	IdleSince   time.Time
	PID         uint32
	Pinned      bool
	// ClientKey is the attached client's cancel key PID (0 when idle).
	ClientKey uint32
	// ApplicationName is what the server has as application_name.
	ApplicationName    string
	PreparedStatements int
	// FD is the server socket's descriptor (-1: closed or none).
	FD int
}

func splitAddr(a net.Addr) (string, int) {
	if a == nil {
		return "", 0
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String(), 0
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

// Snapshot returns the pooler's current figures. It takes the proxy's and
// the pools' locks briefly and asks each loop for a report of its clients
// (a round trip through its inbox); call it from monitoring, not per
// message, and never from a loop.
func (p *Proxy) Snapshot() Snapshot {
	snap := Snapshot{Taken: time.Now()}
	p.mu.Lock()
	pools := make([]*pool, 0, len(p.pools))
	for _, pl := range p.pools {
		pools = append(pools, pl)
	}
	clients := make([]*clientConn, 0, len(p.clients))
	for c := range p.clients {
		clients = append(clients, c)
	}
	p.mu.Unlock()
	sort.Slice(pools, func(i, j int) bool {
		if pools[i].key.database != pools[j].key.database {
			return pools[i].key.database < pools[j].key.database
		}
		return pools[i].key.user < pools[j].key.user
	})
	index := make(map[*pool]int, len(pools))
	// queued are the clients in a pool's queue for a server.
	queued := map[*clientConn]bool{}
	snap.Pools = make([]PoolStats, len(pools))
	// open: each pool's count of servers when it was read (ServersUsed).
	open := make([]int, len(pools))
	paused, pausedDBs := p.pausedNow()
	snap.Paused, snap.PausedDatabases = paused, pausedDBs
	for i, pl := range pools {
		index[pl] = i
		ps := &snap.Pools[i]
		ps.Database, ps.User, ps.Mode = pl.key.database, pl.key.user, p.cfg.Mode
		ps.Paused = paused || contains(pausedDBs, pl.key.database)
		pl.lock()
		ps.Size = pl.size
		ps.ServersIdle = len(pl.idle)
		open[i] = pl.open
		ps.ClientsWaiting = pl.waiters.Len()
		if w := pl.waiters.front(); w != nil {
			ps.MaxWait = snap.Taken.Sub(w.since)
		}
		for w := pl.waiters.front(); w != nil; w = w.next {
			if w.c != nil {
				queued[w.c] = true
			}
		}
		for _, s := range pl.idle {
			snap.Servers = append(snap.Servers, serverInfo(pl, s, "idle"))
		}
		pl.unlock()
		ps.ClientsWaiting += int(pl.ctr.pauseWaiting.Load())
		ps.ServersLogin = int(pl.ctr.connecting.Load())
		ps.Totals = pl.totals()
	}
	sort.Slice(clients, func(i, j int) bool { return clients[i].ctr.connected.Before(clients[j].ctr.connected) })
	// Each loop reports its own clients; a client on none (of the
	// console, or on its way to a loop) shows what its login fixed.
	views := p.clientViews()
	for _, c := range clients {
		v, ok := views[c]
		if !ok {
			if !c.ready.Load() {
				continue // logging in
			}
			v = clientView{c: c, info: c.info()}
			// Only a console client's socket may be asked from here
			// (rawIO); one on its way to a loop shows none.
			v.info.FD = -1
			if c.admin {
				v.info.FD = connFD(c.conn)
			}
		}
		ci := v.info
		s, pinned := v.server, ci.Pinned
		if s != nil {
			if _, ok := index[c.pool]; ok {
				snap.Servers = append(snap.Servers, *s)
			}
		}
		if ci.State == "idle" && queued[c] {
			ci.State = "waiting" // in the pool's queue for a server
		}
		ci.Addr, ci.Port = splitAddr(c.conn.RemoteAddr())
		ci.LocalAddr, ci.LocalPort = splitAddr(c.conn.LocalAddr())
		snap.Clients = append(snap.Clients, ci)
		if c.admin {
			snap.AdminClients++
			continue
		}
		i, ok := index[c.pool]
		if !ok {
			continue
		}
		ps := &snap.Pools[i]
		if s != nil {
			ps.ClientsActive++
			ps.ServersActive++
			if pinned {
				ps.ClientsPinned++
				ps.ServersPinned++
			}
		} else {
			ps.ClientsIdle++
		}
	}
	for i := range snap.Pools {
		ps := &snap.Pools[i]
		// Waiting clients were counted as idle above.
		ps.ClientsIdle = max(ps.ClientsIdle-ps.ClientsWaiting, 0)
		// open was read a moment before the clients: clamp.
		ps.ServersUsed = max(open[i]-ps.ServersActive-ps.ServersIdle-ps.ServersLogin, 0)
	}
	sort.SliceStable(snap.Servers, func(i, j int) bool {
		a, b := &snap.Servers[i], &snap.Servers[j]
		if a.Database != b.Database {
			return a.Database < b.Database
		}
		if a.User != b.User {
			return a.User < b.User
		}
		return a.ConnectTime.Before(b.ConnectTime)
	})
	snap.Hazards = p.Hazards()
	snap.ServersOpened = p.stats.serversOpened.Load()
	snap.ServersLost = p.stats.serversLost.Load()
	snap.LoginsRefused = p.stats.loginsRefused.Load()
	p.mu.Lock()
	snap.LoggingIn = len(p.logins)
	p.mu.Unlock()
	snap.InvalidMoves = p.stats.invalidMoves.Load()
	snap.Bridged = p.stats.bridged.Load()
	snap.Verifications = p.stats.verifications.Load()
	snap.ReachReads = p.stats.reachReads.Load()
	if w := p.cfg.Capture; w != nil {
		cs := w.Stats()
		snap.Capture = &cs
	}
	return snap
}

func serverInfo(pl *pool, s *serverConn, state string) ServerInfo {
	si := ServerInfo{
		Database: pl.key.database, User: pl.key.user, State: state,
		ConnectTime: s.created, PID: s.pid,
	}
	if state == "idle" {
		si.IdleSince = s.idleSince
		// Attached servers' maps are the client's to change.
		si.ApplicationName = s.params["application_name"]
		si.PreparedStatements = s.eng.Statements()
	}
	si.Addr, si.Port = splitAddr(s.conn.RemoteAddr())
	si.LocalAddr, si.LocalPort = splitAddr(s.conn.LocalAddr())
	si.FD = connFD(s.conn)
	return si
}

// clientViews asks every loop for its report (msgReport).
func (p *Proxy) clientViews() map[*clientConn]clientView {
	out := make(map[*clientConn]clientView)
	ch := make(chan []clientView, len(p.loops))
	for _, l := range p.loops {
		l.post(loopMsg{kind: msgReport, views: ch})
	}
	for range p.loops {
		for _, v := range <-ch {
			out[v.c] = v
		}
	}
	return out
}

// info is what the client's login fixed of its ClientInfo.
func (c *clientConn) info() ClientInfo {
	return ClientInfo{
		Database: c.database, User: c.user, ApplicationName: c.appName,
		State: "idle", ConnectTime: c.ctr.connected, Admin: c.admin, Key: c.key.pid,
	}
}

// totals reads the pool's counters.
func (p *pool) totals() PoolTotals {
	t := PoolTotals{
		ServerAssignments: p.ctr.assignments.Load(),
		Transactions:      p.ctr.xacts.Load(),
		Queries:           p.ctr.queries.Load(),
		BytesReceived:     p.ctr.recv.Load(),
		BytesSent:         p.ctr.sent.Load(),
		XactTimeUs:        p.ctr.xactTimeUs.Load(),
		QueryTimeUs:       p.ctr.queryTimeUs.Load(),
		WaitTimeUs:        p.ctr.waitTimeUs.Load(),
		Waits:             p.ctr.waits.Load(),
		WaitCounts:        make([]int64, len(p.ctr.waitCounts)),
		ClientParses:      p.stats.clientParses.Load(),
		ServerParses:      p.stats.serverParses.Load(),
		Binds:             p.stats.binds.Load(),
		Evictions:         p.stats.evictions.Load(),
	}
	for i := range p.ctr.waitCounts {
		t.WaitCounts[i] = p.ctr.waitCounts[i].Load()
	}
	return t
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// statsPeriod is how often the janitor samples the counters for SHOW
// STATS' averages (PgBouncer's default stats_period).
const statsPeriod = time.Minute

// statsSamples are the per-database totals at the last two samples, a
// stats period apart: the janitor replaces them whole (sampleStats), SHOW
// STATS reads them.
type statsSamples struct {
	pair atomic.Pointer[samplePair]
}

// samplePair is the last two samples (prev nil until there are two).
type samplePair struct{ prev, last *statsSample }

type statsSample struct {
	at  time.Time
	dbs map[string]PoolTotals
}

// dbTotals sums the pools' counters per database.
func (p *Proxy) dbTotals() map[string]PoolTotals {
	out := make(map[string]PoolTotals)
	for _, pl := range p.matchingPools("") {
		t := out[pl.key.database]
		u := pl.totals()
		t.ServerAssignments += u.ServerAssignments
		t.Transactions += u.Transactions
		t.Queries += u.Queries
		t.BytesReceived += u.BytesReceived
		t.BytesSent += u.BytesSent
		t.XactTimeUs += u.XactTimeUs
		t.QueryTimeUs += u.QueryTimeUs
		t.WaitTimeUs += u.WaitTimeUs
		t.Waits += u.Waits
		t.ClientParses += u.ClientParses
		t.ServerParses += u.ServerParses
		t.Binds += u.Binds
		t.Evictions += u.Evictions
		out[pl.key.database] = t
	}
	return out
}

// sampleStats takes a sample when a stats period has passed since the
// last one (the janitor calls it every second).
func (p *Proxy) sampleStats(now time.Time) {
	ss := &p.samples
	cur := ss.pair.Load()
	if cur != nil && now.Sub(cur.last.at) < statsPeriod {
		return
	}
	last := &statsSample{at: p.started} // the first sample: the period before it began at zero
	if cur != nil {
		last = cur.last
	}
	ss.pair.Store(&samplePair{prev: last, last: &statsSample{at: now, dbs: p.dbTotals()}})
}

// statsWindow returns the totals at the start and end of the last
// complete stats period and its length; before one has passed, the window
// runs from the start (zero) to now.
func (p *Proxy) statsWindow(now map[string]PoolTotals) (from, to map[string]PoolTotals, d time.Duration) {
	if pr := p.samples.pair.Load(); pr != nil && pr.last.at.Sub(pr.prev.at) >= statsPeriod/2 {
		return pr.prev.dbs, pr.last.dbs, pr.last.at.Sub(pr.prev.at)
	}
	return nil, now, time.Since(p.started)
}
