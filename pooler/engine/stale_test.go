package engine

import (
	"slices"
	"testing"
)

// staleRig runs clients through one server's prepared-statement tracking
// as the driver would: each message planned by frontend, each answer fed
// to backend.
type staleRig struct {
	t      *testing.T
	limits *Limits
	s      *Server
}

func newStaleRig(t *testing.T) *staleRig {
	return &staleRig{t: t, limits: &Limits{MaxMessage: 1 << 20, MaxPrepared: 10}, s: &Server{}}
}

// attach gives the server to a new client.
func (r *staleRig) client() *Client {
	c := &Client{Limits: r.limits}
	c.SetPolicy(PolicyPreserve, false, true)
	c.Attached(false)
	r.s.ResetQueue()
	return c
}

func (r *staleRig) send(c *Client, typ byte, body []byte) Plan {
	var ctr Counters
	CountFrontend(&c.st, typ)
	return c.frontend(r.s, typ, body, len(body), &ctr)
}

// answer feeds server messages; for 'C' and 'Z' body is the tag or status.
func (r *staleRig) answer(c *Client, typ byte, body string) bool {
	var b []byte
	switch typ {
	case 'C':
		b = append([]byte(body), 0)
	case 'Z':
		b = []byte(body)
		c.ready(b[0])
	}
	return c.backend(r.s, typ, b)
}

// query sends a simple Query and its answers: tag, then status.
func (r *staleRig) query(c *Client, q, tag, status string) {
	r.send(c, 'Q', append([]byte(q), 0))
	r.answer(c, 'C', tag)
	r.answer(c, 'Z', status)
}

func parseBody(name, q string) []byte {
	b := append([]byte(name), 0)
	b = append(b, q...)
	return append(b, 0, 0, 0)
}

// prepare sends Parse and Sync for the client's statement name and
// answers them as the server would, returning the Parse's plan.
func (r *staleRig) prepare(c *Client, name, q, status string) Plan {
	pl := r.send(c, 'P', parseBody(name, q))
	r.answerPlan(c, pl)
	if pl.Action != PlanDrop {
		r.answer(c, '1', "")
	}
	for m := r.s.PopSynth(); m != nil; m = r.s.PopSynth() {
	}
	r.send(c, 'S', nil)
	r.answer(c, 'Z', status)
	return pl
}

// answerPlan answers the pooler's own Closes of a plan (swallowed).
func (r *staleRig) answerPlan(c *Client, pl Plan) {
	for range pl.Closes {
		if r.answer(c, '3', "") {
			r.t.Fatal("the CloseComplete of a doomed statement reached the client")
		}
	}
}

