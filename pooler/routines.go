package pooler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
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
// or drops a routine or a schema (engine.StateRoutineChange), and at most
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

// routineCache keeps the verdicts, per database and routine name. gen is
// advanced by every routine change the pooler sees; an entry of an older
// generation is stale.
type routineCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[string]map[string]routineEntry
}

// get returns the verdict on routine name of database db, if one is
// known.
func (rc *routineCache) get(db, name string, now time.Time) (routineVerdict, bool) {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	e, ok := rc.m[db][name]
	if !ok || e.gen != rc.gen || now.Sub(e.at) > routineTTL {
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

// put keeps verdicts read in generation gen.
func (rc *routineCache) put(db string, verdicts map[string]routineVerdict, gen uint64, now time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.m == nil {
		rc.m = make(map[string]map[string]routineEntry)
	}
	m := rc.m[db]
	if m == nil {
		m = make(map[string]routineEntry)
		rc.m[db] = m
	}
	for n, v := range verdicts {
		// A verdict read before a routine change is stale at once.
		m[n] = routineEntry{routineVerdict: v, gen: gen, at: now}
	}
}

// invalidate forgets every verdict (a routine or schema changed).
func (rc *routineCache) invalidate() {
	rc.mu.Lock()
	rc.gen++
	rc.mu.Unlock()
}

// knownClean returns the client's test for the classifier's pre-filter
// (KnownClassifier): whether a routine name, in any case, is known to
// change nothing in the client's database.
func (c *clientConn) knownClean() func(name string) bool {
	if c.knownFn == nil {
		rc, db := &c.proxy.routines, c.pool.key.database
		trust := &c.proxy.trust
		c.knownFn = func(name string) bool {
			name = strings.ToLower(name)
			return trust.trusted(name) || rc.clean(db, name, time.Now())
		}
	}
	return c.knownFn
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
		case e.Kind == engine.StateRoutineChange:
			p.routines.invalidate()
			c.routineChanged.Store(true)
		case e.Kind == StateCall && e.Name != engine.DOBlock && e.Name != engine.OpaqueDOBlock &&
			(p.trust.trusted(e.Name) || p.routines.clean(db, e.Name, now)):
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

// learnRoutines makes sure the pooler knows routines names of the
// client's database, reading what it does not know yet over s (idle, the
// caller's). It returns the parameters they may set and whether any of
// them is opaque. A DO block's own statements were analyzed with it
// (engine.DOBlock), unless it is opaque; the routines it calls are among
// names.
func (c *clientConn) learnRoutines(s *serverConn, names []string) (params []string, opaque bool) {
	p := c.proxy
	an, ok := p.cfg.Classifier.(RoutineAnalyzer)
	db := c.pool.key.database
	now := time.Now()
	p.routines.mu.RLock()
	gen := p.routines.gen
	p.routines.mu.RUnlock()
	verdicts := make(map[string]routineVerdict)
	visiting := make(map[string]bool)
	var visit func(name string, depth int) routineVerdict
	visit = func(name string, depth int) routineVerdict {
		if v, ok := verdicts[name]; ok {
			return v
		}
		if v, ok := p.routines.get(db, name, now); ok {
			return v
		}
		if p.trust.trusted(name) {
			v := routineVerdict{clean: true}
			verdicts[name] = v
			return v
		}
		if depth > routineDepth || visiting[name] {
			return routineVerdict{opaque: true}
		}
		visiting[name] = true
		defer delete(visiting, name)
		defs, err := routineDefs(s, name)
		v := routineVerdict{clean: err == nil && len(defs) > 0, opaque: err != nil || len(defs) == 0}
		for _, d := range defs {
			if p.trust.extensions[d.extension] {
				continue // the operator vouches for it
			}
			clean, op, ps, calls := an.AnalyzeRoutine(d.def)
			v.clean = v.clean && clean
			v.opaque = v.opaque || op
			v.params = append(v.params, ps...)
			for _, callee := range calls {
				cv := visit(callee, depth+1)
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
	for _, n := range names {
		var v routineVerdict
		switch {
		case n == engine.DOBlock:
			continue
		case n == engine.OpaqueDOBlock || !ok:
			v.opaque = true
		default:
			v = visit(n, 0)
		}
		opaque = opaque || v.opaque
		params = append(params, v.params...)
	}
	if len(verdicts) > 0 {
		p.routines.put(db, verdicts, gen, time.Now())
	}
	slices.Sort(params)
	return slices.Compact(params), opaque
}

// routineDef is one overload's definition and the extension it belongs
// to ("" when none).
type routineDef struct{ def, extension string }

// routineDefs reads the definitions of every function and procedure named
// name ("schema.name" or "name", in any schema) on s, with the extension
// each belongs to.
func routineDefs(s *serverConn, name string) ([]routineDef, error) {
	where := "p.proname = " + engine.QuoteLiteral(name)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		where = "p.proname = " + engine.QuoteLiteral(name[i+1:]) +
			" AND p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = " + engine.QuoteLiteral(name[:i]) + ")"
	}
	// Aggregates and window functions have no definition to read (they
	// count as opaque unless trusted).
	row, err := s.runInternal("SELECT coalesce(json_agg(json_build_array(CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) END, " +
		"(SELECT e.extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid " +
		"WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' LIMIT 1))), '[]') " +
		"FROM pg_proc p WHERE " + where)
	if err != nil || len(row) != 1 {
		return nil, err
	}
	var pairs [][2]*string
	if err := json.Unmarshal([]byte(row[0]), &pairs); err != nil {
		return nil, err
	}
	defs := make([]routineDef, 0, len(pairs))
	for _, p := range pairs {
		var d routineDef
		if p[0] != nil {
			d.def = *p[0]
		}
		if p[1] != nil {
			d.extension = strings.ToLower(*p[1])
		}
		defs = append(defs, d)
	}
	return defs, nil
}
