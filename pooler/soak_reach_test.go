package pooler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// The soak's state-diff oracle and the ways of issue 39: code that a
// statement does not name sets the client's soak.owner or its role.

// soakReachSetup creates, once per TestSoak, the objects through which a
// client sets its own soak.owner (to its name, taken from the statement)
// or its role (soak_role) without naming set_config or SET: a view's
// column, a column default, a trigger, a CHECK constraint, a row
// security policy, an operator and a function that shadows upper()
// through search_path. soak.reach is the one routine they all reach.
const soakReachSetup = `
CREATE SCHEMA IF NOT EXISTS soak;
CREATE SCHEMA IF NOT EXISTS soak_shadow;
GRANT USAGE ON SCHEMA soak, soak_shadow TO PUBLIC;
CREATE OR REPLACE FUNCTION soak.reach(n text, what text) RETURNS text LANGUAGE plpgsql AS $f$BEGIN
	IF what = 'role' THEN PERFORM set_config('role', '` + soakRole + `', false);
	ELSE PERFORM set_config('soak.owner', n, false);
	END IF;
	RETURN n;
END$f$;
CREATE OR REPLACE FUNCTION soak.reach_eq(a text, b text) RETURNS bool LANGUAGE plpgsql AS $f$BEGIN PERFORM soak.reach(a, b); RETURN true; END$f$;
DO $d$BEGIN CREATE OPERATOR soak.=== (leftarg = text, rightarg = text, function = soak.reach_eq); EXCEPTION WHEN duplicate_function THEN NULL; END$d$;
CREATE OR REPLACE FUNCTION soak.reach_trg() RETURNS trigger LANGUAGE plpgsql AS $f$BEGIN PERFORM soak.reach(NEW.name, NEW.what); RETURN NEW; END$f$;
CREATE OR REPLACE FUNCTION soak_shadow.upper(s text) RETURNS text LANGUAGE plpgsql AS $f$BEGIN
	PERFORM soak.reach(s, CASE WHEN s = '` + soakRole + `' THEN 'role' ELSE 'owner' END);
	RETURN s;
END$f$;
CREATE TABLE IF NOT EXISTS soak.names (name text PRIMARY KEY);
INSERT INTO soak.names SELECT 'c' || g FROM generate_series(1, 64) g ON CONFLICT DO NOTHING;
CREATE OR REPLACE VIEW soak_reach_v AS SELECT n.name, w.what, soak.reach(n.name, w.what) AS r
	FROM soak.names n CROSS JOIN (VALUES ('owner'), ('role')) w(what);
CREATE TABLE IF NOT EXISTS soak_reach_d (name text, r text DEFAULT soak.reach('', 'role'));
CREATE TABLE IF NOT EXISTS soak_reach_t (name text, what text);
CREATE OR REPLACE TRIGGER soak_reach_t BEFORE INSERT ON soak_reach_t FOR EACH ROW EXECUTE FUNCTION soak.reach_trg();
CREATE TABLE IF NOT EXISTS soak_reach_c (name text, what text, CHECK (soak.reach(name, what) IS NOT NULL));
CREATE TABLE IF NOT EXISTS soak_reach_rls (name text PRIMARY KEY);
INSERT INTO soak_reach_rls SELECT name FROM soak.names ON CONFLICT DO NOTHING;
ALTER TABLE soak_reach_rls ENABLE ROW LEVEL SECURITY;
ALTER TABLE soak_reach_rls FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS soak_reach_p ON soak_reach_rls;
CREATE POLICY soak_reach_p ON soak_reach_rls USING (soak.reach(name, 'owner') IS NOT NULL);
TRUNCATE soak_reach_d, soak_reach_t, soak_reach_c;
GRANT SELECT, INSERT ON soak_reach_v, soak_reach_d, soak_reach_t, soak_reach_c, soak_reach_rls TO ` + soakRole + `;`

// soakReachWays are the ways of opReach; "decoy" calls upper() without the
// shadowing search_path: the built-in runs and nothing changes.
var soakReachWays = []string{"view", "default", "trigger", "check", "policy", "operator", "shadow", "decoy"}

