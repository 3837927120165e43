package pooler

// TestSoak is a seeded, randomized soak of the transaction pooler against
// a real PostgreSQL: many pgx and raw-protocol clients run random scripts
// (autocommit statements, transactions, quiet gaps while idle, attached and
// pinned, long queries, batches and pipelines, every kind of session
// state, COPY, cancels, errors, clients that vanish, waiters that time
// out) and the soak checks, while it runs and at the end, that
//
//  1. every request is answered (or cleanly refused) before a deadline;
//  2. a client only ever sees its own session state;
//  3. every acknowledged commit is in the database, no rolled-back write is;
//  4. every server goes back to its pool, and the proxy's goroutines and
//     descriptors are gone after it stops.
//
// Replay a run with -soak.seed N (the seed is printed at the start and in
// every failure); the scripts depend only on the seed, the timing of the
// clients does not, so a replay is close to, not exactly, the same run.
// POOLER_SOAK=10m soaks for that long over all 18 configurations (several
// seeds in sequence); without it the soak takes about a minute over a
// seed-chosen subset that covers both relays, all pool sizes and both
// policies.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
)

var soakSeedFlag = flag.Int64("soak.seed", 0, "TestSoak: replay this seed (0: a random one)")

// soakRole is the role clients SET ROLE to.
const soakRole = "soak_role"

// soakConfig is one configuration of the proxy and its clients.
type soakConfig struct {
	relay   Relay
	loops   int
	pool    int
	policy  Policy
	clients int
	wait    time.Duration // QueryWaitTimeout
	nudge   time.Duration // nudgeAfter (0: the default)
	run     time.Duration // how long the clients start new ops
	long    bool          // long mode: longer gaps and sleeps
}

func (sc soakConfig) name() string {
	r := "goroutine"
	if sc.relay == RelayLoop {
		r = fmt.Sprintf("loop%d", sc.loops)
	}
	return fmt.Sprintf("%s/pool%d/%s", r, sc.pool, sc.policy)
}

func TestSoak(t *testing.T) {
	if os.Getenv("POOLER_TEST_RELAY") != "" || os.Getenv("POOLER_TEST_LOOPS") != "" {
		t.Skip("TestSoak runs the goroutine relay and the loop relay with 1 and 2 loops itself in the main run; skipped under POOLER_TEST_RELAY/POOLER_TEST_LOOPS")
	}
	srv := pgtest.Shared(t)
	seed := *soakSeedFlag
	if seed == 0 {
		seed = rand.Int64N(1<<40) + 1
	}
	total, long := time.Duration(0), false
	if v := os.Getenv("POOLER_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("POOLER_SOAK=%q: %v", v, err)
		}
		total, long = d, true
	}
	mode := "short mode (POOLER_SOAK=10m soaks longer)"
	if long {
		mode = fmt.Sprintf("POOLER_SOAK=%v", total)
	}
	t.Logf("soak seed %d (replay with -soak.seed %d), %s", seed, seed, mode)

	ctx := testCtx(t, time.Minute)
	if err := srv.Exec(ctx, `DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '`+soakRole+`') THEN CREATE ROLE `+soakRole+`; END IF;
		END $$;
		CREATE TABLE IF NOT EXISTS soak_log (run text, client int, seq int, PRIMARY KEY (run, client, seq));
		GRANT ALL ON soak_log TO `+soakRole+`;
		CREATE OR REPLACE FUNCTION soak_fn_owner(o text) RETURNS void LANGUAGE plpgsql AS $f$BEGIN PERFORM set_config('soak.owner', o, false); END$f$;
		CREATE OR REPLACE FUNCTION soak_fn_role() RETURNS void LANGUAGE plpgsql AS $f$BEGIN EXECUTE 'SET ROLE `+soakRole+`'; END$f$;
		CREATE OR REPLACE FUNCTION soak_fn_lock(k bigint) RETURNS void LANGUAGE plpgsql AS $f$BEGIN PERFORM pg_advisory_lock(k); END$f$;
		CREATE OR REPLACE FUNCTION soak_fn_listen(ch text) RETURNS void LANGUAGE plpgsql AS $f$BEGIN EXECUTE 'LISTEN ' || quote_ident(ch); END$f$;
		CREATE OR REPLACE FUNCTION soak_fn_temp(t text) RETURNS void LANGUAGE plpgsql AS $f$BEGIN EXECUTE format('CREATE TEMP TABLE %I (v text)', t); END$f$;
		CREATE OR REPLACE FUNCTION soak_fn_plain(a int) RETURNS int LANGUAGE sql AS 'SELECT a + 1';
		GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO `+soakRole); err != nil {
		t.Fatal(err)
	}

	type relayKind struct {
		relay Relay
		loops int
	}
	relays := []relayKind{{RelayGoroutine, 1}, {RelayLoop, 1}, {RelayLoop, 2}}
	pools := []int{1, 2, 20}
	policies := []Policy{PolicyPreserve, PolicyReset}

	rounds, perConfig := 1, 7*time.Second
	if long {
		// All 18 configurations per round, at most 20s each, several
		// rounds (each with its own seed) when the soak is long.
		perRound := 18 * 20 * time.Second
		rounds = int((total + perRound - 1) / perRound)
		perConfig = total / time.Duration(18*rounds)
		if perConfig < 5*time.Second {
			perConfig = 5 * time.Second
		}
	}
	for round := range rounds {
		rs := seed + int64(round)
		rng := rand.New(rand.NewPCG(uint64(rs), 0x50a4))
		var cfgs []soakConfig
		mk := func(rk relayKind, pool int, pol Policy) soakConfig {
			sc := soakConfig{relay: rk.relay, loops: rk.loops, pool: pool, policy: pol, run: perConfig, long: long}
			switch pool {
			case 1:
				sc.clients = 4 + rng.IntN(4)
			case 2:
				sc.clients = 8 + rng.IntN(6)
			default:
				sc.clients = 22 + rng.IntN(9)
			}
			sc.wait = []time.Duration{2 * time.Second, 3 * time.Second, 5 * time.Second}[rng.IntN(3)]
			if rng.IntN(3) < 2 {
				sc.nudge = 50 * time.Millisecond
			}
			return sc
		}
		if long {
			for _, rk := range relays {
				for _, pool := range pools {
					for _, pol := range policies {
						cfgs = append(cfgs, mk(rk, pool, pol))
					}
				}
			}
			rng.Shuffle(len(cfgs), func(i, j int) { cfgs[i], cfgs[j] = cfgs[j], cfgs[i] })
		} else {
			// Six configurations: each relay with two pool sizes and both
			// policies, each pool size twice.
			perm := rng.Perm(3)
			flip := rng.IntN(2)
			for r, rk := range relays {
				cfgs = append(cfgs,
					mk(rk, pools[perm[r]], policies[(r+flip)%2]),
					mk(rk, pools[perm[(r+1)%3]], policies[(r+flip+1)%2]))
			}
		}
		t.Logf("round %d: seed %d, %d configurations of %v", round, rs, len(cfgs), perConfig)
		for _, sc := range cfgs {
			name := sc.name()
			if rounds > 1 {
				name = fmt.Sprintf("r%d/%s", round, name)
			}
			t.Run(name, func(t *testing.T) { soakOne(t, srv, sc, rs) })
		}
	}
}

// Row outcomes in soak_log.
type soakOutcome uint8

const (
	soakPending soakOutcome = iota
	soakCommitted
	soakRolledBack
	soakUnknown
)

// soakRun is one configuration's run.
type soakRun struct {
	t       *testing.T
	srv     *pgtest.Server
	sc      soakConfig
	seed    int64
	runID   string
	tp      *testProxy
	start   time.Time
	end     time.Time     // no new ops after this
	opLimit time.Duration // an op's deadline
	stopped atomic.Bool
	clients []*soakClient

	mu        sync.Mutex
	failures  int
	snapShown bool
	sigs      map[string]int // failures by signature
	rows      map[[2]int]soakOutcome
	ops       map[string]int
	errs      map[string]int
	commits   int
	rollbacks int
	unknown   int
	vanishes  int
	cancels   int
	waitTOs   int
	connects  int
	notes     int
}

func soakHash(seed int64, s string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, s)
	return h.Sum64()
}

