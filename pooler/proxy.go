package pooler

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// Proxy is a running pooler: a listener, its clients and its pools.
type Proxy struct {
	cfg Config
	// limits are cfg's limits for the engine, shared by the clients.
	limits   engine.Limits
	upstream *pgconn.Config
	// clientTLS is the TLS configuration towards clients (nil: TLS is
	// declined); RELOAD replaces it.
	clientTLS atomic.Pointer[tls.Config]
	auth      *authenticator
	log       *slog.Logger

	// ctx ends when the proxy is shut down for good.
	ctx    context.Context
	cancel context.CancelFunc

	ln      net.Listener
	closing atomic.Bool
	wg      sync.WaitGroup

	mu      sync.Mutex
	pools   map[poolKey]*pool
	clients map[*clientConn]struct{}

	// keys are the connected clients' cancel keys: each is stored once
	// and deleted once by its own client, and read by CancelRequests.
	keys sync.Map // cancelKey → *clientConn

	hazards hazards
	// locals are the clients' local addresses (Proxy.localAddr).
	locals sync.Map
	// params are the clients' tracked parameter sets (params.go).
	params paramSets
	// routines are the verdicts on the routines clients call (routines.go).
	routines routineCache
	// trust is Config.TrustedRoutines, parsed.
	trust routineTrust

	// pause is the admin console's PAUSE; admins its admin users
	// (admin.go).
	pause pauseState
	// disabled are the databases DISABLE refused new logins to: a map
	// never changed once published (setDisabled).
	disabled atomic.Pointer[map[string]bool]
	// started is when New made the proxy; samples are the counters at
	// the last stats periods (stats.go).
	started time.Time
	samples statsSamples
	// metricsLn and metricsSrv serve Config.MetricsHandler
	// (metricsserver.go).
	metricsLn  net.Listener
	metricsSrv atomic.Pointer[http.Server]

	stats struct {
		serversOpened, serversLost, attaches atomic.Int64
		// invalidMoves counts refused client moves (clientConn.move).
		invalidMoves atomic.Int64
		// verifications counts reads of servers' session state (verify).
		verifications atomic.Int64
		// reachReads counts reads of what statements reach (reach.go).
		reachReads atomic.Int64
		// loginsRefused counts connections refused by MaxLoginClients.
		loginsRefused atomic.Int64
		// bridged counts the sockets a loop bridged because its epoll
		// set refused them (evLoop.take).
		bridged atomic.Int64
	}
	// exitWait is backendExitWait (in nanoseconds), a field so that
	// tests can change it.
	exitWait atomic.Int64
	// loops are the event loops (evloop.go), nil when the goroutine
	// relay does all; nextLoop picks one for each client.
	loops    []*evLoop
	nextLoop atomic.Uint32
	// live is the running configuration, which RELOAD and SET replace;
	// cfg is the one the proxy started with.
	live liveConfig
	// unixLn listens on Config.UnixSocketDir (nil: not configured).
	unixLn net.Listener
	// logins are the connections still logging in, with their client
	// address ("" for a Unix socket), and loginsFrom how many each
	// address has (under mu); loginWarned is when refusing one was last
	// logged (UnixNano).
	logins      map[net.Conn]string
	loginsFrom  map[string]int
	loginWarned atomic.Int64
	// failures are the recent failed logins of client addresses and of
	// user names (under mu: loginEnded).
	failures map[string]failures
	// dbCaps and userCaps count server connections per database and per
	// user for max_db_connections and max_user_connections (caps.go;
	// under mu).
	dbCaps, userCaps map[string]*connCap
}

// liveConfig is the running configuration: one snapshot, never changed
// in place, that RELOAD and SET replace as a whole (apply). Everything a
// RELOAD or SET may change is read from it, without a lock.
type liveConfig struct{ atomic.Pointer[Config] }

