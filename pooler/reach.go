package pooler

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// What a statement reaches without naming it. PostgreSQL runs code that a
// statement's text does not name: a view's or a rule's query, column
// defaults, CHECK constraints, row security policies, triggers (also of
// tables a foreign key cascades to, of partitions and of inheritance
// children), index expressions, domain checks, the functions of
// operators and casts, event triggers on DDL, and a user function that
// shadows a built-in one through search_path. Any of these may make
// session state (a role, a parameter, a lock, a channel, a temporary
// object) that would reach the next client of the server.
//
// The pooler reads, per database, which words reach such code: the names
// of relations, types, operators and of user functions that shadow
// built-in names, and the DDL keywords when event triggers exist, each
// with the user routines it reaches (reachQuery: a walk of pg_depend from
// every user routine back to what depends on it, plus foreign keys and
// inheritance, and the expressions that call set_config or a session
// advisory lock function directly). A statement whose text holds one of
// those words counts as calling those routines (reachCalls): a routine
// known to change nothing costs nothing more; any other gets the server's
// state read back before the server serves anyone else, exactly as an
// explicit call does (routines.go). The words are matched anywhere in
// the text, case-insensitively, in comments and strings too: a false
// match only costs a read.
//
// The reach is kept for routineTTL and forgotten with the routines'
// verdicts when a statement through the pooler changes what code can run
// (effects.RoutineChange: CREATE/ALTER of views, tables, triggers,
// policies, types, operators, casts, …). A change made on the server
// directly, not through this pooler, is seen within routineTTL: a
// statement classified while the reach is older than that is kept
// (reachPending) and, at the read that follows its transaction, the
// reach is read again first and the statement matched against it.

// Names of CallRoutine effects made here (never a routine's name, which
// has no control byte).
const (
	// reachPending prefixes the text of a statement whose reach is found
	// when it runs (engine.ReachPending): a prepared statement's, or one
	// classified while the database's reach was not known (or too old).
	reachPending = engine.ReachPending
	// reachAll stands for such a statement too long to keep: it counts
	// as reaching everything the reach lists.
	reachAll = "\x00reach-all"
)

// maxPendingText is the longest statement text kept while the reach is
// unknown, and maxPending how many calls a client may have made since
// its last verification for one more text to be kept: a long transaction
// of distinct statements counts as reaching everything instead.
const (
	maxPendingText = 16 << 10
	maxPending     = 64
)

// reachSnap is what reachQuery read of one database.
type reachSnap struct {
	words map[string][]string // lower-case word: the routines it reaches
	ops   map[string][]string // operator name: the routines it reaches
	all   []string            // every routine any word reaches
	gen   uint64
	at    time.Time
}

// empty reports whether nothing in the database reaches user code.
func (rs *reachSnap) empty() bool { return len(rs.words) == 0 && len(rs.ops) == 0 }

// reachFor returns the reach of database db if it is known and fresh.
// It takes no lock: every statement of every client asks.
func (rc *routineCache) reachFor(db string, now time.Time) (*reachSnap, bool) {
	var rs *reachSnap
	if k := rc.known(db); k != nil {
		rs = k.reach
	}
	if rs == nil || rs.gen != rc.gen.Load() || now.Sub(rs.at) > routineTTL {
		return rs, false
	}
	return rs, true
}

// parseReach decodes the answer to reachQuery.
func parseReach(row []string, gen uint64, at time.Time) (*reachSnap, error) {
	if len(row) != 1 {
		return nil, errBadInternalAnswer
	}
	var pairs [][2]string
	if err := json.Unmarshal([]byte(row[0]), &pairs); err != nil {
		return nil, err
	}
	rs := &reachSnap{gen: gen, at: at}
	seen := make(map[string]bool)
	for _, p := range pairs {
		w, fn := strings.ToLower(p[0]), p[1]
		if w == "" {
			continue
		}
		if fn == "" {
			// An expression that calls set_config or a session advisory
			// lock function itself: read like an opaque DO block.
			fn = effects.OpaqueDOBlock
		}
		if operatorName(w) {
			if rs.ops == nil {
				rs.ops = make(map[string][]string)
			}
			rs.ops[w] = appendOnce(rs.ops[w], fn)
		} else {
			if rs.words == nil {
				rs.words = make(map[string][]string)
			}
			rs.words[w] = appendOnce(rs.words[w], fn)
		}
		if !seen[fn] {
			seen[fn] = true
			rs.all = append(rs.all, fn)
		}
	}
	return rs, nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// operatorName reports whether w is made of operator characters.
func operatorName(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isOpChar(w[i]) {
			return false
		}
	}
	return true
}