func soakOne(t *testing.T, srv *pgtest.Server, sc soakConfig, seed int64) {
	cfgSeed := soakHash(seed, sc.name())
	r := &soakRun{t: t, srv: srv, sc: sc, seed: seed, rows: map[[2]int]soakOutcome{}, ops: map[string]int{}, errs: map[string]int{}}
	r.runID = fmt.Sprintf("%d/%s/%d", seed, sc.name(), time.Now().UnixNano())
	maxSleep := sc.maxSleep()
	r.opLimit = sc.wait + maxSleep + 20*time.Second
	t.Logf("seed %d config %s: %d clients, query_wait_timeout %v, nudgeAfter %v, op deadline %v",
		seed, sc.name(), sc.clients, sc.wait, sc.nudge, r.opLimit)

	direct := directConn(t, srv)
	runtime.GC()
	baseG, baseFD := runtime.NumGoroutine(), soakFDs()
	// Registered before startProxy, so it runs after the proxy's cleanup
	// has shut it down.
	t.Cleanup(func() { r.checkLeaks(baseG, baseFD) })

	tp := startProxy(t, srv, Config{PoolSize: sc.pool, QueryWaitTimeout: sc.wait, Relay: sc.relay,
		Loops: sc.loops, OnSessionState: sc.policy, Classifier: sessionstate.New()})
	if sc.nudge > 0 {
		tp.nudgeAfter.Store(int64(sc.nudge))
	}
	r.tp = tp
	r.start = time.Now()
	r.end = r.start.Add(sc.run)

	var wg sync.WaitGroup
	for i := range sc.clients {
		c := &soakClient{r: r, id: i + 1, name: fmt.Sprintf("c%d", i+1),
			rng: rand.New(rand.NewPCG(cfgSeed, uint64(i+1)))}
		c.raw = c.rng.IntN(10) < 3
		r.clients = append(r.clients, c)
		wg.Add(1)
		go func() { defer wg.Done(); c.loop() }()
	}
	// The watchdog: an op past its context deadline and grace has hung
	// the client itself.
	wdDone := make(chan struct{})
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-wdDone:
				return
			case <-tick.C:
			}
			for _, c := range r.clients {
				c.mu.Lock()
				op, since, reported := c.cur, time.Since(c.opStart), c.watchdogged
				if op != "" && since > r.opLimit+10*time.Second && !reported {
					c.watchdogged = true
				} else {
					op = ""
				}
				c.mu.Unlock()
				if op != "" {
					r.fail(c, true, "watchdog: op %q running for %v, beyond its context deadline", op, since.Round(time.Millisecond))
				}
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(sc.run + 2*r.opLimit + 30*time.Second):
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 1)
		t.Errorf("seed %d config %s: clients did not finish\n%s\n%s", seed, sc.name(), r.formatSnapshot(), buf.String())
		r.stopped.Store(true)
		<-done
	}
	close(wdDone)

	// 4. Every server back in its pool.
	ok := waitFor(5*time.Second, func() bool {
		snap := tp.Snapshot()
		if len(snap.Clients) != 0 {
			return false
		}
		for _, ps := range snap.Pools {
			open := ps.ServersActive + ps.ServersIdle + ps.ServersLogin + ps.ServersUsed
			if ps.ClientsActive+ps.ClientsWaiting+ps.ServersActive+ps.ServersUsed+ps.ServersPinned != 0 || open > ps.Size {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Errorf("seed %d config %s: servers not back in the pool after the clients left\n%s", seed, sc.name(), r.formatSnapshot())
	}
	cctx := testCtx(t, 30*time.Second)
	// No session state left on the (idle) servers, no busy backend.
	var locks, temps, busy int
	if err := direct.QueryRow(cctx, `SELECT
		(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
		(SELECT count(*) FROM pg_class WHERE relpersistence = 't' AND relname LIKE 'soak_tmp_%'),
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle')`).
		Scan(&locks, &temps, &busy); err != nil {
		t.Error(err)
	}
	if locks+temps+busy != 0 {
		t.Errorf("seed %d config %s: after the clients left, the servers hold %d advisory locks and %d soak temp tables, %d backends are not idle\n%s",
			seed, sc.name(), locks, temps, busy, r.formatSnapshot())
	}
	// 3. Acknowledged commits are in, rolled-back writes are not.
	r.checkRows(cctx, direct)
	r.summary()
	if _, err := direct.Exec(cctx, "DELETE FROM soak_log WHERE run = $1", r.runID); err != nil {
		t.Error(err)
	}
	direct.Close(cctx)
}

func (sc soakConfig) maxSleep() time.Duration {
	if sc.long {
		return 3 * time.Second
	}
	return 1200 * time.Millisecond
}

// gap is a quiet gap: mostly short, some longer than nudgeAfter.
func (sc soakConfig) gap(rng *rand.Rand) time.Duration {
	limit := 1200 * time.Millisecond
	if sc.long {
		limit = 3 * time.Second
	}
	switch n := rng.IntN(10); {
	case n < 5:
		return time.Duration(rng.IntN(30)) * time.Millisecond
	case n < 8:
		return time.Duration(40+rng.IntN(300)) * time.Millisecond
	default:
		return time.Duration(300+rng.IntN(int(limit/time.Millisecond)-299)) * time.Millisecond
	}
}

func soakFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// checkLeaks runs after the proxy stopped: its goroutines and descriptors
// must be gone.
func (r *soakRun) checkLeaks(baseG, baseFD int) {
	t := r.t
	var g, fd int
	ok := waitFor(3*time.Second, func() bool {
		runtime.GC()
		g, fd = runtime.NumGoroutine(), soakFDs()
		return g <= baseG+3 && fd <= baseFD+2
	})
	if !ok {
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 1)
		ents, _ := os.ReadDir("/proc/self/fd")
		var fds []string
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			fds = append(fds, e.Name()+"→"+l)
		}
		t.Errorf("seed %d config %s: after shutdown %d goroutines (before %d), %d descriptors (before %d)\nfds: %s\n%s",
			r.seed, r.sc.name(), g, baseG, fd, baseFD, strings.Join(fds, " "), buf.String())
	}
}