// TestRolledBackStatementsDoomed: a statement first prepared on a server
// in a transaction that rolls back (ROLLBACK, ROLLBACK TO SAVEPOINT, an
// error in an implicit transaction) is closed before the server's next
// extended-protocol message and never taken from the cache again; one
// prepared in a transaction that commits is shared with the next client.
func TestRolledBackStatementsDoomed(t *testing.T) {
	const q = "SELECT $1::e"
	for _, tc := range []struct {
		name   string
		run    func(r *staleRig, c *Client)
		doomed bool
	}{
		{"commit", func(r *staleRig, c *Client) {
			r.query(c, "BEGIN", "BEGIN", "T")
			r.prepare(c, "a", q, "T")
			r.query(c, "COMMIT", "COMMIT", "I")
		}, false},
		{"rollback", func(r *staleRig, c *Client) {
			r.query(c, "BEGIN", "BEGIN", "T")
			r.prepare(c, "a", q, "T")
			r.query(c, "ROLLBACK", "ROLLBACK", "I")
		}, true},
		{"rollback to savepoint, then commit", func(r *staleRig, c *Client) {
			r.query(c, "BEGIN", "BEGIN", "T")
			r.query(c, "SAVEPOINT s", "SAVEPOINT", "T")
			r.prepare(c, "a", q, "T")
			r.query(c, "ROLLBACK TO s", "ROLLBACK", "T")
			r.query(c, "COMMIT", "COMMIT", "I")
		}, true},
		{"error in an implicit transaction", func(r *staleRig, c *Client) {
			pl := r.send(c, 'P', parseBody("a", q))
			r.answerPlan(c, pl)
			r.answer(c, '1', "")
			r.send(c, 'B', []byte("\x00a\x00\x00\x00\x00\x00\x00\x00"))
			r.send(c, 'E', []byte("\x00\x00\x00\x00\x00"))
			r.send(c, 'S', nil)
			r.answer(c, '2', "")
			r.answer(c, 'E', "")
			r.answer(c, 'Z', "I")
		}, true},
		{"autocommit", func(r *staleRig, c *Client) {
			r.prepare(c, "a", q, "I")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newStaleRig(t)
			a := r.client()
			tc.run(r, a)
			if got := r.s.Statements(); got != map[bool]int{true: 0, false: 1}[tc.doomed] {
				t.Fatalf("the server's cache holds %d statements", got)
			}
			b := r.client()
			pl := r.prepare(b, "b", q, "I")
			if tc.doomed {
				if len(pl.Closes) != 1 || pl.Action == PlanDrop {
					t.Fatalf("next client's Parse: closes %q, action %d; want the doomed statement closed and the Parse sent", pl.Closes, pl.Action)
				}
			} else if len(pl.Closes) != 0 || pl.Action != PlanDrop {
				t.Fatalf("next client's Parse: closes %q, action %d; want it answered from the cache", pl.Closes, pl.Action)
			}
			if r.s.Pending() != 0 {
				t.Fatalf("%d answers still owed", r.s.Pending())
			}
		})
	}
}

// TestSchemaEpoch: a schema change sent through the pooler starts a new
// epoch when it runs (the client's own later statements get new
// server-side names) and again when its transaction ends (other clients
// that prepared meanwhile saw the catalog as before it); the next client's
// Parse of the same text is not answered from the cache. The statements
// a client still holds stay on the server under their names, as their
// plans stay with them on PostgreSQL (which fails one with 0A000 when its
// result type changed); those no one holds are doomed.
func TestSchemaEpoch(t *testing.T) {
	r := newStaleRig(t)
	a := r.client()
	r.prepare(a, "a", "SELECT $1::e", "I")
	old := a.stmts["a"].srv
	r.query(a, "BEGIN", "BEGIN", "T")
	r.query(a, "DROP TYPE e", "DROP TYPE", "T")
	e1 := r.limits.Epoch.Load()
	if e1 == 0 {
		t.Fatal("DROP TYPE started no epoch")
	}
	r.query(a, "CREATE TYPE e AS ENUM ('x')", "CREATE TYPE", "T")
	r.prepare(a, "a2", "SELECT $1::e", "T")
	mid := a.stmts["a2"].srv
	if mid == old {
		t.Fatal("the statement prepared after DROP TYPE has the old server-side name")
	}
	r.query(a, "COMMIT", "COMMIT", "I")
	if r.limits.Epoch.Load() == e1 {
		t.Fatal("the end of the transaction with the schema change started no epoch")
	}
	b := r.client()
	pl := r.prepare(b, "b", "SELECT $1::e", "I")
	if pl.Action == PlanDrop {
		t.Fatal("the next client's Parse was answered from the cache")
	}
	if srv := b.stmts["b"].srv; srv == old || srv == mid {
		t.Fatalf("the next client's statement is %s, prepared before the transaction's end", srv)
	}
	if len(pl.Closes) != 0 {
		t.Fatalf("closed %q, which a client holds", pl.Closes)
	}
	if pl := r.send(a, 'B', []byte("\x00a\x00\x00\x00\x00\x00\x00\x00")); pl.Inject || pl.NewName != old {
		t.Fatalf("Bind of the client's old statement: inject %v, name %q; want %q as it is", pl.Inject, pl.NewName, old)
	}
}