func isOpChar(b byte) bool {
	switch b {
	case '+', '-', '*', '/', '<', '>', '=', '~', '!', '@', '#', '%', '^', '&', '|', '`', '?':
		return true
	}
	return false
}

func isWordStart(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b >= 0x80
}

func isWordByte(b byte) bool { return isWordStart(b) || b >= '0' && b <= '9' || b == '$' }

// reached calls fn with every routine that the words of text reach in rs
// (a routine may come more than once). Words are compared lower-case and
// cut at 63 bytes, as PostgreSQL cuts identifiers; operators match
// inside any run of operator characters.
func (rs *reachSnap) reached(text string, fn func(routine string)) {
	var buf [63]byte
	for i := 0; i < len(text); {
		b := text[i]
		switch {
		case isWordStart(b):
			j := i + 1
			for j < len(text) && isWordByte(text[j]) {
				j++
			}
			if len(rs.words) > 0 {
				n := min(j-i, len(buf))
				for k := 0; k < n; k++ {
					c := text[i+k]
					if c >= 'A' && c <= 'Z' {
						c += 'a' - 'A'
					}
					buf[k] = c
				}
				for _, r := range rs.words[string(buf[:n])] {
					fn(r)
				}
			}
			i = j
		case isOpChar(b):
			j := i + 1
			for j < len(text) && isOpChar(text[j]) {
				j++
			}
			for op, rs := range rs.ops {
				if strings.Contains(text[i:j], op) {
					for _, r := range rs {
						fn(r)
					}
				}
			}
			i = j
		case b >= '0' && b <= '9':
			for i < len(text) && isWordByte(text[i]) {
				i++
			}
		default:
			i++
		}
	}
}

// reachCalls adds to effs, the effects of the client's statement text
// (of a Query, or of a Parse when parse is set), what the statement
// reaches without naming it. A query runs now: it gets a CallRoutine
// effect for every routine it reaches that may change state (Reach). A
// prepared statement runs later, maybe many times, and each run must be
// matched against the reach as it is then: it gets a ReachPending call
// with its text, which the engine resolves when the statement runs
// (Reach again); so does a query when the reach is not known now (the
// read after its transaction matches it). It returns effs itself when
// nothing is added (effs may be the classifier's cached slice: it is
// never changed).
func (c *clientConn) reachCalls(text string, effs []StateEffect, parse bool) []StateEffect {
	out := effs[:len(effs):len(effs)]
	if !parse {
		if routines, known := c.Reach(text); known {
			for _, r := range routines {
				out = append(out, StateEffect{Kind: effects.CallRoutine, Name: r})
			}
			return out
		}
	}
	name := reachAll
	if len(text) <= maxPendingText && (parse || c.eng.Session.Calls() < maxPending) {
		name = reachPending + text
	}
	return append(out, StateEffect{Kind: effects.CallRoutine, Name: name})
}

// maxSQLPrepared is how many SQL-level PREPARE texts a client keeps for
// what its EXECUTEs reach; beyond that an EXECUTE reaches everything.
const maxSQLPrepared = 256