func (r *soakRun) checkRows(ctx context.Context, direct *pgx.Conn) {
	rows, err := direct.Query(ctx, "SELECT client, seq FROM soak_log WHERE run = $1", r.runID)
	if err != nil {
		r.t.Error(err)
		return
	}
	found := map[[2]int]int{}
	for rows.Next() {
		var c, s int
		if err := rows.Scan(&c, &s); err != nil {
			r.t.Error(err)
			return
		}
		found[[2]int{c, s}]++
	}
	if err := rows.Err(); err != nil {
		r.t.Error(err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var bad []string
	for k, o := range r.rows {
		n := found[k]
		switch {
		case o == soakCommitted && n != 1:
			bad = append(bad, fmt.Sprintf("acked commit c%d seq %d found %d times", k[0], k[1], n))
		case o == soakRolledBack && n != 0:
			bad = append(bad, fmt.Sprintf("rolled-back write c%d seq %d is in the table", k[0], k[1]))
		case o == soakPending:
			bad = append(bad, fmt.Sprintf("c%d seq %d left pending by the soak", k[0], k[1]))
		}
	}
	for k := range found {
		if _, ok := r.rows[k]; !ok {
			bad = append(bad, fmt.Sprintf("row c%d seq %d was never written", k[0], k[1]))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		if len(bad) > 30 {
			bad = append(bad[:30], fmt.Sprintf("… %d more", len(bad)-30))
		}
		r.t.Errorf("seed %d config %s: soak_log does not match the acknowledged outcomes:\n  %s\n%s",
			r.seed, r.sc.name(), strings.Join(bad, "\n  "), r.clientLogs(bad))
	}
}

// clientLogs returns the op logs of the clients named in lines.
func (r *soakRun) clientLogs(lines []string) string {
	var b strings.Builder
	seen := map[int]bool{}
	for _, l := range lines {
		var id int
		if i := strings.Index(l, " c"); i >= 0 {
			fmt.Sscanf(l[i+2:], "%d", &id)
		}
		if id == 0 || seen[id] || id > len(r.clients) || len(seen) >= 3 {
			continue
		}
		seen[id] = true
		b.WriteString(r.clients[id-1].formatLog())
	}
	return b.String()
}

func (r *soakRun) summary() {
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := make([]string, 0, len(r.ops))
	for k := range r.ops {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var ops, errs []string
	total := 0
	for _, k := range kinds {
		ops = append(ops, fmt.Sprintf("%s=%d", k, r.ops[k]))
		total += r.ops[k]
	}
	codes := make([]string, 0, len(r.errs))
	for k := range r.errs {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	for _, k := range codes {
		errs = append(errs, fmt.Sprintf("%s=%d", k, r.errs[k]))
	}
	r.t.Logf("seed %d config %s summary: %d ops (%s); commits %d rows, rolled back %d, unknown %d; errors %s; vanishes %d, cancels %d, wait timeouts %d, connects %d, notifications %d",
		r.seed, r.sc.name(), total, strings.Join(ops, " "), r.commits, r.rollbacks, r.unknown,
		strings.Join(errs, " "), r.vanishes, r.cancels, r.waitTOs, r.connects, r.notes)
	if len(r.sigs) > 0 {
		sigs := make([]string, 0, len(r.sigs))
		for s, n := range r.sigs {
			sigs = append(sigs, fmt.Sprintf("%4d× %s", n, s))
		}
		sort.Strings(sigs)
		r.t.Logf("seed %d config %s: %d failures by kind:\n  %s", r.seed, r.sc.name(), r.failures, strings.Join(sigs, "\n  "))
	}
}

func (r *soakRun) count(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
}

// fail reports a failure of client c (nil: the run) with the seed, the
// client's op log and, for hangs and the first failure, the pooler's
// state. A hang stops the run.
func (r *soakRun) fail(c *soakClient, hang bool, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sig := soakSignature(msg)
	r.mu.Lock()
	r.failures++
	n := r.failures
	if r.sigs == nil {
		r.sigs = map[string]int{}
	}
	r.sigs[sig]++
	same := r.sigs[sig]
	showSnap := hang && !r.snapShown || n == 1
	if showSnap {
		r.snapShown = true
	}
	r.mu.Unlock()
	if hang {
		r.stopped.Store(true)
	}
	// Each kind of failure twice in full, at most 12 in all (hangs
	// always); the summary counts the rest.
	if !hang && (same > 2 || n > 12) {
		return
	}
	var b strings.Builder
	kind := "failure"
	if hang {
		kind = "HANG"
	}
	fmt.Fprintf(&b, "seed %d config %s: %s", r.seed, r.sc.name(), kind)
	if c != nil {
		fmt.Fprintf(&b, " of client %s (%s)", c.name, c.kind())
	}
	fmt.Fprintf(&b, ": %s\n", msg)
	if c != nil {
		b.WriteString(c.formatLog())
	}
	if showSnap {
		b.WriteString(r.formatSnapshot())
	}
	if hang {
		// A hang in the pooler, or a wait inside PostgreSQL (a lock)?
		b.WriteString(r.serverActivity())
	}
	r.t.Error(b.String())
}

// soakSignature is a failure message without the numbers and names that
// vary between occurrences of the same failure.
func soakSignature(msg string) string {
	var b strings.Builder
	for _, f := range strings.Fields(msg) {
		if strings.ContainsAny(f, "0123456789") {
			f = "#"
		}
		b.WriteString(f + " ")
		if b.Len() > 60 {
			break
		}
	}
	return b.String()
}

// serverActivity lists PostgreSQL's client backends (read directly), with
// what they wait for and who blocks them.
func (r *soakRun) serverActivity() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, r.srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		return fmt.Sprintf("server activity: %v\n", err)
	}
	defer pc.Close(context.Background())
	res := pc.ExecParams(ctx, `SELECT format('  backend pid %s app %L state %s wait %s/%s blocked by %s locks %s: %s',
		a.pid, a.application_name, a.state, a.wait_event_type, a.wait_event, pg_blocking_pids(a.pid),
		(SELECT string_agg(l.locktype || ':' || coalesce(l.objid::text, '') || CASE WHEN l.granted THEN '' ELSE '(waiting)' END, ',')
			FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory'),
		left(regexp_replace(a.query, '\s+', ' ', 'g'), 80))
		FROM pg_stat_activity a WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid() ORDER BY a.pid`,
		nil, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Sprintf("server activity: %v\n", res.Err)
	}
	var b strings.Builder
	b.WriteString("PostgreSQL's client backends:\n")
	for _, row := range res.Rows {
		b.Write(row[0])
		b.WriteByte('\n')
	}
	return b.String()
}

func (r *soakRun) formatSnapshot() string {
	snap := r.tp.Snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "pooler state at +%v:\n", time.Since(r.start).Round(time.Millisecond))
	for _, ps := range snap.Pools {
		fmt.Fprintf(&b, "  pool %s/%s size %d: clients active %d waiting %d idle %d pinned %d; servers active %d idle %d login %d pinned %d used %d; max wait %v\n",
			ps.Database, ps.User, ps.Size, ps.ClientsActive, ps.ClientsWaiting, ps.ClientsIdle, ps.ClientsPinned,
			ps.ServersActive, ps.ServersIdle, ps.ServersLogin, ps.ServersPinned, ps.ServersUsed, ps.MaxWait)
	}
	for _, ci := range snap.Clients {
		fmt.Fprintf(&b, "  client key %d %s:%d app %q state %s pinned %v server pid %d\n",
			ci.Key, ci.Addr, ci.Port, ci.ApplicationName, ci.State, ci.Pinned, ci.ServerPID)
	}
	for _, si := range snap.Servers {
		fmt.Fprintf(&b, "  server pid %d state %s pinned %v client key %d idle since %v\n",
			si.PID, si.State, si.Pinned, si.ClientKey, si.IdleSince.Format("15:04:05.000"))
	}
	return b.String()
}

// soakConn is a client connection: pgx or a bare protocol frontend.
type soakConn interface {
	// query runs one statement and returns its rows as text ("" for NULL)
	// and its command tag.
	query(ctx context.Context, sql string, args ...any) ([][]string, string, error)
	txStatus() byte
	net() net.Conn
	close()
}

// soakClient is one simulated client.
type soakClient struct {
	r    *soakRun
	id   int
	name string
	rng  *rand.Rand
	raw  bool
	conn soakConn
	pgx  *pgx.Conn // when !raw

	mu          sync.Mutex // guards the fields below (the watchdog reads them)
	log         []string
	cur         string
	opStart     time.Time
	watchdogged bool

	// The model of the session: what the client set (preserve: exactly
	// what it must see; reset: what it may see), pending rows of the open
	// transaction, received notifications.
	owner    string // expected soak.owner ("" unset)
	ownerSet bool   // the client has set soak.owner on this connection
	role     bool   // SET ROLE in force (preserve) or done (reset)
	roleSet  bool
	held     map[string]bool // pinning state held (temp, cursor, …)
	inTxn    bool
	pending  []int
	seq      int
	notes    []string
	notesMu  sync.Mutex
	lastNote int
}

func (c *soakClient) kind() string {
	if c.raw {
		return "raw"
	}
	return "pgx"
}

func (c *soakClient) logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, fmt.Sprintf("%8.3fs %s", time.Since(c.r.start).Seconds(), fmt.Sprintf(format, args...)))
	if len(c.log) > 400 {
		c.log = append(c.log[:0:0], c.log[200:]...)
	}
}

func (c *soakClient) formatLog() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "op log of %s (%s, last %d entries):\n", c.name, c.kind(), min(len(c.log), 60))
	for _, l := range c.log[max(0, len(c.log)-60):] {
		b.WriteString("    " + l + "\n")
	}
	if c.cur != "" {
		fmt.Fprintf(&b, "    (running since %.3fs: %s)\n", c.opStart.Sub(c.r.start).Seconds(), c.cur)
	}
	return b.String()
}

// soakAbort unwinds a client's op after a failure or a lost connection;
// reconnect says the client goes on with a new connection.
type soakAbort struct{ reconnect bool }

var errSoakTimeout = errors.New("soak: no answer before the deadline")

// loop runs ops until the run ends.
func (c *soakClient) loop() {
	defer func() {
		if c.conn != nil {
			c.conn.close()
			c.conn = nil
		}
	}()
	for !c.r.stopped.Load() && time.Now().Before(c.r.end) {
		if !c.step() {
			return
		}
	}
}

// step runs one op; false ends the client.
func (c *soakClient) step() (goOn bool) {
	defer func() {
		if v := recover(); v != nil {
			a, ok := v.(soakAbort)
			if !ok {
				panic(v)
			}
			c.dropConn()
			goOn = a.reconnect
		}
	}()
	if c.conn == nil {
		c.connect()
	}
	ops := soakOps
	total := 0
	for _, o := range ops {
		if o.raw || !c.raw {
			total += o.weight
		}
	}
	n := c.rng.IntN(total)
	for _, o := range ops {
		if !o.raw && c.raw {
			continue
		}
		if n < o.weight {
			c.r.count(func() { c.r.ops[o.name]++ })
			c.logf("== %s", o.name)
			o.fn(c)
			c.checkNotes()
			return true
		}
		n -= o.weight
	}
	return true
}

