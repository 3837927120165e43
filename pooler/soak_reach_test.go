package pooler

import (
	"fmt"
	"strings"
)

// The soak's ways to make session state through code a statement does not
// name: each sets the client's soak.owner or its role. The state-diff oracle that
// checks the result is check (soak_ops_test.go).

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
		if way != "decoy" {
			c.reached(what)
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

// reached updates the model after a way set the client's own soak.owner
// (what "owner") or its role ("role") and its transaction committed:
// exactly as the SET of opSet or opRole would.
func (c *soakClient) reached(what string) {
	if what == "role" {
		c.role = true
	} else {
		c.owner = c.name
	}
}