// sqlPrepareReach follows SQL-level PREPARE and EXECUTE in the client's
// query text (with its effects effs): an EXECUTE runs a statement whose
// text it does not hold, so it gets the ReachPending calls of the texts
// the client prepared (all of them: which one it runs is not read here).
// It returns effs itself when nothing is added.
func (c *clientConn) sqlPrepareReach(text string, effs []StateEffect) []StateEffect {
	for _, e := range effs {
		switch e.Kind {
		case effects.Prepare:
			if c.sqlPrepared == nil {
				c.sqlPrepared = make(map[string]string)
			}
			if len(c.sqlPrepared) < maxSQLPrepared && len(text) <= maxPendingText {
				c.sqlPrepared[e.Name] = strings.Clone(text)
			} else {
				c.sqlPrepared[e.Name] = ""
			}
		case effects.Deallocate:
			delete(c.sqlPrepared, e.Name)
		case effects.DeallocateAll, effects.DiscardAll:
			c.sqlPrepared = nil
		}
	}
	if len(c.sqlPrepared) == 0 || !containsWordFold(text, "execute") {
		return effs
	}
	out := effs[:len(effs):len(effs)]
	for _, t := range c.sqlPrepared {
		name := reachAll
		if t != "" {
			name = reachPending + t
		}
		out = append(out, StateEffect{Kind: effects.CallRoutine, Name: name})
	}
	return out
}

// containsWordFold reports whether text holds word (lower-case) as a
// whole word, in any case.
func containsWordFold(text, word string) bool {
	for i := 0; i+len(word) <= len(text); i++ {
		if (i == 0 || !isWordByte(text[i-1])) && strings.EqualFold(text[i:i+len(word)], word) &&
			(i+len(word) == len(text) || !isWordByte(text[i+len(word)])) {
			return true
		}
	}
	return false
}

// Reach implements engine.Reacher: the routines the statement text
// reaches in the client's database that are not known to change nothing,
// or known false when the reach is not known now.
func (c *clientConn) Reach(text string) (routines []string, known bool) {
	p := c.proxy
	db := c.pool.key.database
	now := time.Now()
	rs, fresh := p.routines.reachFor(db, now)
	if !fresh {
		return nil, false
	}
	if rs.empty() {
		return nil, true
	}
	rs.reached(text, func(r string) {
		if slices.Contains(routines, r) || r != effects.OpaqueDOBlock && p.changesNothing(db, r, now) {
			return
		}
		routines = append(routines, r)
	})
	return routines, true
}