// TestUnheldStatementsDoomed: a server statement that no client holds any
// more (its clients closed it or left) is doomed before the server serves
// its next client, and does not show in that client's
// pg_prepared_statements; one another client still holds stays shared.
func TestUnheldStatementsDoomed(t *testing.T) {
	r := newStaleRig(t)
	a, b := r.client(), r.client()
	r.prepare(a, "a", "SELECT 1", "I")
	r.prepare(b, "b", "SELECT 2", "I")
	r.prepare(b, "b1", "SELECT 1", "I")
	one, two := a.stmts["a"].srv, b.stmts["b"].srv
	if r.limits.Held(one) != 2 || r.limits.Held(two) != 1 {
		t.Fatalf("held %d and %d, want 2 and 1", r.limits.Held(one), r.limits.Held(two))
	}
	a.Vanish(false, nil)
	a.Vanish(false, nil) // twice: counted once
	if r.limits.Held(one) != 1 {
		t.Fatalf("after a left, %s held by %d", one, r.limits.Held(one))
	}
	c := r.client()
	if pl := r.send(c, 'S', nil); len(pl.Closes) != 0 {
		t.Fatalf("closed %q, every statement is held", pl.Closes)
	}
	r.answer(c, 'Z', "I")
	// b closes one statement (the pooler answers the Close) and leaves
	// the other by DEALLOCATE.
	r.send(b, 'C', []byte("Sb\x00"))
	r.s.PopSynth()
	r.send(b, 'Q', []byte("DEALLOCATE b1\x00"))
	r.answer(b, 'C', "DEALLOCATE")
	r.answer(b, 'Z', "I")
	if r.limits.Held(one) != 0 || r.limits.Held(two) != 0 {
		t.Fatal("statements still held")
	}
	d := r.client()
	pl := r.send(d, 'P', parseBody("", "SELECT 3"))
	if !slices.Equal(pl.Closes, []string{two}) {
		// one was deallocated on the server by the client's DEALLOCATE.
		t.Fatalf("closed %q before the next client's first message, want %q", pl.Closes, []string{two})
	}
	if r.s.Statements() != 0 {
		t.Fatalf("the server's cache still holds %d", r.s.Statements())
	}
}

// TestDoomedCloseSkipped: no doomed statement is closed while the server
// skips messages after an error (the Close would get no answer, not even
// ahead of the Sync); the first message after the Sync closes it. A Close
// planned before the error reached the pooler, and skipped, is doomed
// again.
func TestDoomedCloseSkipped(t *testing.T) {
	r := newStaleRig(t)
	c := r.client()
	r.s.lru.add("x", 0)
	r.s.doom("x")
	r.s.skipping = true
	if pl := r.send(c, 'B', []byte("\x00\x00\x00\x00\x00\x00\x00\x00")); len(pl.Closes) != 0 {
		t.Fatalf("closes %q while the server skips", pl.Closes)
	}
	if pl := r.send(c, 'S', nil); len(pl.Closes) != 0 {
		t.Fatalf("closes %q ahead of the Sync that ends the skipping", pl.Closes)
	}
	r.answer(c, 'Z', "I")
	// A bad Parse, then a Describe with the Close ahead of it: the
	// error comes back for the Parse and the Close is skipped.
	pl := r.send(c, 'P', parseBody("", "SELEC 1"))
	if !slices.Equal(pl.Closes, []string{"x"}) {
		t.Fatalf("after the Sync: closes %q, want x", pl.Closes)
	}
	r.s.lru.add("y", 0)
	r.s.doom("y")
	if pl = r.send(c, 'D', []byte("S\x00")); !slices.Equal(pl.Closes, []string{"y"}) {
		t.Fatalf("closes %q, want y", pl.Closes)
	}
	r.answer(c, '3', "") // x closed
	r.answer(c, 'E', "") // the Parse failed: y's Close and the Describe are skipped
	if !slices.Equal(r.s.doomed, []string{"y"}) {
		t.Fatalf("after a skipped Close, doomed %q, want y again", r.s.doomed)
	}
	r.send(c, 'S', nil)
	r.answer(c, 'Z', "I")
	if r.s.Pending() != 0 {
		t.Fatalf("%d answers still owed", r.s.Pending())
	}
	// No Close ahead of a simple Query.
	if pl := r.send(c, 'Q', []byte("SELECT 1\x00")); len(pl.Closes) != 0 {
		t.Fatalf("closes %q ahead of a simple Query", pl.Closes)
	}
}