func (l *liveConfig) queryWaitTimeout() time.Duration { return l.Load().QueryWaitTimeout }
func (l *liveConfig) idleTimeout() time.Duration      { return l.Load().ServerIdleTimeout }
func (l *liveConfig) lifetime() time.Duration         { return l.Load().ServerLifetime }
func (l *liveConfig) connect() time.Duration          { return l.Load().ServerConnectTimeout }
func (l *liveConfig) retry() time.Duration            { return l.Load().ServerLoginRetry }
func (l *liveConfig) login() time.Duration            { return l.Load().ClientLoginTimeout }

// waitLimit is how long a client may wait for a server: the query wait
// timeout, or the query timeout when it is set and shorter (as
// PgBouncer's query_timeout also ends a wait).
func (l *liveConfig) waitLimit() time.Duration {
	c := l.Load()
	if q := c.QueryTimeout; q > 0 && q < c.QueryWaitTimeout {
		return q
	}
	return c.QueryWaitTimeout
}

// New checks cfg and returns a Proxy that is not listening yet.
func New(cfg Config) (*Proxy, error) {
	c := cfg.withDefaults()
	up, err := c.validate()
	if err != nil {
		return nil, err
	}
	if c.dial != nil {
		up.DialFunc = c.dial
	}
	up.DialFunc = rawDial(up.DialFunc, c.Relay == RelayBridged)
	trust, err := parseTrust(c.TrustedRoutines)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		trust:      trust,
		cfg:        c,
		limits:     engine.Limits{MaxMessage: c.MaxMessageSize, MaxPrepared: c.MaxPreparedStatements, MaxOwed: c.MaxOwedAnswers},
		upstream:   up,
		auth:       newAuthenticator(c.AuthType, c.Users),
		log:        c.Logger,
		ctx:        ctx,
		cancel:     cancel,
		pools:      make(map[poolKey]*pool),
		clients:    make(map[*clientConn]struct{}),
		logins:     make(map[net.Conn]string),
		loginsFrom: make(map[string]int),
		failures:   make(map[string]failures),
	}
	p.started = time.Now()
	p.clientTLS.Store(serverTLS(c.ClientTLSMode, c.ClientTLS))
	live := c
	p.live.Store(&live)
	p.exitWait.Store(int64(backendExitWait))
	if c.usesAuthQuery() {
		p.auth.lookup = p.authQuery
	}
	return p, nil
}

// Listen opens the listening socket.
func (p *Proxy) Listen() error {
	var lc net.ListenConfig
	if p.cfg.SoReusePort {
		lc.Control = reusePort
	}
	ln, err := lc.Listen(context.Background(), "tcp", p.cfg.Listen)
	if err != nil {
		return err
	}
	if p.cfg.UnixSocketDir != "" {
		if p.unixLn, err = listenUnix(p.cfg.UnixSocketDir, ln.Addr()); err != nil {
			ln.Close()
			return err
		}
	}
	err = nil
	if p.loops == nil {
		err = p.startLoops(p.cfg.Loops)
	}
	if err == nil {
		err = p.listenMetrics()
	}
	if err != nil {
		ln.Close()
		if p.unixLn != nil {
			p.unixLn.Close()
		}
		p.stopLoops()
		return err
	}
	p.ln = ln
	return nil
}

// Addr is the listening address (after Listen).
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Serve accepts clients until ctx ends or Shutdown is called, then shuts
// down gracefully and returns nil; it returns an error if accepting fails
// for another reason.
func (p *Proxy) Serve(ctx context.Context) error {
	if p.ln == nil {
		if err := p.Listen(); err != nil {
			return err
		}
	}
	p.log.Info("proxy listening", "listen", p.ln.Addr().String(), "mode", string(p.cfg.Mode),
		"pool_size", p.cfg.PoolSize, "auth_type", string(p.cfg.AuthType))
	p.wg.Add(1)
	go p.janitor()
	p.serveMetrics()
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout+5*time.Second)
		defer cancel()
		p.Shutdown(sctx)
	})
	defer stop()
	if p.unixLn != nil {
		p.log.Info("proxy listening", "unix_socket", p.unixLn.Addr().String())
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := p.accept(p.unixLn); err != nil {
				p.log.Error("accepting on the Unix socket failed", "err", err)
			}
		}()
	}
	err := p.accept(p.ln)
	if err == nil {
		<-p.ctx.Done() // Shutdown has finished
		p.wg.Wait()
	}
	return err
}