// reachQuery reads which words of a statement reach user code in the
// current database: a JSON array of [word, routine] pairs, the routine
// schema-qualified, or "" for an expression that calls set_config or a
// session advisory lock function itself. It walks pg_depend backwards
// from every user routine (and from those expressions): to what uses it
// (a view's or rule's query, a default, a constraint, a policy, a
// trigger, an index, an operator, a cast, a type), to what owns that (a
// table owns its defaults, constraints, policies, triggers, rules and
// indexes), to the tables whose foreign keys a delete or update cascades
// from, and to the parents of partitions and inheritance children. Every
// name is schema-qualified: the client's search_path does not apply.
const reachQuery = `WITH RECURSIVE k(pat) AS (
  SELECT ':funcid (' || pg_catalog.string_agg(oid::text, '|') || ') ' FROM pg_catalog.pg_proc
   WHERE pronamespace = 11 AND proname IN ('set_config', 'pg_advisory_lock', 'pg_advisory_lock_shared',
     'pg_try_advisory_lock', 'pg_try_advisory_lock_shared')
), b(f, c, o) AS (
  SELECT oid, 'pg_catalog.pg_proc'::pg_catalog.regclass, oid FROM pg_catalog.pg_proc WHERE oid >= 16384
  UNION ALL
  SELECT 0, 'pg_catalog.pg_rewrite'::pg_catalog.regclass, r.oid FROM pg_catalog.pg_rewrite r, k
   WHERE r.oid >= 16384 AND r.ev_action::text ~ k.pat
  UNION ALL
  SELECT 0, 'pg_catalog.pg_attrdef'::pg_catalog.regclass, a.oid FROM pg_catalog.pg_attrdef a, k
   WHERE a.oid >= 16384 AND a.adbin::text ~ k.pat
  UNION ALL
  SELECT 0, 'pg_catalog.pg_constraint'::pg_catalog.regclass, c.oid FROM pg_catalog.pg_constraint c, k
   WHERE c.oid >= 16384 AND c.conbin::text ~ k.pat
  UNION ALL
  SELECT 0, 'pg_catalog.pg_policy'::pg_catalog.regclass, p.oid FROM pg_catalog.pg_policy p, k
   WHERE p.polqual::text ~ k.pat OR p.polwithcheck::text ~ k.pat
  UNION ALL
  SELECT 0, 'pg_catalog.pg_class'::pg_catalog.regclass, i.indexrelid FROM pg_catalog.pg_index i, k
   WHERE i.indexrelid >= 16384 AND (i.indexprs::text ~ k.pat OR i.indpred::text ~ k.pat)
  UNION ALL
  SELECT 0, 'pg_catalog.pg_trigger'::pg_catalog.regclass, t.oid FROM pg_catalog.pg_trigger t, k
   WHERE t.oid >= 16384 AND t.tgqual::text ~ k.pat
  UNION
  SELECT b.f, x.c, x.o FROM b CROSS JOIN LATERAL (
    SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
     WHERE d.refclassid = b.c AND d.refobjid = b.o AND d.deptype = 'n' AND d.classid <> 'pg_catalog.pg_proc'::pg_catalog.regclass
    UNION ALL
    SELECT d.refclassid, d.refobjid FROM pg_catalog.pg_depend d
     WHERE d.classid = b.c AND d.objid = b.o AND d.deptype IN ('a', 'i') AND d.refobjid >= 16384
    UNION ALL
    SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, fk.confrelid FROM pg_catalog.pg_constraint fk
     WHERE b.c = 'pg_catalog.pg_class'::pg_catalog.regclass AND fk.conrelid = b.o AND fk.contype = 'f'
    UNION ALL
    SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, i.inhparent FROM pg_catalog.pg_inherits i
     WHERE b.c = 'pg_catalog.pg_class'::pg_catalog.regclass AND i.inhrelid = b.o
  ) x(c, o)
), w(w, f) AS (
  SELECT r.relname::text, b.f FROM b JOIN pg_catalog.pg_class r ON b.c = 'pg_catalog.pg_class'::pg_catalog.regclass AND r.oid = b.o
   WHERE r.relkind IN ('r', 'p', 'v', 'm', 'f')
  UNION ALL
  SELECT p.oprname::text, b.f FROM b JOIN pg_catalog.pg_operator p ON b.c = 'pg_catalog.pg_operator'::pg_catalog.regclass AND p.oid = b.o
  UNION ALL
  SELECT t.typname::text, b.f FROM b JOIN pg_catalog.pg_type t ON b.c = 'pg_catalog.pg_type'::pg_catalog.regclass AND t.oid = b.o
  UNION ALL
  SELECT t.typname::text, b.f FROM b JOIN pg_catalog.pg_cast k ON b.c = 'pg_catalog.pg_cast'::pg_catalog.regclass AND k.oid = b.o
    JOIN pg_catalog.pg_type t ON t.oid IN (k.castsource, k.casttarget)
  UNION ALL
  SELECT kw, b.f FROM b, pg_catalog.unnest(ARRAY['create', 'alter', 'drop', 'comment', 'grant', 'revoke', 'security',
     'import', 'refresh', 'reindex', 'into', 'truncate']) kw
   WHERE b.c = 'pg_catalog.pg_event_trigger'::pg_catalog.regclass
  UNION ALL
  SELECT p.proname::text, p.oid FROM pg_catalog.pg_proc p
   WHERE p.oid >= 16384 AND EXISTS (SELECT 1 FROM pg_catalog.pg_proc q WHERE q.pronamespace = 11 AND q.proname = p.proname)
)
SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_array(x.w, x.f)), '[]') FROM (
  SELECT DISTINCT w.w, coalesce(n.nspname || '.' || p.proname, '') AS f FROM w
    LEFT JOIN pg_catalog.pg_proc p ON p.oid = w.f LEFT JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
) x`
