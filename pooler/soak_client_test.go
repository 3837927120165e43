package pooler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

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
	// what it must see; reset: what it must see only inside the
	// transaction that made it, see check), pending rows of the open
	// transaction, received notifications.
	owner    string          // soak.owner set by the client ("" unset)
	role     bool            // SET ROLE in force
	held     map[string]bool // pinning state held (temp, cursor, …)
	inTxn    bool
	pending  []int
	seq      int
	notes    []string
	notesMu  sync.Mutex
	lastNote int

	// Made in the open transaction (opReach): soak.owner set to the
	// client's name, the role set, SET LOCAL ROLE, SET LOCAL search_path.
	txnOwner, txnRole, localRole bool
	local                        string
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
	if c.rng.IntN(4) != 0 {
		// The oracle, as the first statement on the server the client
		// is handed (or is pinned to).
		c.check()
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
	c.owner, c.role, c.inTxn = "", false, false
	c.txnOwner, c.txnRole, c.localRole, c.local = false, false, false, ""
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
			// Not assigned on failure: a nil *soakRawConn in the
			// interface would not compare equal to nil.
			var rc *soakRawConn
			if rc, err = soakRawConnect(ctx, c); err == nil {
				c.conn = rc
			}
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