// opReach sets the client's soak.owner or its role through code its
// statement does not name, in autocommit or in a transaction that
// commits, rolls back or fails (a rolled-back set_config is undone: the
// model changes only on COMMIT), and then checks the state as the next
// statement (a new hand-out).
func (c *soakClient) opReach() {
	way := soakReachWays[c.rng.IntN(len(soakReachWays))]
	c.r.count(func() { c.r.ops["reach:"+way]++ })
	what := "owner"
	switch {
	case way == "default":
		what = "role" // a default cannot see the row's name
	case way == "policy" || way == "decoy":
	case c.rng.IntN(3) == 0:
		what = "role"
	}
	// The policy is reached as soak_role (superusers bypass row
	// security), the shadow under a search_path: both SET LOCAL, so in a
	// transaction.
	inTxn := way == "policy" || way == "shadow" || c.rng.IntN(3) == 0
	if inTxn {
		c.ok("BEGIN")
		if c.rng.IntN(2) == 0 {
			c.check()
		}
	}
	// lit: the name is in the text, not a parameter.
	lit := c.rng.IntN(2) == 0
	arg := c.name
	if what == "role" {
		arg = soakRole
	}
	run := func(sql string, args ...any) [][]string {
		if lit {
			for i, a := range args {
				sql = strings.Replace(sql, fmt.Sprintf("$%d", i+1), fmt.Sprintf("'%s'", a), 1)
			}
			args = nil
		}
		return c.ok(sql, args...)
	}
	var rows [][]string
	want := ""
	switch way {
	case "view":
		rows, want = run("SELECT r FROM soak_reach_v WHERE name = $1 AND what = $2", c.name, what), c.name
	case "default":
		run("INSERT INTO soak_reach_d (name) VALUES ($1)", c.name)
	case "trigger":
		run("INSERT INTO soak_reach_t (name, what) VALUES ($1, $2)", c.name, what)
	case "check":
		run("INSERT INTO soak_reach_c (name, what) VALUES ($1, $2)", c.name, what)
	case "policy":
		c.ok("SET LOCAL ROLE " + soakRole)
		c.localRole = true
		if c.rng.IntN(3) == 0 {
			c.check()
		}
		rows, want = run("SELECT count(*)::text FROM soak_reach_rls WHERE name = $1", c.name), "1"
	case "operator":
		rows, want = run("SELECT ($1::text OPERATOR(soak.===) $2::text)::text", c.name, what), "true"
	case "shadow":
		c.ok("SET LOCAL search_path = soak_shadow, pg_catalog")
		c.local = "soak_shadow, pg_catalog"
		if c.rng.IntN(3) == 0 {
			c.check()
		}
		rows, want = run("SELECT upper($1::text)", arg), arg
	case "decoy":
		rows, want = run("SELECT upper($1::text)", c.name), strings.ToUpper(c.name)
	}
	if want != "" && (len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != want) {
		c.r.fail(c, false, "reach %s answered %v, want %s", way, rows, want)
	}
	set := func() {
		switch {
		case way == "decoy":
		case what == "role":
			c.role = true
		default:
			c.owner = c.name
		}
	}
	if !inTxn {
		set()
		c.check()
		return
	}
	// Inside the transaction the server has the state, whatever the
	// policy.
	c.txnOwner = way != "decoy" && what == "owner"
	c.txnRole = way != "decoy" && what == "role"
	if c.rng.IntN(3) == 0 {
		c.check()
	}
	switch n := c.rng.IntN(10); {
	case n < 6:
		c.commit()
		set()
	case n < 8:
		c.rollback()
	default:
		c.q("SELECT 1/0", []string{"22012"})
		if c.rng.IntN(2) == 0 {
			c.commit() // answered ROLLBACK
		} else {
			c.rollback()
		}
	}
	c.local, c.localRole, c.txnOwner, c.txnRole = "", false, false, false
	c.check()
}

// soakStateQuery reads the whole session state of the client's server:
// every kind the pooler must keep apart. SQL-level prepared statements
// only (from_sql): statements prepared through the protocol are the
// pooler's shared cache on that server, by design, not the client's
// state. Cursors: every one but the unnamed portal, which is this query's
// own in the extended protocol. Custom parameters are not in pg_settings: the soak's own
// (soak.owner) is read by name.
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
// step runs it before most ops, as the first
// statement on the server the client is handed; opTxn and opReach at the
// start of transactions; opReach always after its way.
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