// listenUnix listens on the Unix-domain socket PostgreSQL's clients look
// for in dir for the TCP listener's port (.s.PGSQL.PORT), so that
// psql -h dir -p PORT works as with PgBouncer. A socket file left by a
// process that is gone is replaced; one that answers is an error.
func listenUnix(dir string, tcp net.Addr) (net.Listener, error) {
	port := 0
	if a, ok := tcp.(*net.TCPAddr); ok {
		port = a.Port
	}
	path := filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", port))
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("unix socket %s: another process listens on it", path)
		}
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o777); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// accept serves the clients of ln until it is closed: nil when Shutdown
// closed it, the error when accepting failed for another reason.
func (p *Proxy) accept(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if p.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				p.log.Warn("accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		if !p.startLogin(nc) {
			continue
		}
		p.wg.Add(1)
		go p.serveClient(nc) // it calls p.wg.Done
	}
}

// startLogin counts a new connection in as logging in, or refuses it at
// once when MaxLoginClients connections are logging in already: sockets
// that connect and send nothing hold one descriptor and goroutine each
// until the login timeout, and must not be able to take all of them.
func (p *Proxy) startLogin(nc net.Conn) bool {
	addr := clientHost(nc)
	live := p.live.Load()
	p.mu.Lock()
	why := ""
	switch {
	case p.closing.Load():
		why = "the pooler is shutting down"
	case len(p.logins) >= live.MaxLoginClients:
		why = "too many connections logging in (max_login_clients)"
	case addr != "" && p.loginsFrom[addr] >= live.MaxLoginsPerAddress:
		why = "too many connections logging in from this address (max_logins_per_address)"
	}
	if why != "" {
		p.mu.Unlock()
		p.stats.loginsRefused.Add(1)
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		nc.Write(fatal(codeTooManyConnections, "%s", why))
		nc.Close()
		if now := time.Now().UnixNano(); now-p.loginWarned.Load() > int64(10*time.Second) {
			p.loginWarned.Store(now)
			p.log.Warn("connections refused", "why", why, "addr", addr)
		}
		return false
	}
	p.logins[nc] = addr
	if addr != "" {
		p.loginsFrom[addr]++
	}
	p.mu.Unlock()
	return true
}

// endLogin counts a connection out of the logging-in ones.
func (p *Proxy) endLogin(nc net.Conn) {
	p.mu.Lock()
	if addr, ok := p.logins[nc]; ok && addr != "" {
		if p.loginsFrom[addr]--; p.loginsFrom[addr] <= 0 {
			delete(p.loginsFrom, addr)
		}
	}
	delete(p.logins, nc)
	p.mu.Unlock()
}

// clientHost is the IP address of a TCP client, "" for a Unix socket.
func clientHost(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// failures are the failed logins in a row of one client address or user
// name, and the last one's time.
type failures struct {
	n    int
	last time.Time
}

// failuresForget is how long after its last failed login an address or a
// user starts afresh.
const failuresForget = time.Minute

// failuresFree is how many failed logins in a row are answered at once.
const failuresFree = 3

// loginEnded counts the end of a login of user from addr and returns how
// long a failed one's answer is held back: nothing for the first few
// failures in a row of either, then 100 ms, doubling up to
// LoginFailureBackoff, so that guessing passwords from one address, or
// for one user from many, slows down while the failures go on (the
// connection holds its login slot meanwhile). A success ends the runs of
// both.
func (p *Proxy) loginEnded(addr, user string, ok bool) time.Duration {
	limit := p.live.Load().LoginFailureBackoff
	if limit <= 0 {
		return 0
	}
	now := time.Now()
	keys := [2]string{"addr " + addr, "user " + user}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		delete(p.failures, keys[0])
		delete(p.failures, keys[1])
		return 0
	}
	if len(p.failures) > 100_000 {
		for k, f := range p.failures {
			if now.Sub(f.last) > failuresForget {
				delete(p.failures, k)
			}
		}
	}
	worst := 0
	for _, k := range keys {
		f := p.failures[k]
		if now.Sub(f.last) > failuresForget {
			f.n = 0
		}
		f.n++
		f.last = now
		p.failures[k] = f
		worst = max(worst, f.n)
	}
	if worst <= failuresFree {
		return 0
	}
	d := 100 * time.Millisecond << min(worst-failuresFree-1, 20)
	return min(d, limit)
}

