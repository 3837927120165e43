package pooler

// TestSoak is a seeded, randomized soak of the transaction pooler against
// a real PostgreSQL: many pgx and raw-protocol clients run random scripts
// (autocommit statements, transactions, quiet gaps while idle, attached and
// pinned, long queries, batches and pipelines, every kind of session
// state, also made by code the statement does not name (a view, a
// default, a trigger, a CHECK constraint, a row security policy, an
// operator, a function shadowing a built-in: opReach), COPY, cancels,
// errors, clients that vanish, waiters that time out) and the soak
// checks, while it runs and at the end, that
//
//  1. every request is answered (or cleanly refused) before a deadline;
//  2. a client only ever sees its own session state: the state-diff
//     oracle (check, soak_ops_test.go) reads the whole session state
//     of the server the client is handed (role and session user, every
//     setting changed in the session, soak.owner by name, advisory
//     locks, LISTEN channels, temporary relations, functions and types,
//     held cursors, SQL prepared statements) before three ops in four,
//     at half the transaction starts and after every opReach, and fails
//     on any difference from what the policy promises: under preserve
//     exactly the client's model, under reset exactly what the open
//     transaction made;
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
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	run     time.Duration // how long the clients start new ops
	long    bool          // long mode: longer gaps and sleeps
}

func (sc soakConfig) name() string {
	r := string(sc.relay)
	if sc.relay == RelayLoop {
		r = fmt.Sprintf("loop%d", sc.loops)
	}
	return fmt.Sprintf("%s/pool%d/%s", r, sc.pool, sc.policy)
}

func TestSoak(t *testing.T) {
	if os.Getenv("POOLER_TEST_RELAY") != "" || os.Getenv("POOLER_TEST_LOOPS") != "" {
		t.Skip("TestSoak runs the loop relay with 1 and 2 loops and bridged itself in the main run; skipped under POOLER_TEST_RELAY/POOLER_TEST_LOOPS")
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
		GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO `+soakRole+`;`+soakReachSetup); err != nil {
		t.Fatal(err)
	}

	type relayKind struct {
		relay Relay
		loops int
	}
	relays := []relayKind{{RelayLoop, 1}, {RelayLoop, 2}, {RelayBridged, 1}}
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
			// Two configurations per relay: two pool sizes, both
			// policies.
			perm := rng.Perm(3)
			flip := rng.IntN(2)
			for r, rk := range relays {
				cfgs = append(cfgs,
					mk(rk, pools[perm[r%3]], policies[(r+flip)%2]),
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
	checks    int // state checks run (the oracle)
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
	t.Logf("seed %d config %s: %d clients, query_wait_timeout %v, op deadline %v",
		seed, sc.name(), sc.clients, sc.wait, r.opLimit)

	direct := directConn(t, srv)
	// Backends older than this configuration (left by a test before it,
	// such as a query that runs on after its client closed) are not its.
	var since time.Time
	if err := direct.QueryRow(testCtx(t, 10*time.Second), "SELECT clock_timestamp()").Scan(&since); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	baseG, baseFD := runtime.NumGoroutine(), soakFDs()
	// Registered before startProxy, so it runs after the proxy's cleanup
	// has shut it down.
	t.Cleanup(func() { r.checkLeaks(baseG, baseFD) })

	tp := startProxy(t, srv, Config{PoolSize: sc.pool, QueryWaitTimeout: sc.wait, Relay: sc.relay,
		Loops: sc.loops, OnSessionState: sc.policy, Classifier: sessionstate.New()})
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
	// No session state left on the (idle) servers, no busy backend. A
	// server closed under a client that vanished mid-query had its query
	// cancelled; its backend ends once the cancel lands and it sees the
	// closed socket, which on a loaded machine can be after the clients
	// finished: it is given serverGone (far more than the longest query
	// the soak runs), and what is left then is an error.
	const serverGone = 10 * time.Second
	var locks, temps, busy int
	var busyRows string
	waitFor(serverGone, func() bool {
		if err := direct.QueryRow(cctx, `SELECT
		(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
		(SELECT count(*) FROM pg_class WHERE relpersistence = 't' AND relname LIKE 'soak_tmp_%'),
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle' AND backend_start >= $1),
		(SELECT coalesce(string_agg(format('pid %s %s (%s) since %s: %s', pid, state, wait_event, state_change, query), E'\n'), '')
		   FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle' AND backend_start >= $1)`, since).
			Scan(&locks, &temps, &busy, &busyRows); err != nil {
			t.Error(err)
			return true
		}
		return locks+temps+busy == 0
	})
	if locks+temps+busy != 0 {
		t.Errorf("seed %d config %s: %v after the clients left, the servers hold %d advisory locks and %d soak temp tables, %d backends are not idle\n%s\n%s",
			seed, sc.name(), serverGone, locks, temps, busy, busyRows, r.formatSnapshot())
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

// gap is a quiet gap: mostly short, some longer than a janitor tick.
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
		if !strings.Contains(k, ":") { // "reach:view": a kind of an op counted already
			total += r.ops[k]
		}
	}
	codes := make([]string, 0, len(r.errs))
	for k := range r.errs {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	for _, k := range codes {
		errs = append(errs, fmt.Sprintf("%s=%d", k, r.errs[k]))
	}
	r.t.Logf("seed %d config %s summary: %d ops (%s); commits %d rows, rolled back %d, unknown %d; errors %s; vanishes %d, cancels %d, wait timeouts %d, connects %d, notifications %d; state checks %d",
		r.seed, r.sc.name(), total, strings.Join(ops, " "), r.commits, r.rollbacks, r.unknown,
		strings.Join(errs, " "), r.vanishes, r.cancels, r.waitTOs, r.connects, r.notes, r.checks)
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
