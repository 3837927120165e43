package pooler

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Routines the clients call. A call of a routine that is not built in may
// change session state inside it, so the pooler reads the server's state
// after it (verify). To know what to read, and to spare that round trip
// for routines that change nothing, the pooler learns what each routine
// does: at the first verification after a call, on the same server, it
// reads the definition of every overload of the name (pg_get_functiondef),
// has the classifier analyze the body (RoutineAnalyzer: the PL/pgSQL and
// SQL-body analysis scan uses), follows the routines it calls, and caches
// the verdict. A routine known to change nothing is not verified; any
// other is, every time; one whose effects cannot be read from its text
// (opaque) also gets its server RESET ALL, since it may set custom
// parameters (names with a dot) that no catalog lists.
//
// Routines the operator trusts (Config.TrustedRoutines: by name, or every
// routine of an extension) count as changing nothing: C functions of
// extensions such as PostGIS would otherwise be read after every call.
//
// The verdict holds until a statement through the pooler creates, alters
// or drops a routine or a schema (effects.RoutineChange), and at most
// routineTTL: a routine replaced directly on the server, not through this
// pooler, is trusted as it was for that long at most. Verdicts are
// forgotten both when such a statement is classified and when its
// transaction ends (another client may have read the old definition in
// between, before the change committed).

// routineTrust is Config.TrustedRoutines: names (lower-case) trusted when
// called unqualified or in any schema, schema-qualified names trusted as
// written, and extensions whose routines are trusted.
type routineTrust struct {
	names, qualified, extensions map[string]bool
}

// parseTrust reads Config.TrustedRoutines.
func parseTrust(entries []string) (routineTrust, error) {
	var t routineTrust
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case strings.HasPrefix(e, "extension:"):
			name := strings.TrimSpace(strings.TrimPrefix(e, "extension:"))
			if name == "" {
				return t, fmt.Errorf("trusted_routines: %q names no extension", e)
			}
			engine.SetAdd(&t.extensions, name)
		case e == "" || strings.HasPrefix(e, ".") || strings.HasSuffix(e, "."):
			return t, fmt.Errorf("trusted_routines: %q is not a routine name (name, schema.name or extension:NAME)", e)
		case strings.Contains(e, "."):
			engine.SetAdd(&t.qualified, e)
		default:
			engine.SetAdd(&t.names, e)
		}
	}
	return t, nil
}