// Shutdown stops accepting clients, closes idle clients, lets attached
// clients finish their transactions until the shutdown timeout (or ctx)
// runs out, and then closes every connection.
func (p *Proxy) Shutdown(ctx context.Context) error {
	if p.closing.Swap(true) {
		<-p.ctx.Done()
		return nil
	}
	p.log.Info("proxy shutting down")
	if p.ln != nil {
		p.ln.Close()
	}
	if p.unixLn != nil {
		p.unixLn.Close() // removes the socket file
	}
	p.stopMetrics(ctx)
	p.mu.Lock()
	for nc := range p.logins {
		nc.Close() // a login in progress ends here, not at its timeout
	}
	clients := make([]*clientConn, 0, len(p.clients))
	for c := range p.clients {
		clients = append(clients, c)
	}
	p.mu.Unlock()
	for _, l := range p.loops {
		l.post(loopMsg{kind: msgShutdown})
	}
	for _, c := range clients {
		if c.loop.Load() != nil {
			continue // its loop closes it
		}
		// A console client: its goroutine sends the FATAL when it reads
		// the end of the stream, as a loop does (vanish).
		if c.ready.Load() && c.admin && c.kill.CompareAndSwap(nil, ptrTo(fatal(codeAdminShutdown, "the pooler is shutting down"))) {
			c.setEndReason("pooler shutdown")
			c.shutRead()
		}
	}
	deadline := time.NewTimer(p.cfg.ShutdownTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for p.clientCount() > 0 {
		select {
		case <-tick.C:
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	p.mu.Lock()
	for c := range p.clients {
		// A loop's clients are closed as it stops (below), a client on
		// its way to a loop by the loop or on its login goroutine
		// (evLoop.post); a console client is closed here.
		if c.ready.Load() && c.admin {
			c.raw.abort()
		}
	}
	p.mu.Unlock()
	for _, pl := range p.matchingPools("") {
		pl.closeIdle()
	}
	for _, l := range p.loops {
		l.post(loopMsg{kind: msgStop})
	}
	p.log.Info("proxy stopped")
	p.cancel()
	return nil
}

func (p *Proxy) clientCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.clients)
}

// addClient counts a client in, unless max_client_conn is reached.
func (p *Proxy) addClient(c *clientConn, admin bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := int64(p.live.Load().MaxClientConn)
	if admin {
		limit++
	}
	if int64(len(p.clients)) >= limit {
		return false
	}
	p.clients[c] = struct{}{}
	c.ctr.connected = time.Now()
	return true
}

func (p *Proxy) removeClient(c *clientConn) {
	p.mu.Lock()
	if c.pooled {
		c.pooled = false
		c.pool.clients--
		c.pool.lastUsed = time.Now()
	}
	delete(p.clients, c)
	p.mu.Unlock()
	p.keys.CompareAndDelete(c.key, c)
}

// poolFor returns the pool of (database, user), making it on first use.
// The server password is the upstream URL's when the user is the URL's
// user, otherwise the user's plain-text password from the auth file, and
// otherwise none.
func (p *Proxy) poolFor(c *clientConn) *pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := poolKey{database: c.database, user: c.user}
	pl, ok := p.pools[k]
	if !ok {
		pl = newPool(p, k, p.serverPassword(c.user))
		p.pools[k] = pl
	}
	pl.clients++
	c.pooled = true
	return pl
}