// dropConn closes the connection after an abort: the rows of an open
// transaction never committed (a COMMIT in flight makes them unknown,
// see commit).
func (c *soakClient) dropConn() {
	if c.conn != nil {
		c.conn.close()
		c.conn = nil
	}
	c.resolve(soakRolledBack)
	c.resetModel()
}

func (c *soakClient) resetModel() {
	c.owner, c.ownerSet, c.role, c.roleSet, c.inTxn = "", false, false, false, false
	c.held = map[string]bool{}
}

// resolve gives the pending rows their outcome.
func (c *soakClient) resolve(o soakOutcome) {
	if len(c.pending) == 0 {
		return
	}
	c.r.count(func() {
		for _, s := range c.pending {
			c.r.rows[[2]int{c.id, s}] = o
			switch o {
			case soakCommitted:
				c.r.commits++
			case soakRolledBack:
				c.r.rollbacks++
			default:
				c.r.unknown++
			}
		}
	})
	c.pending = c.pending[:0]
}

func (c *soakClient) newRow() int {
	c.seq++
	c.pending = append(c.pending, c.seq)
	c.r.count(func() { c.r.rows[[2]int{c.id, c.seq}] = soakPending })
	return c.seq
}

func (c *soakClient) connect() {
	for attempt := 0; ; attempt++ {
		if c.r.stopped.Load() {
			panic(soakAbort{})
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
		c.begin("connect")
		var err error
		if c.raw {
			c.conn, err = soakRawConnect(ctx, c)
		} else {
			var pc *pgx.Conn
			pc, err = c.pgxConnect(ctx)
			if err == nil {
				c.pgx, c.conn = pc, soakPgx{pc}
			}
		}
		cancel()
		c.endOp(err)
		c.r.count(func() { c.r.connects++ })
		if err == nil {
			c.resetModel()
			return
		}
		if ctx.Err() != nil || errors.Is(err, errSoakTimeout) {
			c.r.fail(c, true, "connect: %v", err)
			panic(soakAbort{})
		}
		if soakIsWaitTimeout(err) && attempt < 5 {
			c.r.count(func() { c.r.waitTOs++; c.r.errs["08P01"]++ })
			continue
		}
		c.r.fail(c, false, "connect: %v", err)
		panic(soakAbort{})
	}
}

func (c *soakClient) pgxConnect(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(c.r.tp.url(pgtest.SuperUser, ""))
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = soakModes[c.rng.IntN(len(soakModes))]
	cfg.RuntimeParams["application_name"] = c.name
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { c.addNote(n.Channel, n.Payload) }
	return pgx.ConnectConfig(ctx, cfg)
}

var soakModes = []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}

func (c *soakClient) addNote(channel, payload string) {
	c.notesMu.Lock()
	c.notes = append(c.notes, channel+":"+payload)
	c.notesMu.Unlock()
}

// checkNotes: a client only receives notifications of its own channel.
func (c *soakClient) checkNotes() {
	c.notesMu.Lock()
	notes := c.notes[c.lastNote:]
	c.lastNote = len(c.notes)
	c.notesMu.Unlock()
	c.r.count(func() { c.r.notes += len(notes) })
	for _, n := range notes {
		if !strings.HasPrefix(n, "soak_ch_"+c.name+":") {
			c.r.fail(c, false, "received a notification of another client: %s", n)
		}
	}
}

func (c *soakClient) notesSeen() int {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	return len(c.notes)
}

func (c *soakClient) begin(op string) {
	c.mu.Lock()
	c.cur, c.opStart, c.watchdogged = op, time.Now(), false
	c.mu.Unlock()
}

func (c *soakClient) endOp(err error) {
	c.mu.Lock()
	op, d := c.cur, time.Since(c.opStart)
	c.cur = ""
	c.mu.Unlock()
	res := "ok"
	if err != nil {
		res = "error: " + err.Error()
	}
	c.logf("%s [%v] -> %s", op, d.Round(time.Millisecond), res)
}

// holding reports whether the client holds a server: inside a
// transaction, or pinned by session state under preserve.
func (c *soakClient) holding() bool {
	if c.inTxn {
		return true
	}
	if c.r.sc.policy == PolicyPreserve {
		for _, h := range c.held {
			if h {
				return true
			}
		}
	}
	return false
}

// q runs one statement. Errors whose SQLSTATE is in allowed are returned
// (with the code); a query_wait_timeout while not holding a server
// reconnects; anything else fails the run and aborts the op.
func (c *soakClient) q(sql string, allowed []string, args ...any) ([][]string, string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	if !c.raw && c.rng.IntN(3) == 0 {
		// A per-statement mode besides the connection's default.
		args = append([]any{soakModes[c.rng.IntN(len(soakModes))]}, args...)
	}
	c.begin(c.describe(sql, args))
	start := time.Now()
	rows, tag, err := c.conn.query(ctx, sql, args...)
	c.endOp(err)
	if err != nil && c.pgxWaitTimeout(err, time.Since(start)) {
		// pgx first closes the statements it invalidated after an
		// error; when that Close had to wait for a server and the wait
		// timed out, pgx reports only that the connection closed.
		err = &pgconn.PgError{Code: "08P01", Message: "query_wait_timeout (" + err.Error() + ")"}
	}
	if st := c.conn.txStatus(); st == 'T' || st == 'E' {
		c.inTxn = true
	} else if err == nil || sqlState(err) != "" {
		c.inTxn = false
	}
	if err == nil {
		return rows, tag, ""
	}
	code := sqlState(err)
	if code != "" {
		c.r.count(func() { c.r.errs[code]++ })
	}
	for _, a := range allowed {
		if a == code {
			return rows, tag, code
		}
	}
	if ctx.Err() != nil || errors.Is(err, errSoakTimeout) {
		c.r.fail(c, true, "no answer to %s within %v: %v", soakShort(sql, args), c.r.opLimit, err)
		c.markUnknown()
		panic(soakAbort{})
	}
	if soakIsWaitTimeout(err) {
		if c.holding() {
			c.r.fail(c, false, "query_wait_timeout while holding a server: %s", soakShort(sql, args))
			panic(soakAbort{})
		}
		c.r.count(func() { c.r.waitTOs++ })
		panic(soakAbort{reconnect: true})
	}
	c.r.fail(c, false, "%s: unexpected error %v", soakShort(sql, args), err)
	c.markUnknown()
	panic(soakAbort{reconnect: true})
}

// markUnknown: after an unexplained failure the pending rows' fate is
// not known.
func (c *soakClient) markUnknown() { c.resolve(soakUnknown) }

// pgxWaitTimeout reports whether err is pgx's report of a connection the
// pooler closed with query_wait_timeout while pgx was deallocating its
// invalidated statements before the query: the message says only that
// the connection closed, so it counts when the query took at least the
// wait timeout and the connection is closed.
func (c *soakClient) pgxWaitTimeout(err error, took time.Duration) bool {
	return c.pgx != nil && strings.Contains(err.Error(), "failed to deallocate cached statement(s)") &&
		c.pgx.IsClosed() && took >= c.r.sc.wait
}

// opTook is how long the client's last op has run.
func (c *soakClient) opTook() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Since(c.opStart)
}

func soakIsWaitTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "08P01" && strings.Contains(pe.Message, "query_wait_timeout")
}

// describe names a statement for the op log, with the pgx mode it runs in.
func (c *soakClient) describe(sql string, args []any) string {
	if c.raw {
		return soakShort(sql, args)
	}
	mode := c.pgx.Config().DefaultQueryExecMode
	if len(args) > 0 {
		if m, ok := args[0].(pgx.QueryExecMode); ok {
			mode, args = m, args[1:]
		}
	}
	return soakShort(sql, args) + " {" + mode.String() + "}"
}

func soakShort(sql string, args []any) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	if len(args) > 0 {
		s += fmt.Sprintf(" %v", args)
	}
	return s
}

func (c *soakClient) ok(sql string, args ...any) [][]string {
	rows, _, _ := c.q(sql, nil, args...)
	return rows
}

