package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The demo's workload: two clients, A and B, and six things that depend on
// the server session. Each hazard runs its statements, looks at what the
// clients saw and says whether that is what a client sees without a pooler
// (ok) or not (broken), in words built from what it saw.

// hazard is one part of the workload.
type hazard struct {
	name string // short, for the result table
	what string // what the clients do
	run  func(ctx context.Context, w *workload) (ok bool, text string, err error)
}

// hazardResult is what one hazard showed.
type hazardResult struct {
	name string
	ok   bool
	text string
}

// Names the workload uses; none of them outlives the demo's sessions.
const (
	demoSearchPath = "pgpoolcheck_demo, public"
	demoLockKey    = "727065"
	demoChannel    = "pgpoolcheck_demo"
	demoPayload    = "for client A"
	demoTempTable  = "pgpoolcheck_demo_tmp"
	demoStatement  = "demo_stmt"
)

var hazards = []hazard{
	{"session SET", "A: SET search_path TO " + demoSearchPath + ", then SHOW search_path in a later transaction; B: SHOW search_path",
		hazardSet},
	{"advisory lock", "A: SELECT pg_advisory_lock(" + demoLockKey + "), unlocked in a later transaction; meanwhile B: SELECT pg_try_advisory_xact_lock(" + demoLockKey + ")",
		hazardLock},
	{"LISTEN", "A: LISTEN " + demoChannel + ", then a NOTIFY to that channel from another connection; B: SELECT pg_listening_channels()",
		hazardListen},
	{"temporary table", "A: CREATE TEMP TABLE " + demoTempTable + ", filled and read in later transactions; meanwhile B looks for it",
		hazardTempTable},
	{"prepared statement", "A and B: pgx Conn.Prepare(\"" + demoStatement + "\", …) of different queries (a named protocol-level statement), run in a later round trip",
		hazardNamed},
	{"unnamed statement", "A and B: Parse of the unnamed statement in one round trip, Bind and Execute in the next (as lib/pq and pgx's describe-exec mode do)",
		hazardUnnamed},
}

// workload is the state of one run of the workload.
type workload struct {
	a, b   *demoClient
	direct *pgx.Conn // a connection that bypasses the pooler
	// watch shows what the pooler does with A and B (nil: nothing).
	watch func() poolerView
	// hold is how long A keeps its state once B waits for it.
	hold time.Duration
}

// demoClient is one of the workload's clients, with the notifications it
// received.
type demoClient struct {
	name string
	conn *pgx.Conn

	mu    sync.Mutex
	notes []string
}

func (c *demoClient) received(payload string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.notes {
		if n == payload {
			return true
		}
	}
	return false
}

func (c *demoClient) exec(ctx context.Context, sql string) error {
	_, err := c.conn.Exec(ctx, sql)
	return err
}

// text runs a query that returns one text value.
func (c *demoClient) text(ctx context.Context, sql string, args ...any) (string, error) {
	var s string
	err := c.conn.QueryRow(ctx, sql, args...).Scan(&s)
	return s, err
}

// runWorkload connects clients A and B with the configurations config
// gives and runs every hazard. direct reaches the server without the
// pooler; watch, when set, shows what the pooler does with A and B. An error is returned when the workload could not run (the
// context ended, a connection failed); what PostgreSQL refused is part of
// the results.
func runWorkload(ctx context.Context, config func(name string) (*pgx.ConnConfig, error), direct *pgx.Conn, watch func() poolerView) ([]hazardResult, error) {
	w := &workload{direct: direct, watch: watch, hold: 250 * time.Millisecond}
	for _, name := range []string{"a", "b"} {
		cfg, err := config(name)
		if err != nil {
			return nil, err
		}
		c := &demoClient{name: strings.ToUpper(name)}
		cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
			c.mu.Lock()
			c.notes = append(c.notes, n.Payload)
			c.mu.Unlock()
		}
		if c.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("client %s: connecting through the pooler: %w", c.name, err)
		}
		defer c.conn.Close(context.Background())
		if name == "a" {
			w.a = c
		} else {
			w.b = c
		}
	}
	var out []hazardResult
	for _, h := range hazards {
		ok, text, err := h.run(ctx, w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.name, err)
		}
		out = append(out, hazardResult{name: h.name, ok: ok, text: text})
	}
	return out, nil
}

