package pooler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
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
		{"reach", 14, true, (*soakClient).opReach},
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
		{"deallocate", 3, false, (*soakClient).opDeallocate},
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

// soakStateQuery reads the whole session state of the client's server:
// every kind the pooler must keep apart. SQL-level prepared statements
// only (from_sql): statements prepared through the protocol are the
// pooler's shared cache on that server, by design, not the client's
// state. Cursors: every one but the unnamed portal, which is this
// query's own in the extended protocol. Custom parameters are not in
// pg_settings: the soak's own (soak.owner) is read by name.
const soakStateQuery = `SELECT coalesce(current_setting('soak.owner', true), ''), current_user::text,
	coalesce((SELECT string_agg(o, ',' ORDER BY o) FROM (
		SELECT relname::text FROM pg_class WHERE relnamespace = pg_my_temp_schema()
		UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = pg_my_temp_schema()
		UNION ALL SELECT 'type ' || typname FROM pg_type t WHERE typnamespace = pg_my_temp_schema() AND typrelid = 0
			AND NOT (typcategory = 'A' AND EXISTS (SELECT FROM pg_type e WHERE e.oid = t.typelem AND e.typrelid <> 0))) o(o)), ''),
	coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM pg_cursors WHERE name <> ''), ''),
	coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM pg_prepared_statements WHERE from_sql), ''),
	coalesce((SELECT string_agg(ch, ',' ORDER BY ch) FROM pg_listening_channels() ch), ''),
	coalesce((SELECT string_agg(CASE WHEN classid = 0 AND objsubid = 1 AND mode = 'ExclusiveLock' AND granted THEN objid::text
		ELSE format('%s/%s/%s/%s/%s', classid, objid, objsubid, mode, granted) END, ',' ORDER BY 1)
		FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), ''),
	session_user::text,
	coalesce((SELECT string_agg(name || '=' || setting, E'\n' ORDER BY name) FROM pg_settings WHERE source = 'session'), ''),
	pg_backend_pid()::text`

// check is the state-diff oracle: it reads the whole session state of the
// client's server (soakStateQuery) and asserts that it is what the
// policy promises the client: under preserve exactly the model, under
// reset exactly what the open transaction made (nothing outside one).
// step runs it before three ops in four, as the first statement on the
// server the client is handed (or is pinned to); opTxn and opReach at
// the start of half their transactions; opReach always after its way.
func (c *soakClient) check() {
	rows := c.ok(soakStateQuery)
	if len(rows) != 1 || len(rows[0]) != 10 {
		c.r.fail(c, false, "state check returned %v", rows)
		return
	}
	got := rows[0]
	c.r.count(func() { c.r.checks++ })
	var settings []string // name=value
	if got[8] != "" {
		settings = strings.Split(got[8], "\n")
	}
	var setNames []string // the names only: values are not logged
	for _, s := range settings {
		setNames = append(setNames, s[:strings.IndexByte(s, '=')])
	}
	c.logf("   (server pid %s, state %q, session settings %v)", got[9], got[:8], setNames)
	// What the policy promises: under preserve exactly the model (the
	// client's state follows it); under reset exactly what the open
	// transaction made (txnOwner, txnRole, localRole, held in a
	// transaction), since the server of every earlier transaction was
	// cleaned when it went back.
	preserve := c.r.sc.policy == PolicyPreserve
	why := "reset: made in this transaction"
	if preserve {
		why = "preserve"
	}
	wantOwner := ""
	switch {
	case c.txnOwner:
		wantOwner = c.name
	case preserve:
		wantOwner = c.owner
	}
	wantUser := pgtest.SuperUser
	if c.txnRole || c.localRole || preserve && c.role {
		wantUser = soakRole
	}
	var bad []string
	switch {
	case got[0] != "" && got[0] != c.name:
		bad = append(bad, fmt.Sprintf("soak.owner is %q (another client's)", got[0]))
	case got[0] != wantOwner:
		bad = append(bad, fmt.Sprintf("soak.owner is %q, want %q (%s)", got[0], wantOwner, why))
	}
	switch {
	case got[1] != pgtest.SuperUser && got[1] != soakRole:
		bad = append(bad, fmt.Sprintf("current_user is %q", got[1]))
	case got[1] != wantUser:
		bad = append(bad, fmt.Sprintf("current_user is %q, want %q (%s)", got[1], wantUser, why))
	}
	if got[7] != pgtest.SuperUser {
		bad = append(bad, fmt.Sprintf("session_user is %q, want %q", got[7], pgtest.SuperUser))
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
		held := c.held[k] && (preserve || c.inTxn)
		switch {
		case v != "" && v != want[k]:
			bad = append(bad, fmt.Sprintf("%s state is %q, not this client's (%s)", k, v, want[k]))
		case held && v != want[k]:
			bad = append(bad, fmt.Sprintf("%s state %s is gone while the client holds it (%s)", k, want[k], why))
		case !held && v != "":
			bad = append(bad, fmt.Sprintf("%s state %s is there, the client does not hold it (%s)", k, v, why))
		}
	}
	// Settings changed in the session: only the parameters the pooler
	// applies for the client from its startup packet (the tracked ones,
	// application_name being the client's name) and, in a transaction,
	// the client's own SET LOCAL search_path. The soak sets no other.
	for _, s := range settings {
		name, val, _ := strings.Cut(s, "=")
		switch {
		case strings.EqualFold(name, "application_name"):
			if val != c.name {
				bad = append(bad, "application_name is not this client's")
			}
		case engine.IsTracked(name):
		case name == "search_path" && c.inTxn && c.local != "":
			if val != c.local {
				bad = append(bad, "search_path is not the one this client SET LOCAL")
			}
		default:
			bad = append(bad, fmt.Sprintf("setting %s is changed in the session (source session), not by this client", name))
		}
	}
	if c.inTxn && c.local != "" && !strings.Contains(got[8], "search_path=") {
		bad = append(bad, "the client's SET LOCAL search_path is gone inside its transaction")
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
		c.r.fail(c, false, "session state check (in transaction %v) on server pid %s: %s; saw %q, session settings %v\n%s",
			c.inTxn, got[9], strings.Join(bad, "; "), got[:8], setNames, others.String())
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