// Held reports how many clients hold a statement under server-side name
// name.
func (l *Limits) Held(name string) int { return int(l.Refs.held(name)) }

// TestSQLDeallocateOfADoomedStatement: the SQL DEALLOCATE of a client's
// statement the server holds only as a doomed copy closes that copy and
// deallocates a placeholder, behind a Sync of the pooler's own; when the
// placeholder's Parse fails (a failed transaction), the server's error
// and ReadyForQuery for it stay with the pooler, the Query gets its own
// answer, and the client keeps its statement.
func TestSQLDeallocateOfADoomedStatement(t *testing.T) {
	const q = "SELECT $1::e"
	r := newStaleRig(t)
	r.limits.MaxPrepared = 1
	// prepare evicts the statement the server holds (the answer to
	// the Close is swallowed).
	prepare := func(c *Client, name, q, status string) {
		pl := r.send(c, 'P', parseBody(name, q))
		if pl.CloseName != "" && r.answer(c, '3', "") || !r.answer(c, '1', "") {
			t.Fatalf("prepare %s: plan %+v", name, pl)
		}
		r.send(c, 'S', nil)
		r.answer(c, 'Z', status)
	}
	a := r.client()
	prepare(a, "a", q, "I")
	prepare(a, "b", "SELECT 2", "I")
	e := r.client()
	r.query(e, "BEGIN", "BEGIN", "T")
	prepare(e, "e", q, "T")
	r.query(e, "ROLLBACK", "ROLLBACK", "I")
	if r.s.Statements() != 0 || len(r.s.doomed) != 1 {
		t.Fatalf("cache %d, doomed %v", r.s.Statements(), r.s.doomed)
	}
	srv := r.s.doomed[0]
	r.query(a, "BEGIN", "BEGIN", "T")
	r.send(a, 'Q', []byte("SELECT 1/0\x00"))
	r.answer(a, 'E', "")
	r.answer(a, 'Z', "E")
	pl := r.send(a, 'Q', []byte("DEALLOCATE a\x00"))
	if pl.Action != PlanReplace || pl.Replace != "DEALLOCATE "+srv || pl.CloseName != srv ||
		!pl.Inject || pl.InjName != srv || len(pl.InjRest) != 3 || !pl.InjSync {
		t.Fatalf("plan %+v", pl)
	}
	if a.Statements() != 1 {
		t.Fatal("the statement is still the client's while its DEALLOCATE runs")
	}
	for _, m := range []struct {
		typ     byte
		body    string
		forward bool
	}{
		{'3', "", false}, // the Close
		{'E', "", false}, // the placeholder's Parse, refused
		{'Z', "E", false},
		{'E', "", true}, // the DEALLOCATE, refused
		{'Z', "E", true},
	} {
		if got := r.answer(a, m.typ, m.body); got != m.forward {
			t.Fatalf("%c %s: forward %v", m.typ, m.body, got)
		}
	}
	if r.s.Pending() != 0 || r.s.skipping {
		t.Fatalf("pending %d, skipping %v", r.s.Pending(), r.s.skipping)
	}
	if a.Statements() != 2 {
		t.Fatal("a refused DEALLOCATE took the client's statement")
	}
	if !slices.Contains(r.s.doomed, srv) {
		t.Fatalf("doomed %v: the placeholder may be there", r.s.doomed)
	}
}