// refused turns an error PostgreSQL (or the pooler) sent into a broken
// result; any other error ends the workload.
func refused(what string, err error) (bool, string, error) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return false, fmt.Sprintf("%s failed: %s (SQLSTATE %s)", what, pe.Message, pe.Code), nil
	}
	return false, "", fmt.Errorf("%s: %w", what, err)
}

// probeResult is what B's probe saw while A held some state.
type probeResult struct {
	value string
	err   error
	early bool          // it answered before A began to release the state
	took  time.Duration // from its start to its answer
	seen  poolerView    // the pooler while B waited, if it did
}

// poolerView is what the pooler showed of the two clients.
type poolerView struct {
	aPinned  bool // A keeps its server connection between transactions
	bWaiting bool // B waits for a server connection
}

// whileHeld runs probe (B's query) while A holds some state. It waits
// until the probe answers or the pooler shows B waiting for a server;
// then, when B waits, A keeps the state for w.hold more; then it runs
// release (A letting the state go) and waits for the probe. A PostgreSQL
// error of the probe is in the result; other errors, and any error of
// release, are returned.
func (w *workload) whileHeld(ctx context.Context, probe func(context.Context) (string, error), release func() error) (probeResult, error) {
	start := time.Now()
	ch := make(chan probeResult, 1)
	go func() {
		v, err := probe(ctx)
		ch <- probeResult{value: v, err: err, took: time.Since(start)}
	}()
	var p probeResult
	var seen poolerView
	early := false
	tick := time.NewTicker(5 * time.Millisecond)
	giveUp := time.NewTimer(10 * time.Second)
wait:
	for {
		select {
		case p = <-ch:
			early = true
			break wait
		case <-tick.C:
			if w.watch != nil {
				if seen = w.watch(); seen.bWaiting {
					break wait
				}
			}
		case <-giveUp.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	tick.Stop()
	giveUp.Stop()
	if seen.bWaiting {
		select {
		case <-time.After(w.hold):
		case <-ctx.Done():
		}
	}
	rerr := release()
	if !early {
		p = <-ch
	}
	p.early, p.seen = early, seen
	if rerr != nil {
		return p, rerr
	}
	var pe *pgconn.PgError
	if p.err != nil && !errors.As(p.err, &pe) {
		return p, p.err
	}
	return p, nil
}

// waited says how long B waited for a server while A held its state, or
// nothing when the pooler did not show B waiting.
func (p probeResult) waited(what string) string {
	if !p.seen.bWaiting {
		return ""
	}
	s := fmt.Sprintf("; B waited %s for a server", p.took.Round(10*time.Millisecond))
	if p.seen.aPinned {
		s += " while A, pinned to its own, " + what
	}
	return s
}

func hazardSet(ctx context.Context, w *workload) (bool, string, error) {
	if err := w.a.exec(ctx, "SET search_path TO "+demoSearchPath); err != nil {
		return refused("A's SET", err)
	}
	bPath, err := w.b.text(ctx, "SHOW search_path")
	if err != nil {
		return refused("B's SHOW search_path", err)
	}
	aPath, err := w.a.text(ctx, "SHOW search_path")
	if err != nil {
		return refused("A's SHOW search_path", err)
	}
	if err := w.a.exec(ctx, "RESET search_path"); err != nil {
		return refused("A's RESET search_path", err)
	}
	switch {
	case bPath == demoSearchPath:
		return false, fmt.Sprintf("B, which never ran SET, got A's search_path = %s", bPath), nil
	case aPath != demoSearchPath:
		return false, fmt.Sprintf("A's later transaction ran with search_path = %s, not the one it set", aPath), nil
	}
	return true, fmt.Sprintf("kept for A, which set it (search_path = %s), and not seen by B (search_path = %s)", aPath, bPath), nil
}

func hazardLock(ctx context.Context, w *workload) (bool, string, error) {
	if err := w.a.exec(ctx, "SELECT pg_advisory_lock("+demoLockKey+")"); err != nil {
		return refused("A's pg_advisory_lock", err)
	}
	var unlocked string
	p, err := w.whileHeld(ctx,
		func(ctx context.Context) (string, error) {
			// The transaction-level form: COMMIT releases it.
			return w.b.text(ctx, "SELECT pg_try_advisory_xact_lock("+demoLockKey+")::text")
		},
		func() (err error) {
			unlocked, err = w.a.text(ctx, "SELECT pg_advisory_unlock("+demoLockKey+")::text")
			return err
		})
	if err != nil {
		return refused("A's pg_advisory_unlock", err)
	}
	if p.err != nil {
		return refused("B's pg_try_advisory_xact_lock", p.err)
	}
	switch {
	case p.value == "true" && p.early:
		return false, "B was granted the lock while A held it (pg_try_advisory_xact_lock returned true before A's unlock): on the server connection they share, the lock excludes nobody", nil
	case unlocked != "true":
		return false, "A's pg_advisory_unlock in its later transaction found no lock to release: it ran on another server connection than the lock", nil
	case p.value == "true":
		return true, fmt.Sprintf("B got the lock only after A's unlock%s", p.waited("held the lock")), nil
	}
	return true, "B was refused the lock while A held it (pg_try_advisory_xact_lock returned false), and A's later unlock released it", nil
}

func hazardListen(ctx context.Context, w *workload) (bool, string, error) {
	if err := w.a.exec(ctx, "LISTEN "+demoChannel); err != nil {
		return refused("A's LISTEN", err)
	}
	if _, err := w.direct.Exec(ctx, "NOTIFY "+demoChannel+", '"+demoPayload+"'"); err != nil {
		return refused("NOTIFY", err)
	}
	p, err := w.whileHeld(ctx,
		func(ctx context.Context) (string, error) {
			return w.b.text(ctx, "SELECT coalesce(string_agg(c, ', '), '') FROM pg_listening_channels() AS c")
		},
		func() error {
			// A query lets A read what the server sent it meanwhile.
			if err := w.a.exec(ctx, "SELECT 1"); err != nil {
				return err
			}
			return w.a.exec(ctx, "UNLISTEN "+demoChannel)
		})
	if err != nil {
		return refused("A's UNLISTEN", err)
	}
	if p.err != nil {
		return refused("B's pg_listening_channels()", p.err)
	}
	var wrong []string
	if strings.Contains(p.value, demoChannel) {
		wrong = append(wrong, fmt.Sprintf("B's server connection listens on A's channel (pg_listening_channels: %s)", p.value))
	}
	if w.b.received(demoPayload) {
		wrong = append(wrong, "B received the notification meant for A")
	}
	if !w.a.received(demoPayload) {
		wrong = append(wrong, "A never received the NOTIFY sent to its channel")
	}
	if len(wrong) > 0 {
		return false, strings.Join(wrong, "; "), nil
	}
	return true, "A received the NOTIFY sent to its channel; B's connection listens on nothing" + p.waited("was listening"), nil
}

func hazardTempTable(ctx context.Context, w *workload) (bool, string, error) {
	if err := w.a.exec(ctx, "CREATE TEMP TABLE "+demoTempTable+" (note text)"); err != nil {
		return refused("A's CREATE TEMP TABLE", err)
	}
	if err := w.a.exec(ctx, "INSERT INTO "+demoTempTable+" VALUES ('written by A')"); err != nil {
		return refused("A's INSERT into its temporary table", err)
	}
	var aRows string
	p, err := w.whileHeld(ctx,
		func(ctx context.Context) (string, error) {
			found, err := w.b.text(ctx, "SELECT coalesce(to_regclass('pg_temp."+demoTempTable+"')::text, '')")
			if err != nil || found == "" {
				return "", err
			}
			return w.b.text(ctx, "SELECT coalesce(string_agg(note, ', '), '') FROM pg_temp."+demoTempTable)
		},
		func() (err error) {
			if aRows, err = w.a.text(ctx, "SELECT coalesce(string_agg(note, ', '), '') FROM "+demoTempTable); err != nil {
				return err
			}
			return w.a.exec(ctx, "DROP TABLE "+demoTempTable)
		})
	if err != nil {
		return refused("A's use of its temporary table", err)
	}
	if p.err != nil {
		return refused("B's look for the table", p.err)
	}
	switch {
	case p.value != "":
		return false, fmt.Sprintf("B sees A's temporary table and reads its rows (%q)", p.value), nil
	case aRows != "written by A":
		return false, fmt.Sprintf("A's later transaction found %q in its temporary table, not its own row", aRows), nil
	}
	return true, "A kept its table across transactions (read back its row); B does not see it" + p.waited("had the table"), nil
}

func hazardNamed(ctx context.Context, w *workload) (bool, string, error) {
	if _, err := w.a.conn.Prepare(ctx, demoStatement, "SELECT 'A''s "+demoStatement+": ' || $1::text"); err != nil {
		return refused("A's Prepare", err)
	}
	_, bErr := w.b.conn.Prepare(ctx, demoStatement, "SELECT 'B''s "+demoStatement+": ' || $1::text")
	aOut, err := w.a.text(ctx, demoStatement, "run later")
	if err != nil {
		return refused("A's run of "+demoStatement, err)
	}
	var bOut string
	if bErr == nil {
		if bOut, err = w.b.text(ctx, demoStatement, "run later"); err != nil {
			return refused("B's run of "+demoStatement, err)
		}
	}
	wantA, wantB := "A's "+demoStatement+": run later", "B's "+demoStatement+": run later"
	switch {
	case bErr != nil:
		ok, text, err := refused("B's Parse of "+demoStatement, bErr)
		if err == nil {
			text += ": A's statement of that name is on the server connection they share"
		}
		return ok, text, err
	case aOut != wantA:
		return false, fmt.Sprintf("A's %s returned %q", demoStatement, aOut), nil
	case bOut != wantB:
		return false, fmt.Sprintf("B's %s returned %q", demoStatement, bOut), nil
	}
	return true, fmt.Sprintf("each client ran its own %s in a later round trip (A: %q, B: %q)", demoStatement, aOut, bOut), nil
}

func hazardUnnamed(ctx context.Context, w *workload) (bool, string, error) {
	a, b := w.a.conn.PgConn(), w.b.conn.PgConn()
	if _, err := a.Prepare(ctx, "", "SELECT 'A''s unnamed statement'", nil); err != nil {
		return refused("A's Parse", err)
	}
	if _, err := b.Prepare(ctx, "", "SELECT 'B''s unnamed statement'", nil); err != nil {
		return refused("B's Parse", err)
	}
	one := func(c *pgconn.PgConn) (string, error) {
		r := c.ExecPrepared(ctx, "", nil, nil, nil).Read()
		if r.Err != nil {
			return "", r.Err
		}
		if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
			return "", fmt.Errorf("want one value, got %d rows", len(r.Rows))
		}
		return string(r.Rows[0][0]), nil
	}
	aOut, err := one(a)
	if err != nil {
		return refused("A's Bind of its unnamed statement", err)
	}
	bOut, err := one(b)
	if err != nil {
		return refused("B's Bind of its unnamed statement", err)
	}
	switch {
	case aOut != "A's unnamed statement":
		return false, fmt.Sprintf("A's Bind ran another statement: it returned %q", aOut), nil
	case bOut != "B's unnamed statement":
		return false, fmt.Sprintf("B's Bind ran another statement: it returned %q", bOut), nil
	}
	return true, fmt.Sprintf("each Bind ran its own client's statement (A: %q, B: %q)", aOut, bOut), nil
}
