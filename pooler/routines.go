package pooler

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// Routines the clients call. A call of a routine that is not built in may
// change session state inside it, so the pooler reads the server's state
// after it (verify). To spare that round trip for routines that change
// nothing, the pooler learns what each does: it reads the routine's
// definition once per database over a connection of its own (every
// overload of the name, pg_get_functiondef), has the classifier analyze
// the body (RoutineAnalyzer: the PL/pgSQL and SQL-body analysis scan uses)
// and follows the routines it calls, and caches the verdict. A routine
// known to change nothing is not verified; any other is, every time.
//
// The verdict holds until a statement through the pooler creates, alters
// or drops a routine or a schema (engine.StateRoutineChange), and at most
// routineTTL: a routine replaced directly on the server, not through this
// pooler, is trusted as it was for that long at most.

// RoutineAnalyzer is implemented by classifiers that can tell from a
// routine's definition whether calling it can change session state: clean
// when its body shows all it does and none of it changes state, calls the
// routines it calls (which must be clean too).
type RoutineAnalyzer interface {
	AnalyzeRoutine(def string) (clean bool, calls []string)
}

// routineTTL is how long a routine's verdict is kept.
const routineTTL = 5 * time.Second

// routineDepth is how deep calls of routines from routines are followed;
// deeper ones (and recursion) count as unknown.
const routineDepth = 4

type routineKey struct{ database, name string }

type routineEntry struct {
	clean bool
	gen   uint64
	at    time.Time
}

// routineCache keeps the verdicts, per database and routine name. gen is
// advanced by every routine change the pooler sees; an entry of an older
// generation is stale.
type routineCache struct {
	mu        sync.RWMutex
	gen       uint64
	m         map[string]map[string]routineEntry
	resolving map[routineKey]bool
}

// clean reports whether routine name of database db is known to change no
// session state (clean), and whether a verdict is known at all.
func (rc *routineCache) clean(db, name string, now time.Time) (clean, known bool) {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	e, ok := rc.m[db][name]
	if !ok || e.gen != rc.gen || now.Sub(e.at) > routineTTL {
		return false, false
	}
	return e.clean, true
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
		c.knownFn = func(name string) bool {
			clean, _ := rc.clean(db, strings.ToLower(name), time.Now())
			return clean
		}
	}
	return c.knownFn
}

// knownCalls drops from effs the calls of routines known to change
// nothing; for calls of routines not known yet it starts learning them.
// It returns effs itself when nothing is dropped (effs may be the
// classifier's cached slice: it is never changed).
func (c *clientConn) knownCalls(effs []StateEffect) []StateEffect {
	p := c.proxy
	an, ok := p.cfg.Classifier.(RoutineAnalyzer)
	if !ok {
		return effs
	}
	db := c.pool.key.database
	now := time.Now()
	var out []StateEffect
	var learn []string
	for i, e := range effs {
		switch {
		case e.Kind == engine.StateRoutineChange:
			p.routines.invalidate()
		case e.Kind == engine.StateCall && e.Name != "DO" && e.Name != "":
			clean, known := p.routines.clean(db, e.Name, now)
			if !known {
				learn = append(learn, e.Name)
			}
			if clean {
				if out == nil {
					out = append(make([]StateEffect, 0, len(effs)), effs[:i]...)
				}
				continue
			}
		}
		if out != nil {
			out = append(out, e)
		}
	}
	if len(learn) > 0 {
		p.learnRoutines(c.pool, db, learn, an)
	}
	if out == nil {
		return effs
	}
	return out
}

// learnRoutines reads and analyzes the routines names of database db in
// the background, over a connection of pl's user of its own.
func (p *Proxy) learnRoutines(pl *pool, db string, names []string, an RoutineAnalyzer) {
	p.routines.mu.Lock()
	if p.routines.resolving == nil {
		p.routines.resolving = make(map[routineKey]bool)
	}
	var todo []string
	for _, n := range names {
		k := routineKey{db, n}
		if !p.routines.resolving[k] {
			p.routines.resolving[k] = true
			todo = append(todo, n)
		}
	}
	gen := p.routines.gen
	p.routines.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		verdicts := p.resolveRoutines(pl, todo, an)
		now := time.Now()
		p.routines.mu.Lock()
		defer p.routines.mu.Unlock()
		if p.routines.m == nil {
			p.routines.m = make(map[string]map[string]routineEntry)
		}
		m := p.routines.m[db]
		if m == nil {
			m = make(map[string]routineEntry)
			p.routines.m[db] = m
		}
		for _, n := range todo {
			delete(p.routines.resolving, routineKey{db, n})
		}
		for n, clean := range verdicts {
			// A verdict read before a routine change is stale at once.
			m[n] = routineEntry{clean: clean, gen: gen, at: now}
		}
	}()
}

// resolveRoutines decides for each of names (and the routines they call)
// whether it changes no session state. A routine that cannot be read
// counts as changing state.
func (p *Proxy) resolveRoutines(pl *pool, names []string, an RoutineAnalyzer) map[string]bool {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	out := make(map[string]bool)
	s, err := pl.dialServer(ctx, nil)
	if err != nil {
		p.log.Debug("could not read routine definitions", "user", pl.key.user, "err", err)
		return out
	}
	defer s.terminate()
	visiting := make(map[string]bool)
	var visit func(name string, depth int) bool
	visit = func(name string, depth int) bool {
		if v, ok := out[name]; ok {
			return v
		}
		if depth > routineDepth || visiting[name] {
			return false
		}
		visiting[name] = true
		defer delete(visiting, name)
		defs, err := routineDefs(s, name)
		clean := err == nil && len(defs) > 0
		for _, d := range defs {
			if !clean {
				break
			}
			ok, calls := an.AnalyzeRoutine(d)
			clean = ok
			for _, c := range calls {
				if clean && !visit(c, depth+1) {
					clean = false
				}
			}
		}
		out[name] = clean
		return clean
	}
	for _, n := range names {
		visit(n, 0)
	}
	return out
}

// routineDefs reads the definitions of every function and procedure named
// name ("schema.name" or "name", in any schema) on s.
func routineDefs(s *serverConn, name string) ([]string, error) {
	where := "p.proname = " + engine.QuoteLiteral(name)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		where = "p.proname = " + engine.QuoteLiteral(name[i+1:]) +
			" AND p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = " + engine.QuoteLiteral(name[:i]) + ")"
	}
	row, err := s.runInternal("SELECT coalesce(json_agg(pg_get_functiondef(p.oid)), '[]') FROM pg_proc p WHERE p.prokind IN ('f', 'p') AND " + where)
	if err != nil || len(row) != 1 {
		return nil, err
	}
	var defs []string
	if err := json.Unmarshal([]byte(row[0]), &defs); err != nil {
		return nil, err
	}
	return defs, nil
}