func (c *soakClient) gap(what string) {
	d := c.r.sc.gap(c.rng)
	c.logf("quiet %v (%s)", d, what)
	time.Sleep(d)
}

// ---- ops ----

type soakOp struct {
	name   string
	weight int
	raw    bool // raw clients run it too
	fn     func(*soakClient)
}

var soakOps []soakOp

func init() {
	soakOps = []soakOp{
		{"select", 12, true, (*soakClient).opSelect},
		{"insert", 8, true, (*soakClient).opInsert},
		{"txn", 16, true, (*soakClient).opTxn},
		{"gap", 6, true, func(c *soakClient) { c.gap("idle") }},
		{"sleep", 4, true, (*soakClient).opSleep},
		{"set", 6, true, (*soakClient).opSet},
		{"role", 3, true, (*soakClient).opRole},
		{"check", 6, true, func(c *soakClient) { c.check() }},
		{"pin", 10, true, (*soakClient).opPin},
		{"error", 3, true, (*soakClient).opError},
		{"notify", 3, true, (*soakClient).opNotify},
		{"copyout", 2, true, (*soakClient).opCopyOut},
		{"vanish", 3, true, (*soakClient).opVanish},
		{"reconnect", 1, true, (*soakClient).opReconnect},
		{"batch", 5, false, (*soakClient).opBatch},
		{"copyin", 2, false, (*soakClient).opCopyIn},
		{"cancel", 2, false, (*soakClient).opCancel},
		{"pipeline", 5, true, (*soakClient).opPipeline},
	}
}

// opSelect checks that the answer is this client's own.
func (c *soakClient) opSelect() {
	if c.rng.IntN(4) == 0 {
		// A routine that changes nothing: verified, then learned.
		n := c.rng.IntN(1 << 20)
		rows := c.ok("SELECT soak_fn_plain($1)::text", n)
		if len(rows) != 1 || rows[0][0] != strconv.Itoa(n+1) {
			c.r.fail(c, false, "cross-talk: soak_fn_plain answered %v, want %d", rows, n+1)
		}
		return
	}
	n := c.rng.IntN(1 << 20)
	rows := c.ok("SELECT $1::text || '/' || ($2::int + 1)::text, pg_backend_pid()::text", c.name, n)
	want := fmt.Sprintf("%s/%d", c.name, n+1)
	if len(rows) != 1 || rows[0][0] != want {
		c.r.fail(c, false, "cross-talk: SELECT answered %v, want %s", rows, want)
		return
	}
	c.logf("   (server pid %s)", rows[0][1])
}

func (c *soakClient) insertRow() {
	s := c.newRow()
	c.ok("INSERT INTO soak_log (run, client, seq) VALUES ($1, $2, $3)", c.r.runID, c.id, s)
}

func (c *soakClient) opInsert() {
	c.insertRow()
	c.resolve(soakCommitted)
}

// commit sends COMMIT and resolves the pending rows by its tag.
func (c *soakClient) commit() {
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	c.begin("COMMIT")
	_, tag, err := c.conn.query(ctx, "COMMIT")
	c.endOp(err)
	c.inTxn = false
	switch {
	case err != nil:
		c.resolve(soakUnknown)
		if ctx.Err() != nil || errors.Is(err, errSoakTimeout) {
			c.r.fail(c, true, "no answer to COMMIT within %v: %v", c.r.opLimit, err)
			panic(soakAbort{})
		}
		c.r.fail(c, false, "COMMIT: %v", err)
		panic(soakAbort{reconnect: true})
	case tag == "COMMIT":
		c.resolve(soakCommitted)
	case tag == "ROLLBACK":
		c.resolve(soakRolledBack)
	default:
		c.r.fail(c, false, "COMMIT answered with tag %q", tag)
		c.resolve(soakUnknown)
	}
}

func (c *soakClient) rollback() {
	c.ok("ROLLBACK")
	c.resolve(soakRolledBack)
}

// opTxn: BEGIN, writes, quiet gaps while attached, reads, state checks,
// maybe an error, COMMIT or ROLLBACK.
func (c *soakClient) opTxn() {
	c.ok("BEGIN")
	for range 1 + c.rng.IntN(4) {
		switch c.rng.IntN(6) {
		case 0, 1:
			c.insertRow()
		case 2:
			c.gap("attached, in a transaction")
		case 3:
			c.opSelect()
		case 4:
			c.check()
		case 5:
			if c.rng.IntN(3) == 0 {
				c.opSleep()
			} else {
				c.insertRow()
			}
		}
	}
	switch n := c.rng.IntN(10); {
	case n < 6:
		c.commit()
	case n < 8:
		c.rollback()
	default:
		c.q("SELECT 1/0", []string{"22012"})
		if c.rng.IntN(2) == 0 {
			c.q("SELECT 1", []string{"25P02"})
		}
		if c.rng.IntN(2) == 0 {
			c.gap("attached, failed transaction")
		}
		if c.rng.IntN(2) == 0 {
			c.commit() // answered ROLLBACK
		} else {
			c.rollback()
		}
	}
}

func (c *soakClient) opSleep() {
	d := time.Duration(c.rng.Int64N(int64(c.r.sc.maxSleep())))
	c.ok(fmt.Sprintf("SELECT pg_sleep(%.3f)", d.Seconds()))
}

func (c *soakClient) opSet() {
	switch c.rng.IntN(4) {
	case 0, 1:
		c.ok(fmt.Sprintf("SET soak.owner = '%s'", c.name))
		c.owner, c.ownerSet = c.name, true
	case 2:
		// Directly, inside a routine (read back from the server), or in
		// a DO block.
		switch c.rng.IntN(3) {
		case 0:
			c.ok("SELECT set_config('soak.owner', $1, false)", c.name)
		case 1:
			c.ok("SELECT soak_fn_owner($1)", c.name)
		default:
			c.ok("DO $$BEGIN PERFORM set_config('soak.owner', '" + c.name + "', false); END$$")
		}
		c.owner, c.ownerSet = c.name, true
	case 3:
		c.ok("RESET soak.owner")
		c.owner = ""
	}
	if !c.inTxn && c.rng.IntN(2) == 0 {
		c.check()
	}
}

func (c *soakClient) opRole() {
	if c.rng.IntN(2) == 0 {
		if c.rng.IntN(3) == 0 {
			c.ok("SELECT soak_fn_role()")
		} else {
			c.ok("SET ROLE " + soakRole)
		}
		c.role, c.roleSet = true, true
	} else {
		c.ok("RESET ROLE")
		c.role = false
	}
}