// enforceClientTimeouts has each loop look at its clients' timeouts
// (evLoop.timeouts) at each of the janitor's ticks: each loop arms a timer
// for its clients' next deadline, and the tick only catches a deadline a
// RELOAD brought forward.
func (p *Proxy) enforceClientTimeouts() {
	if !p.live.Load().clientTimeouts() {
		return
	}
	for _, l := range p.loops {
		l.post(loopMsg{kind: msgTimeouts})
	}
}

// closeTimedOut closes a client whose timeout ran out: it gets the FATAL
// when its loop reads the end of its stream (vanish).
func (c *clientConn) closeTimedOut(kind string) {
	if c.kill.CompareAndSwap(nil, ptrTo(fatal(codeProtocolViolation, "%s", kind))) {
		c.proxy.log.Info("client closed: "+kind, "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		c.shutRead()
	}
}

func ptrTo[T any](v T) *T { return &v }

// poolForgetAfter is how long a pool that has servers no more and no
// client is kept (with its statistics) before it is removed, as
// PgBouncer's autodb_idle_timeout; a pool that never logged a server in
// (a database or user the server refused) goes at the next sweep.
const poolForgetAfter = time.Hour

// forgetPools removes the pools that have no client, no server and no
// waiter, unused for poolForgetAfter or never connected, so that logins to
// made-up database names leave nothing behind (SHOW POOLS, metrics).
func (p *Proxy) forgetPools(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, pl := range p.pools {
		if pl.clients > 0 {
			continue
		}
		pl.lock()
		empty := pl.open == 0 && len(pl.idle) == 0 && pl.waiters.Len() == 0 &&
			(pl.defaults == nil || now.Sub(pl.lastUsed) > poolForgetAfter)
		if empty {
			pl.closed = true
		}
		pl.unlock()
		if empty {
			delete(p.pools, k)
			pl.dbCap.remove(pl)
			pl.userCap.remove(pl)
		}
	}
}

// serverPassword is the password a pool of user logs in to the server
// with: the upstream URL's for its user, else the user's plain-text
// password in the auth file, else none.
func (p *Proxy) serverPassword(user string) string {
	if user == p.upstream.User {
		return p.upstream.Password
	}
	if s, ok := p.live.Load().Users[user]; ok && !isMD5Secret(s) && !isSCRAMSecret(s) {
		return s
	}
	return ""
}

// database returns the allow-list entry that admits a client's database
// name: its own, else "*". Without an allow-list every name is admitted
// as itself.
func (p *Proxy) database(name string) (Database, bool) {
	dbs := p.live.Load().Databases
	if len(dbs) == 0 {
		return Database{}, true
	}
	if db, ok := dbs[name]; ok {
		return db, true
	}
	db, ok := dbs["*"]
	return db, ok
}

// admits reports whether a client may connect to database name.
func (p *Proxy) admits(name string) bool {
	_, ok := p.database(name)
	return ok
}

// serverDatabase returns the server database of the pools of a client
// database name (an alias names another).
func (p *Proxy) serverDatabase(name string) string {
	if db, ok := p.database(name); ok && db.DBName != "" {
		return db.DBName
	}
	return name
}

// poolSize returns the size of the pools of database name.
func (p *Proxy) poolSize(name string) int {
	if db, ok := p.database(name); ok && db.PoolSize > 0 {
		return db.PoolSize
	}
	return p.live.Load().PoolSize
}

func isSCRAMSecret(s string) bool { return len(s) > 14 && s[:14] == "SCRAM-SHA-256$" }

// janitor closes idle and old servers once a second.
func (p *Proxy) janitor() {
	defer p.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, pl := range p.matchingPools("") {
				pl.reap(now)
			}
			p.forgetPools(now)
			p.wakeCaps()
			p.enforceClientTimeouts()
			p.sampleStats(now)
		}
	}
}
