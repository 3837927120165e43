package pooler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

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
		{"reach", 10, true, (*soakClient).opReach},
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
	if c.rng.IntN(2) == 0 {
		c.check() // the server the transaction is handed
	}
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
		c.owner = c.name
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
		c.owner = c.name
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
		c.role = true
	} else {
		c.ok("RESET ROLE")
		c.role = false
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