// check reads the session state the client's server has and asserts that
// it is the client's own: under preserve exactly the model, under reset
// (when outside a transaction) at most what the client itself made.
func (c *soakClient) check() {
	rows := c.ok(`SELECT coalesce(current_setting('soak.owner', true), ''), current_user::text,
		coalesce((SELECT string_agg(relname::text, ',' ORDER BY relname) FROM pg_class WHERE relnamespace = pg_my_temp_schema() AND relkind = 'r'), ''),
		coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM pg_cursors WHERE name LIKE 'soak%'), ''),
		coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM pg_prepared_statements WHERE from_sql), ''),
		coalesce((SELECT string_agg(ch, ',' ORDER BY ch) FROM pg_listening_channels() ch), ''),
		coalesce((SELECT string_agg(objid::text, ',' ORDER BY objid) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), ''),
		pg_backend_pid()::text`)
	if len(rows) != 1 || len(rows[0]) != 8 {
		c.r.fail(c, false, "state check returned %v", rows)
		return
	}
	got := rows[0]
	c.logf("   (server pid %s, state %q)", got[7], got[:7])
	strict := c.r.sc.policy == PolicyPreserve
	var bad []string
	// soak.owner: never another client's.
	switch {
	case got[0] != "" && got[0] != c.name:
		bad = append(bad, fmt.Sprintf("soak.owner is %q (another client's)", got[0]))
	case !c.ownerSet && got[0] != "":
		bad = append(bad, fmt.Sprintf("soak.owner is %q though this connection never set it", got[0]))
	case strict && got[0] != c.owner:
		bad = append(bad, fmt.Sprintf("soak.owner is %q, want %q (preserve)", got[0], c.owner))
	}
	wantUser := pgtest.SuperUser
	if c.role {
		wantUser = soakRole
	}
	switch {
	case got[1] != pgtest.SuperUser && got[1] != soakRole:
		bad = append(bad, fmt.Sprintf("current_user is %q", got[1]))
	case !c.roleSet && got[1] != pgtest.SuperUser:
		bad = append(bad, fmt.Sprintf("current_user is %q though this connection never SET ROLE", got[1]))
	case strict && got[1] != wantUser:
		bad = append(bad, fmt.Sprintf("current_user is %q, want %q (preserve)", got[1], wantUser))
	}
	want := map[string]string{
		"temp":    "soak_tmp_" + c.name,
		"cursor":  "soak_cur_" + c.name,
		"prepare": "soak_ps_" + c.name,
		"listen":  "soak_ch_" + c.name,
		"lock":    strconv.Itoa(c.lockKey()),
	}
	for i, k := range []string{"temp", "cursor", "prepare", "listen", "lock"} {
		v := got[2+i]
		switch {
		case v != "" && v != want[k]:
			bad = append(bad, fmt.Sprintf("%s state is %q, not this client's (%s)", k, v, want[k]))
		case (strict || c.inTxn) && c.held[k] && v != want[k]:
			bad = append(bad, fmt.Sprintf("%s state %s is gone while the client holds it", k, want[k]))
		case strict && !c.held[k] && v != "":
			bad = append(bad, fmt.Sprintf("%s state %s is still there after the client released it", k, v))
		}
	}
	if len(bad) > 0 {
		// The op logs of the clients whose state this one saw.
		var others strings.Builder
		seen := map[int]bool{c.id: true}
		for _, v := range got[:7] {
			for _, part := range strings.Split(v, ",") {
				id := 0
				if i := strings.LastIndex(part, "c"); i >= 0 {
					id, _ = strconv.Atoi(part[i+1:])
				}
				if k, err := strconv.Atoi(part); err == nil && k > 770000 {
					id = k - 770000
				}
				if id > 0 && id <= len(c.r.clients) && !seen[id] {
					seen[id] = true
					others.WriteString(c.r.clients[id-1].formatLog())
				}
			}
		}
		c.r.fail(c, false, "session state check (in transaction %v) on server pid %s: %s; saw %q\n%s",
			c.inTxn, got[7], strings.Join(bad, "; "), got[:7], others.String())
	}
}

func (c *soakClient) lockKey() int { return 770000 + c.id }

// opPin takes session state that pins the client to its server under
// preserve, uses it with quiet gaps in between, and gives it back (or
// leaves with it).
func (c *soakClient) opPin() {
	kinds := []string{"lock", "listen", "temp", "cursor", "prepare"}
	k := kinds[c.rng.IntN(len(kinds))]
	reset := c.r.sc.policy == PolicyReset
	inTxn := k != "listen" && (reset && c.rng.IntN(2) == 0 || c.rng.IntN(5) == 0)
	if inTxn {
		c.ok("BEGIN")
	}
	// inRoutine: the state is made inside a routine, which the pooler
	// reads from the server.
	inRoutine := c.rng.IntN(3) == 0
	switch k {
	case "lock":
		if inRoutine {
			c.ok("SELECT soak_fn_lock($1)", c.lockKey())
		} else {
			c.ok("SELECT pg_advisory_lock($1)", c.lockKey())
		}
	case "listen":
		if inRoutine {
			c.ok("SELECT soak_fn_listen($1)", "soak_ch_"+c.name)
		} else {
			c.ok("LISTEN soak_ch_" + c.name)
		}
	case "temp":
		if inRoutine {
			c.ok("SELECT soak_fn_temp($1)", "soak_tmp_"+c.name)
		} else {
			c.ok("CREATE TEMP TABLE soak_tmp_" + c.name + " (v text)")
		}
		var allowed []string
		if reset && !inTxn {
			allowed = []string{"42P01"} // reset cleaned it away already
		}
		c.q("INSERT INTO soak_tmp_"+c.name+" VALUES ($1)", allowed, c.name)
	case "cursor":
		c.ok("DECLARE soak_cur_" + c.name + " CURSOR WITH HOLD FOR SELECT g FROM generate_series(1, 1000) g")
	case "prepare":
		c.ok("PREPARE soak_ps_" + c.name + " AS SELECT '" + c.name + "'::text")
	}
	c.held[k] = true
	// sure: the state must still be there (preserve, or in the transaction).
	sure := !reset || inTxn
	pos := 0
	for range 1 + c.rng.IntN(5) {
		switch c.rng.IntN(7) {
		case 0, 1:
			c.gap("pinned by " + k)
		case 2:
			c.check()
		case 3:
			c.opSelect()
		case 4:
			if inTxn {
				c.insertRow()
			} else {
				c.opSleep()
			}
		default:
			pos = c.usePin(k, sure, pos)
		}
	}
	if !inTxn && c.rng.IntN(10) == 0 {
		// Leave with the state: the pooler must clean the server.
		c.logf("leaving while holding %s", k)
		if c.rng.IntN(2) == 0 {
			c.vanishNow(c.rng.IntN(2) == 0, nil)
		} else {
			c.conn.close()
			c.conn = nil
			c.resetModel()
		}
		return
	}
	var allowed []string
	switch k {
	case "lock":
		rows, _, _ := c.q("SELECT pg_advisory_unlock($1)::text", nil, c.lockKey())
		if sure && (len(rows) != 1 || rows[0][0] != "true") {
			c.r.fail(c, false, "pg_advisory_unlock of the client's own lock answered %v", rows)
		}
	case "listen":
		c.ok("UNLISTEN soak_ch_" + c.name)
	case "temp":
		c.ok("DROP TABLE IF EXISTS soak_tmp_" + c.name)
	case "cursor":
		if !sure {
			allowed = []string{"34000"}
		}
		c.q("CLOSE soak_cur_"+c.name, allowed)
	case "prepare":
		if !sure {
			allowed = []string{"26000"}
		}
		c.q("DEALLOCATE soak_ps_"+c.name, allowed)
	}
	c.held[k] = false
	if inTxn {
		if c.rng.IntN(4) == 0 {
			c.rollback()
		} else {
			c.commit()
		}
	}
}

// usePin uses the pinning state k; pos is the cursor's position.
func (c *soakClient) usePin(k string, sure bool, pos int) int {
	switch k {
	case "lock":
		rows := c.ok("SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND pid = pg_backend_pid() AND granted", c.lockKey())
		if sure && (len(rows) != 1 || rows[0][0] != "1") {
			c.r.fail(c, false, "the client's advisory lock is not held by its server: %v", rows)
		}
	case "listen":
		before := c.notesSeen()
		c.ok("NOTIFY soak_ch_" + c.name + ", '" + c.name + "'")
		if sure && c.notesSeen() == before {
			c.r.fail(c, false, "no notification after NOTIFY on the client's own LISTEN channel")
		}
	case "temp":
		var allowed []string
		if !sure {
			allowed = []string{"42P01"}
		}
		rows, _, code := c.q("SELECT v FROM soak_tmp_"+c.name, allowed)
		if code == "" && (len(rows) != 1 || rows[0][0] != c.name) {
			c.r.fail(c, false, "temp table soak_tmp_%s holds %v", c.name, rows)
		}
	case "cursor":
		var allowed []string
		if !sure {
			allowed = []string{"34000"}
		}
		rows, _, code := c.q("FETCH 3 FROM soak_cur_"+c.name, allowed)
		if code == "" && sure {
			for i, r := range rows {
				if r[0] != strconv.Itoa(pos+i+1) {
					c.r.fail(c, false, "cursor soak_cur_%s fetched %v after position %d", c.name, rows, pos)
					break
				}
			}
			pos += len(rows)
		}
	case "prepare":
		var allowed []string
		if !sure {
			allowed = []string{"26000"}
		}
		rows, _, code := c.q("EXECUTE soak_ps_"+c.name, allowed)
		if code == "" && (len(rows) != 1 || rows[0][0] != c.name) {
			c.r.fail(c, false, "EXECUTE soak_ps_%s answered %v", c.name, rows)
		}
	}
	return pos
}

func (c *soakClient) opError() {
	c.q("SELECT 1/0", []string{"22012"})
	c.opSelect()
}

// opNotify notifies another client's channel (or its own).
func (c *soakClient) opNotify() {
	other := 1 + c.rng.IntN(c.r.sc.clients)
	c.ok(fmt.Sprintf("NOTIFY soak_ch_c%d, 'c%d'", other, other))
}