// trusted reports whether a call of name (lower-case, as written:
// "schema.name" or "name") is trusted by name.
func (t *routineTrust) trusted(name string) bool {
	if t.qualified[name] {
		return true
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return t.names[name]
}

// RoutineAnalyzer is implemented by classifiers that can tell from a
// routine's definition what calling it can do to session state: clean when
// its body changes nothing (the routines it calls aside), opaque when that
// cannot be read from its text; params are the parameters it may set,
// calls the routines it calls.
type RoutineAnalyzer interface {
	AnalyzeRoutine(def string) (clean, opaque bool, params, calls []string)
}

// routineTTL is how long a routine's verdict is kept.
const routineTTL = 5 * time.Second

// routineDepth is how deep calls of routines from routines are followed;
// deeper ones (and recursion) count as opaque.
const routineDepth = 4

// routineVerdict is what the pooler knows of a routine: clean or opaque
// (see RoutineAnalyzer) and the parameters it may set, the routines it
// calls included.
type routineVerdict struct {
	clean, opaque bool
	params        []string
}

type routineEntry struct {
	routineVerdict
	gen uint64
	at  time.Time
}

// routineCache keeps what the pooler learned per database: the verdicts
// per routine name and what statements reach (reach.go). Every statement
// reads it, and nothing takes a lock: each database's knowledge and the
// map of them are immutable, and store publishes a new map with
// CompareAndSwap, building it again when another store published first,
// so no store's knowledge is lost. gen is advanced by every routine
// change the pooler sees; an entry or a reach of an older generation is
// stale.
type routineCache struct {
	gen atomic.Uint64
	dbs atomic.Pointer[map[string]*dbKnown]
}

// dbKnown is what the pooler learned of one database; never changed once
// stored.
type dbKnown struct {
	verdicts map[string]routineEntry
	reach    *reachSnap
}

// known returns what the pooler learned of database db (nil: nothing).
func (rc *routineCache) known(db string) *dbKnown {
	if m := rc.dbs.Load(); m != nil {
		return (*m)[db]
	}
	return nil
}

// get returns the verdict on routine name of database db, if one is
// known.
func (rc *routineCache) get(db, name string, now time.Time) (routineVerdict, bool) {
	k := rc.known(db)
	if k == nil {
		return routineVerdict{}, false
	}
	e, ok := k.verdicts[name]
	if !ok || e.gen != rc.gen.Load() || now.Sub(e.at) > routineTTL {
		return routineVerdict{}, false
	}
	return e.routineVerdict, true
}

// clean reports whether routine name of database db is known to change no
// session state.
func (rc *routineCache) clean(db, name string, now time.Time) bool {
	v, ok := rc.get(db, name, now)
	return ok && v.clean
}

// store keeps, for database db, verdicts read in generation gen (may be
// empty) and the reach rs (nil: the one kept stays).
func (rc *routineCache) store(db string, verdicts map[string]routineVerdict, rs *reachSnap, gen uint64, now time.Time) {
	for {
		cur := rc.dbs.Load()
		next := make(map[string]*dbKnown)
		if cur != nil {
			maps.Copy(next, *cur)
		}
		k := &dbKnown{verdicts: make(map[string]routineEntry), reach: rs}
		if old := next[db]; old != nil {
			maps.Copy(k.verdicts, old.verdicts)
			if rs == nil {
				k.reach = old.reach
			}
		}
		for n, v := range verdicts {
			// A verdict read before a routine change is stale at once.
			k.verdicts[n] = routineEntry{routineVerdict: v, gen: gen, at: now}
		}
		next[db] = k
		if rc.dbs.CompareAndSwap(cur, &next) {
			return
		}
	}
}

// invalidate forgets every verdict and reach (a routine, a schema or an
// object that runs code changed).
func (rc *routineCache) invalidate() { rc.gen.Add(1) }

// changesNothing reports whether a call of routine name (lower-case, as
// written) by a client of database db is known to change no session
// state: the operator trusts it, or the pooler learned so.
func (p *Proxy) changesNothing(db, name string, now time.Time) bool {
	return p.trust.trusted(name) || p.routines.clean(db, name, now)
}

// knownClean returns the test for the classifier's pre-filter
// (KnownClassifier): whether a routine name, in any case, is known to
// change nothing in database db.
func (p *Proxy) knownClean(db string) func(name string) bool {
	return func(name string) bool {
		return p.changesNothing(db, strings.ToLower(name), time.Now())
	}
}

// knownCalls drops from effs the calls of routines known to change
// nothing, and forgets what the pooler knows of routines when a statement
// changes one. It returns effs itself when nothing is dropped (effs may
// be the classifier's cached slice: it is never changed).
func (c *clientConn) knownCalls(effs []StateEffect) []StateEffect {
	p := c.proxy
	db := c.pool.key.database
	now := time.Now()
	var out []StateEffect
	for i, e := range effs {
		switch {
		case e.Kind == effects.RoutineChange:
			p.routines.invalidate()
			c.routineChanged.Store(true)
		case e.Kind == effects.CallRoutine && e.Name != effects.DOBlock && e.Name != effects.OpaqueDOBlock &&
			p.changesNothing(db, e.Name, now):
			if out == nil {
				out = append(make([]StateEffect, 0, len(effs)), effs[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, e)
		}
	}
	if out == nil {
		return effs
	}
	return out
}

// stateRead reads what a client's statements left on its server in ways
// only the server knows (verify), without doing any I/O itself: a driver
// sends the query next returns on the server and gives answer the first
// row of its answer (or the error), until next returns "". First the
// routines the client called that the pooler does not know yet are
// learned, a round trip per level of calls (the definitions of a level's
// routines are read together); then the server's state is read in one
// more. The loop runs it without blocking (evLoop.verify).
type stateRead struct {
	p     *Proxy
	db    string
	an    RoutineAnalyzer // nil: no routine can be learned (all opaque)
	now   time.Time
	gen   uint64
	roots []string // the routines called (engine.Session.TakeCalls)

	nodes map[string]*routineNode // routines whose definitions were asked for
	level []string                // routines asked for by the query out now
	depth int                     // calls from a root that level is at

	// Once the routines are known: the parameters they may set, split
	// into custom ones (with a dot) and the others, and whether any is
	// opaque.
	learned       bool
	plain, custom []string
	opaque        bool

	// The database's reach (reach.go), and whether the first query
	// reads it again; pending are the texts of statements classified
	// while it was not known, all whether one was too long to keep.
	snap      *reachSnap
	readReach bool
	pending   []string
	all       bool
	// unreached: the statements kept reach nothing, and no other call
	// was made: the state need not be read.
	unreached bool
	counted   bool // counted in Snapshot.Verifications

	state  []string // the answer to the state query
	failed bool     // the state could not be read: nothing more is asked
	// lost: what failed is the server's stream (not an error the
	// server answered), which the server may no longer be trusted with.
	lost bool
	done bool
}

// routineNode is what the definitions of the overloads of one routine
// name say (an overload of an extension the operator trusts is left out).
type routineNode struct {
	opaque bool // no definition could be read
	parts  []routinePart
}

// routinePart is what the classifier found in one definition.
type routinePart struct {
	clean, opaque bool
	params, calls []string
}

// newStateRead starts a read of the server's state after calls of the
// routines named roots (effects.DOBlock and effects.OpaqueDOBlock included)
// by a client of database db.
func newStateRead(p *Proxy, db string, roots []string) *stateRead {
	an, _ := p.cfg.Classifier.(RoutineAnalyzer)
	gen := p.routines.gen.Load()
	rd := &stateRead{p: p, db: db, an: an, now: time.Now(), gen: gen, nodes: make(map[string]*routineNode)}
	for _, n := range roots {
		switch {
		case n == reachAll:
			rd.all = true
		case strings.HasPrefix(n, reachPending):
			rd.pending = append(rd.pending, n[len(reachPending):])
		default:
			rd.roots = append(rd.roots, n)
		}
	}
	if len(rd.roots) > 0 {
		// A read of the state follows: counted now, when the client's
		// statement is answered. One that only matches statements
		// against the reach is counted when it finds they reached code.
		rd.counted = true
		p.stats.verifications.Add(1)
	}
	rd.askRoots(rd.roots)
	snap, fresh := p.routines.reachFor(db, rd.now)
	if fresh {
		rd.snap = snap
		rd.resolve()
	} else if rd.all || len(rd.pending) > 0 || an != nil && len(rd.roots) > 0 {
		// The reach is read first: the statements kept are matched
		// against it, and the definitions learned are too.
		rd.readReach = true
	}
	return rd
}

// askRoots asks for the definitions of the routines in names.
func (rd *stateRead) askRoots(names []string) {
	if rd.an == nil {
		return
	}
	for _, n := range names {
		rd.ask(n)
	}
}

// resolve turns the statements kept while the reach was unknown into the
// routines they reach in rd.snap (all of them for one too long to keep),
// or into an opaque call when the reach could not be read.
func (rd *stateRead) resolve() {
	if len(rd.pending) == 0 && !rd.all {
		return
	}
	before := len(rd.roots)
	add := func(r string) {
		if slices.Contains(rd.roots, r) || rd.p.changesNothing(rd.db, r, rd.now) {
			return // known to change nothing
		}
		rd.roots = append(rd.roots, r)
	}
	switch {
	case rd.snap == nil:
		add(effects.OpaqueDOBlock)
	case rd.all:
		for _, r := range rd.snap.all {
			add(r)
		}
	default:
		for _, t := range rd.pending {
			rd.snap.reached(t, add)
		}
	}
	if len(rd.roots) == 0 {
		rd.unreached = true
	}
	rd.pending, rd.all = nil, false
	rd.askRoots(rd.roots[before:])
}

// ask puts name among the routines whose definitions the next query
// reads, unless the pooler knows it already.
func (rd *stateRead) ask(name string) {
	if name == effects.DOBlock || name == effects.OpaqueDOBlock {
		return // no definition to read (an opaque one is opaque)
	}
	if _, ok := rd.nodes[name]; ok || rd.p.trust.trusted(name) {
		return
	}
	if _, ok := rd.p.routines.get(rd.db, name, rd.now); ok {
		return
	}
	rd.nodes[name] = &routineNode{}
	rd.level = append(rd.level, name)
}

// next returns the query to send next, or "" when the read is over.
func (rd *stateRead) next() string {
	switch {
	case rd.failed || rd.done:
		return ""
	case rd.readReach:
		rd.p.stats.reachReads.Add(1)
		return reachQuery
	case len(rd.level) > 0:
		return routineDefsQuery(rd.level)
	case rd.unreached:
		rd.done = true
		return ""
	}
	rd.learn()
	if !rd.counted {
		rd.counted = true
		rd.p.stats.verifications.Add(1)
	}
	return engine.VerifyQuery(rd.custom)
}

// answer takes the answer to the query next returned: its first row, or
// the error. An error that is not the server's answer (the connection
// failed) ends the read.
func (rd *stateRead) answer(row []string, err error) {
	var se *serverError
	if err != nil && !errors.As(err, &se) {
		rd.failed, rd.lost = true, true
		return
	}
	if rd.readReach {
		rd.readReach = false
		if err == nil {
			rd.snap, err = parseReach(row, rd.gen, rd.now)
		}
		if err == nil {
			rd.p.routines.store(rd.db, nil, rd.snap, rd.gen, rd.now)
		} else {
			rd.snap = nil
			rd.p.log.Warn("could not read what statements reach in the catalog; the calls count as opaque", "database", rd.db, "err", err)
		}
		rd.resolve()
		return
	}
	if len(rd.level) == 0 {
		rd.state, rd.done = row, true
		if err != nil {
			rd.failed = true
		}
		return
	}
	level := rd.level
	rd.level = nil
	var defs [][3]*string
	if err == nil && len(row) == 1 {
		err = json.Unmarshal([]byte(row[0]), &defs)
	} else if err == nil {
		err = errBadInternalAnswer
	}
	if err != nil {
		// The definitions cannot be read: the routines are opaque.
		for _, n := range level {
			rd.nodes[n].opaque = true
		}
		return
	}
	found := make(map[string]bool, len(level))
	for _, d := range defs {
		if d[0] == nil {
			continue
		}
		nd := rd.nodes[*d[0]]
		if nd == nil {
			continue
		}
		found[*d[0]] = true
		if d[2] != nil && rd.p.trust.extensions[strings.ToLower(*d[2])] {
			continue // the operator vouches for it
		}
		var def string
		if d[1] != nil {
			def = *d[1]
		}
		var pt routinePart
		pt.clean, pt.opaque, pt.params, pt.calls = rd.an.AnalyzeRoutine(def)
		if rd.snap != nil {
			// What its statements reach without naming it.
			rd.snap.reached(def, func(r string) {
				if r != *d[0] && !slices.Contains(pt.calls, r) {
					pt.calls = append(pt.calls, r)
				}
			})
		} else {
			pt.clean, pt.opaque = false, true
		}
		nd.parts = append(nd.parts, pt)
	}
	rd.depth++
	for _, n := range level {
		nd := rd.nodes[n]
		if !found[n] {
			nd.opaque = true // no such routine: nothing to vouch for it
			continue
		}
		if rd.depth > routineDepth {
			continue // deeper calls count as opaque (verdict)
		}
		for _, pt := range nd.parts {
			for _, callee := range pt.calls {
				rd.ask(callee)
			}
		}
	}
}

// learn makes the verdicts on the routines called, keeps what was
// learned, and gathers the parameters the calls may have set.
func (rd *stateRead) learn() {
	if rd.learned {
		return
	}
	rd.learned = true
	verdicts := make(map[string]routineVerdict)
	visiting := make(map[string]bool)
	var params []string
	for _, n := range rd.roots {
		var v routineVerdict
		switch {
		case n == effects.DOBlock:
			continue // its statements were analyzed with it
		case n == effects.OpaqueDOBlock || rd.an == nil:
			v.opaque = true
		default:
			v = rd.verdict(n, verdicts, visiting)
		}
		rd.opaque = rd.opaque || v.opaque
		params = append(params, v.params...)
	}
	if len(verdicts) > 0 {
		rd.p.routines.store(rd.db, verdicts, nil, rd.gen, time.Now())
	}
	slices.Sort(params)
	for _, n := range slices.Compact(params) {
		// Custom parameters may not exist: they count only with a
		// value. The others are read back or reset by name.
		if strings.Contains(n, ".") {
			rd.custom = append(rd.custom, n)
		} else {
			rd.plain = append(rd.plain, n)
		}
	}
}

// verdict says what calling name can do, from what the pooler knew and
// the definitions read; recursion and calls deeper than routineDepth
// count as opaque.
func (rd *stateRead) verdict(name string, verdicts map[string]routineVerdict, visiting map[string]bool) routineVerdict {
	if v, ok := verdicts[name]; ok {
		return v
	}
	if v, ok := rd.p.routines.get(rd.db, name, rd.now); ok {
		return v
	}
	if rd.p.trust.trusted(name) {
		v := routineVerdict{clean: true}
		verdicts[name] = v
		return v
	}
	nd := rd.nodes[name]
	if nd == nil || visiting[name] {
		return routineVerdict{opaque: true}
	}
	visiting[name] = true
	defer delete(visiting, name)
	v := routineVerdict{clean: !nd.opaque, opaque: nd.opaque}
	for _, pt := range nd.parts {
		v.clean = v.clean && pt.clean
		v.opaque = v.opaque || pt.opaque
		v.params = append(v.params, pt.params...)
		for _, callee := range pt.calls {
			cv := rd.verdict(callee, verdicts, visiting)
			v.clean = v.clean && cv.clean
			v.opaque = v.opaque || cv.opaque
			v.params = append(v.params, cv.params...)
		}
	}
	slices.Sort(v.params)
	v.params = slices.Compact(v.params)
	verdicts[name] = v
	return v
}

// routineDefsQuery reads the definitions of every function and procedure
// with one of names ("schema.name" or "name", in any schema), each with
// the name asked for and the extension it belongs to. Aggregates and
// window functions have no definition to read (they count as opaque
// unless trusted).
func routineDefsQuery(names []string) string {
	var b strings.Builder
	b.WriteString("SELECT coalesce(json_agg(json_build_array(w.k, " +
		"CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) END, " +
		"(SELECT e.extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid " +
		"WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' LIMIT 1))), '[]') " +
		"FROM (VALUES ")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		schema, fn := "NULL", n
		if j := strings.LastIndexByte(n, '.'); j >= 0 {
			schema, fn = engine.QuoteLiteral(n[:j]), n[j+1:]
		}
		fmt.Fprintf(&b, "(%s, %s, %s)", engine.QuoteLiteral(n), engine.QuoteLiteral(fn), schema)
	}
	b.WriteString(") AS w(k, n, nsp) JOIN pg_proc p ON p.proname = w.n " +
		"AND (w.nsp IS NULL OR p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = w.nsp))")
	return b.String()
}
