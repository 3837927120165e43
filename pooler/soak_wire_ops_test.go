package pooler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

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
	// reach: the batch also sets the client's soak.owner or role through
	// a trigger (opReach), kept only if the batch commits.
	reach := ""
	if c.rng.IntN(4) == 0 {
		reach = []string{"owner", "role"}[c.rng.IntN(2)]
		c.r.count(func() { c.r.ops["reach:batch"]++ })
		b.Queue("INSERT INTO soak_reach_t (name, what) VALUES ($1, $2)", c.name, reach)
		wants = append(wants, want{kind: "reach"})
	}
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
		case "error", "reach":
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
		if reach != "" {
			c.reached(reach)
			c.check()
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

// soakSharedTexts are the texts opDeallocate prepares: every client's
// statement of one text is one statement on a server.
var soakSharedTexts = []string{"SELECT $1::text", "SELECT $1::text AS soak_v"}

// opDeallocate prepares a protocol statement of a text all clients share
// (a server holds it under one name, which another client's rollback may
// have doomed), now and then in a transaction that rolls back, and drops
// it with the SQL DEALLOCATE in the simple protocol, as psycopg 3 does,
// sometimes in a failed transaction first (in either protocol): every
// answer is PostgreSQL's own, and a DEALLOCATE that a failed transaction
// refuses leaves the statement in place.
func (c *soakClient) opDeallocate() {
	ctx, cancel := context.WithTimeout(context.Background(), c.r.opLimit)
	defer cancel()
	pc := c.pgx.PgConn()
	name := "soak_dp_" + c.name
	run := func(what, want string, f func() error) {
		c.begin(what)
		err := f()
		c.endOp(err)
		switch {
		case want == "":
			c.afterErr(ctx, err, what)
		case sqlState(err) == want:
			c.r.count(func() { c.r.errs[want]++ })
		case err == nil:
			c.r.fail(c, false, "%s succeeded; PostgreSQL answers %s", what, want)
		default:
			c.afterErr(ctx, err, what)
		}
	}
	exec := func(sql, want string) {
		run(sql, want, func() error { _, err := pc.Exec(ctx, sql).ReadAll(); return err })
	}
	use := func(want string) {
		v := fmt.Sprint(c.rng.IntN(1 << 20))
		run("execute "+name, want, func() error {
			res := pc.ExecPrepared(ctx, name, [][]byte{[]byte(v)}, nil, nil).Read()
			if res.Err == nil && (len(res.Rows) != 1 || string(res.Rows[0][0]) != v) {
				c.r.fail(c, false, "cross-talk: %s answered %q, want %s", name, res.Rows, v)
			}
			return res.Err
		})
	}
	mode := c.rng.IntN(3)
	if mode == 1 {
		exec("BEGIN", "")
		c.inTxn = true
	}
	text := soakSharedTexts[c.rng.IntN(len(soakSharedTexts))]
	run("prepare "+name+" as "+text, "", func() error { _, err := pc.Prepare(ctx, name, text, nil); return err })
	use("")
	switch mode {
	case 1:
		// A protocol statement outlives the rollback; the server's
		// copy, if first prepared here, is doomed.
		exec("ROLLBACK", "")
		c.inTxn = false
		use("")
	case 2:
		exec("BEGIN", "")
		c.inTxn = true
		exec("SELECT 1/0", "22012")
		if c.rng.IntN(2) == 0 {
			exec("DEALLOCATE "+name, "25P02")
		} else {
			run("DEALLOCATE "+name+" (extended)", "25P02", func() error {
				return pc.ExecParams(ctx, "DEALLOCATE "+name, nil, nil, nil, nil).Read().Err
			})
		}
		exec("ROLLBACK", "")
		c.inTxn = false
		use("")
	}
	if c.rng.IntN(2) == 0 {
		c.gap("before DEALLOCATE")
	}
	exec("DEALLOCATE "+name, "")
	use("26000")
}