func (c *soakClient) opCopyOut() {
	n := 1 + c.rng.IntN(2000)
	sql := fmt.Sprintf("COPY (SELECT g FROM generate_series(1, %d) g) TO STDOUT", n)
	if c.raw {
		rows := c.ok(sql)
		if len(rows) != n {
			c.r.fail(c, false, "COPY TO gave %d rows, want %d", len(rows), n)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	var buf bytes.Buffer
	c.begin(sql)
	_, err := c.pgx.PgConn().CopyTo(ctx, &buf, sql)
	c.endOp(err)
	c.afterErr(ctx, err, sql)
	if got := strings.Count(buf.String(), "\n"); got != n {
		c.r.fail(c, false, "COPY TO gave %d lines, want %d", got, n)
	}
}

// afterErr handles the error of an op run outside q.
func (c *soakClient) afterErr(ctx context.Context, err error, what string) {
	if err == nil {
		return
	}
	code := sqlState(err)
	if code != "" {
		c.r.count(func() { c.r.errs[code]++ })
	}
	switch {
	case ctx.Err() != nil:
		c.r.fail(c, true, "no answer to %s within %v: %v", what, c.r.opLimit, err)
		c.markUnknown()
		panic(soakAbort{})
	case (soakIsWaitTimeout(err) || c.pgxWaitTimeout(err, c.opTook())) && !c.holding():
		c.r.count(func() { c.r.waitTOs++ })
		panic(soakAbort{reconnect: true})
	}
	c.r.fail(c, false, "%s: unexpected error %v", what, err)
	c.markUnknown()
	panic(soakAbort{reconnect: true})
}

func (c *soakClient) opCopyIn() {
	var b strings.Builder
	n := 1 + c.rng.IntN(20)
	for range n {
		fmt.Fprintf(&b, "%s\t%d\t%d\n", c.r.runID, c.id, c.newRow())
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	c.begin(fmt.Sprintf("COPY soak_log FROM STDIN (%d rows)", n))
	_, err := c.pgx.PgConn().CopyFrom(ctx, strings.NewReader(b.String()), "COPY soak_log (run, client, seq) FROM STDIN")
	c.endOp(err)
	if err != nil && sqlState(err) == "" {
		c.resolve(soakUnknown)
	} else if err != nil {
		c.resolve(soakRolledBack)
	} else {
		c.resolve(soakCommitted)
	}
	c.afterErr(ctx, err, "COPY FROM STDIN")
}

// opBatch sends a pgx batch (one Sync: an implicit transaction), maybe
// ending in an error that rolls it back.
func (c *soakClient) opBatch() {
	b := &pgx.Batch{}
	type want struct {
		kind string
		n    int
	}
	var wants []want
	for range 2 + c.rng.IntN(5) {
		if c.rng.IntN(2) == 0 {
			b.Queue("INSERT INTO soak_log (run, client, seq) VALUES ($1, $2, $3)", c.r.runID, c.id, c.newRow())
			wants = append(wants, want{kind: "insert"})
		} else {
			n := c.rng.IntN(1000)
			b.Queue("SELECT $1::text || '/' || $2::int", c.name, n)
			wants = append(wants, want{"select", n})
		}
	}
	failing := c.rng.IntN(5) == 0
	if failing {
		b.Queue("SELECT 1/0")
		wants = append(wants, want{kind: "error"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	c.begin(fmt.Sprintf("batch of %d (failing %v)", len(wants), failing))
	br := c.pgx.SendBatch(ctx, b)
	var err error
	for _, w := range wants {
		switch w.kind {
		case "insert":
			_, err = br.Exec()
		case "select":
			var s string
			err = br.QueryRow().Scan(&s)
			if err == nil && s != fmt.Sprintf("%s/%d", c.name, w.n) {
				c.r.fail(c, false, "cross-talk in a batch: %q, want %s/%d", s, c.name, w.n)
			}
		case "error":
			_, err = br.Exec()
		}
		if err != nil {
			break
		}
	}
	cerr := br.Close()
	if err == nil {
		err = cerr
	}
	c.endOp(err)
	switch {
	case err == nil:
		c.resolve(soakCommitted)
		if failing {
			c.r.fail(c, false, "batch with 1/0 succeeded")
		}
	case sqlState(err) == "22012" && failing:
		c.r.count(func() { c.r.errs["22012"]++ })
		c.resolve(soakRolledBack)
	case sqlState(err) != "":
		c.resolve(soakRolledBack)
		c.afterErr(ctx, err, "batch")
	default:
		c.resolve(soakUnknown)
		c.afterErr(ctx, err, "batch")
	}
}

// opPipeline: several statements, each with its own Sync, sent before any
// answer is read (raw), or a pgconn pipeline (pgx).
func (c *soakClient) opPipeline() {
	n := 2 + c.rng.IntN(4)
	type stmt struct {
		sql    string
		args   []any
		seq, v int
	}
	var stmts []stmt
	for range n {
		if c.rng.IntN(2) == 0 {
			s := c.newRow()
			stmts = append(stmts, stmt{sql: "INSERT INTO soak_log (run, client, seq) VALUES ($1, $2, $3)", args: []any{c.r.runID, c.id, s}, seq: s})
		} else {
			v := c.rng.IntN(1000)
			stmts = append(stmts, stmt{sql: "SELECT $1::text || '/' || $2::int", args: []any{c.name, v}, v: v})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	c.begin(fmt.Sprintf("pipeline of %d syncs", n))
	var results [][][]string
	var err error
	if c.raw {
		var batch []soakRawStmt
		for _, s := range stmts {
			batch = append(batch, soakRawStmt{sql: s.sql, args: s.args, sync: true})
		}
		results, err = c.conn.(*soakRawConn).pipeline(ctx, batch)
	} else {
		pl := c.pgx.PgConn().StartPipeline(ctx)
		for _, s := range stmts {
			var params [][]byte
			for _, a := range s.args {
				params = append(params, []byte(fmt.Sprint(a)))
			}
			pl.SendQueryParams(s.sql, params, nil, nil, nil)
			pl.SendPipelineSync()
		}
		err = pl.Flush()
		for i := 0; err == nil && i < 2*len(stmts); {
			var res any
			res, err = pl.GetResults()
			switch r := res.(type) {
			case *pgconn.ResultReader:
				rr := r.Read()
				err = rr.Err
				var rows [][]string
				for _, row := range rr.Rows {
					var s []string
					for _, f := range row {
						s = append(s, string(f))
					}
					rows = append(rows, s)
				}
				results = append(results, rows)
				i++
			case *pgconn.PipelineSync:
				i++
			case nil:
				if err == nil {
					err = errors.New("pipeline ended early")
				}
			}
		}
		if cerr := pl.Close(); err == nil {
			err = cerr
		}
	}
	c.endOp(err)
	// Each statement is its own implicit transaction.
	for i, s := range stmts {
		if s.seq == 0 {
			if i < len(results) && err == nil {
				want := fmt.Sprintf("%s/%d", c.name, s.v)
				if len(results[i]) != 1 || results[i][0][0] != want {
					c.r.fail(c, false, "cross-talk in a pipeline: %v, want %s", results[i], want)
				}
			}
			continue
		}
		o := soakUnknown
		if i < len(results) {
			o = soakCommitted
		}
		c.r.count(func() {
			c.r.rows[[2]int{c.id, s.seq}] = o
			if o == soakCommitted {
				c.r.commits++
			} else {
				c.r.unknown++
			}
		})
	}
	c.pending = c.pending[:0]
	c.afterErr(ctx, err, "pipeline")
}

// opCancel sends a CancelRequest during a pg_sleep: the query ends with
// 57014, or finishes when the cancel came too early or too late.
func (c *soakClient) opCancel() {
	d := 0.5 + c.rng.Float64()*1.5
	sql := fmt.Sprintf("SELECT pg_sleep(%.3f)", d)
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	c.begin(sql + " (cancelled)")
	errc := make(chan error, 1)
	go func() { _, err := c.pgx.Exec(ctx, sql); errc <- err }()
	time.Sleep(time.Duration(50+c.rng.IntN(400)) * time.Millisecond)
	cerr := c.pgx.PgConn().CancelRequest(ctx)
	err := <-errc
	c.endOp(err)
	c.r.count(func() { c.r.cancels++ })
	if cerr != nil {
		c.logf("cancel request: %v", cerr)
	}
	if err != nil && sqlState(err) == "57014" {
		c.r.count(func() { c.r.errs["57014"]++ })
		return
	}
	c.afterErr(ctx, err, sql)
}

// vanishNow closes the connection without Terminate, with a TCP RST half
// the time.
func (c *soakClient) vanishNow(rst bool, inflight <-chan error) {
	nc := c.conn.net()
	if tc, ok := nc.(*net.TCPConn); ok && rst {
		tc.SetLinger(0)
	}
	c.logf("vanish (rst %v)", rst)
	nc.Close()
	if inflight != nil {
		<-inflight
	}
	c.conn.close()
	c.conn = nil
	c.r.count(func() { c.r.vanishes++ })
	c.resetModel()
}

// opVanish: the client disappears idle, mid-transaction, mid-query or
// with its COMMIT in flight.
func (c *soakClient) opVanish() {
	switch c.rng.IntN(4) {
	case 0:
		c.vanishNow(c.rng.IntN(2) == 0, nil)
	case 1:
		c.ok("BEGIN")
		c.insertRow()
		if c.rng.IntN(2) == 0 {
			c.gap("attached, before vanishing")
		}
		c.vanishNow(c.rng.IntN(2) == 0, nil)
		c.resolve(soakRolledBack)
	case 2, 3:
		commit := c.rng.IntN(2) == 0
		sql := fmt.Sprintf("SELECT pg_sleep(%.3f)", 0.5+c.rng.Float64())
		if commit {
			c.ok("BEGIN")
			c.insertRow()
			sql = "COMMIT"
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
		defer cancel()
		errc := make(chan error, 1)
		conn := c.conn
		pause := time.Duration(c.rng.IntN(300)) * time.Millisecond
		rst := c.rng.IntN(2) == 0
		if rc, ok := conn.(*soakRawConn); ok {
			rc.fixed = true // no rng use on the query's goroutine
		}
		c.logf("%s, vanishing after %v", sql, pause)
		go func() { _, _, err := conn.query(ctx, sql); errc <- err }()
		time.Sleep(pause)
		c.vanishNow(rst, errc)
		c.resolve(soakUnknown)
	}
}

func (c *soakClient) opReconnect() {
	c.conn.close()
	c.conn = nil
	c.resolve(soakRolledBack)
	c.connect()
}

// ---- pgx connection ----

type soakPgx struct{ c *pgx.Conn }

func (p soakPgx) query(ctx context.Context, sql string, args ...any) ([][]string, string, error) {
	rows, err := p.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", err
	}
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return out, "", err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	rows.Close()
	return out, rows.CommandTag().String(), rows.Err()
}

func (p soakPgx) txStatus() byte { return p.c.PgConn().TxStatus() }
func (p soakPgx) net() net.Conn  { return p.c.PgConn().Conn() }
func (p soakPgx) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.c.Close(ctx)
}

// ---- raw protocol connection ----

type soakRawConn struct {
	c      *soakClient
	nc     net.Conn
	fe     *pgproto3.Frontend
	status byte
	stmts  map[string]string // SQL → statement name
	nstmt  int
	closed bool
	fixed  bool // simple protocol only, no rng (the query runs on another goroutine)
}

type soakRawStmt struct {
	sql  string
	args []any
	sync bool
}

func soakRawConnect(ctx context.Context, c *soakClient) (*soakRawConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", c.r.tp.port))
	if err != nil {
		return nil, err
	}
	rc := &soakRawConn{c: c, nc: nc, fe: pgproto3.NewFrontend(nc, nc), stmts: map[string]string{}}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	rc.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": pgtest.SuperUser, "database": pgtest.Database, "application_name": c.name}})
	if err := rc.fe.Flush(); err != nil {
		nc.Close()
		return nil, err
	}
	for {
		msg, err := rc.fe.Receive()
		if err != nil {
			nc.Close()
			return nil, rc.wrap(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			nc.Close()
			return nil, &pgconn.PgError{Severity: m.Severity, Code: m.Code, Message: m.Message}
		case *pgproto3.ReadyForQuery:
			rc.status = m.TxStatus
			return rc, nil
		}
	}
}

func (rc *soakRawConn) wrap(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %v", errSoakTimeout, err)
	}
	return err
}

func (rc *soakRawConn) txStatus() byte { return rc.status }
func (rc *soakRawConn) net() net.Conn  { return rc.nc }
func (rc *soakRawConn) close() {
	if rc.closed {
		return
	}
	rc.closed = true
	rc.nc.SetDeadline(time.Now().Add(time.Second))
	rc.fe.Send(&pgproto3.Terminate{})
	rc.fe.Flush()
	rc.nc.Close()
}

func (rc *soakRawConn) query(ctx context.Context, sql string, args ...any) ([][]string, string, error) {
	res, tag, err := rc.run(ctx, []soakRawStmt{{sql: sql, args: args, sync: true}})
	var rows [][]string
	if len(res) > 0 {
		rows = res[0]
	}
	return rows, tag, err
}

func (rc *soakRawConn) pipeline(ctx context.Context, stmts []soakRawStmt) ([][][]string, error) {
	res, _, err := rc.run(ctx, stmts)
	return res, err
}

// run sends stmts (the simple protocol for a lone statement without
// arguments, half the time; else Parse/Bind/Describe/Execute with an
// unnamed or a cached named statement) and reads the answers up to the
// last ReadyForQuery. It returns the rows of each statement that
// completed, the last command tag and the first error.
func (rc *soakRawConn) run(ctx context.Context, stmts []soakRawStmt) ([][][]string, string, error) {
	if dl, ok := ctx.Deadline(); ok {
		rc.nc.SetDeadline(dl)
	}
	rng := rc.c.rng
	syncs := 0
	var made []string
	if len(stmts) == 1 && len(stmts[0].args) == 0 && (rc.fixed || rng.IntN(2) == 0) {
		rc.fe.Send(&pgproto3.Query{String: stmts[0].sql})
		syncs = 1
	} else {
		for _, s := range stmts {
			name := ""
			if rng.IntN(2) == 0 {
				if n, ok := rc.stmts[s.sql]; ok {
					name = n
				} else {
					rc.nstmt++
					name = fmt.Sprintf("soak_raw_%d", rc.nstmt)
					rc.stmts[s.sql] = name
					made = append(made, s.sql)
					rc.fe.Send(&pgproto3.Parse{Name: name, Query: s.sql})
				}
			} else {
				rc.fe.Send(&pgproto3.Parse{Query: s.sql})
			}
			var params [][]byte
			for _, a := range s.args {
				params = append(params, []byte(fmt.Sprint(a)))
			}
			rc.fe.Send(&pgproto3.Bind{PreparedStatement: name, Parameters: params})
			rc.fe.Send(&pgproto3.Describe{ObjectType: 'P'})
			rc.fe.Send(&pgproto3.Execute{})
			if s.sync {
				rc.fe.Send(&pgproto3.Sync{})
				syncs++
			}
		}
	}
	if err := rc.fe.Flush(); err != nil {
		return nil, "", rc.wrap(err)
	}
	var res [][][]string
	var cur [][]string
	var tag string
	var first error
	for syncs > 0 {
		msg, err := rc.fe.Receive()
		if err != nil {
			return res, tag, rc.wrap(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			row := make([]string, len(m.Values))
			for i, v := range m.Values {
				row[i] = string(v)
			}
			cur = append(cur, row)
		case *pgproto3.CopyData:
			cur = append(cur, []string{strings.TrimSuffix(string(m.Data), "\n")})
		case *pgproto3.CommandComplete:
			tag = string(m.CommandTag)
			res = append(res, cur)
			cur = nil
		case *pgproto3.EmptyQueryResponse:
			res = append(res, nil)
		case *pgproto3.ErrorResponse:
			if first == nil {
				first = &pgconn.PgError{Severity: m.Severity, Code: m.Code, Message: m.Message}
			}
			if m.Severity == "FATAL" {
				return res, tag, first
			}
		case *pgproto3.NotificationResponse:
			rc.c.addNote(m.Channel, m.Payload)
		case *pgproto3.ReadyForQuery:
			rc.status = m.TxStatus
			syncs--
		case *pgproto3.CopyInResponse:
			rc.fe.Send(&pgproto3.CopyFail{Message: "soak: no COPY FROM on raw clients"})
			rc.fe.Flush()
		}
	}
	if first != nil {
		// The Parse of a new named statement may have failed: forget it
		// (an orphan on the server is harmless, the names are unique).
		for _, sql := range made {
			delete(rc.stmts, sql)
		}
	}
	return res, tag, first
}
