package pooler

import (
	"maps"
	"sort"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Session state in transaction mode (--on-session-state).
//
// The pooler asks a StateClassifier what each client statement does to
// session state (cmd fills it from the rules package, so the wire code
// knows no SQL) and applies the configured Policy:
//
//   - preserve: the client's session settings (SET, set_config(…, false),
//     SET ROLE, SET SESSION AUTHORIZATION) follow it: when its server goes
//     back to the pool the pooler reads the values the client left there,
//     resets them, and sets them again on whichever server the client
//     gets next. Other state (advisory locks, LISTEN, temporary objects,
//     WITH HOLD cursors, SQL prepared statements, LOAD) pins the client to
//     its server until the state is gone or the client leaves, and the
//     server is cleaned before anyone else gets it.
//   - reset: nothing follows the client; a server whose client changed
//     session state is cleaned of exactly that before it goes back.
//   - reject: statements that change session state are refused with
//     SQLSTATE 0A000, naming the rule and its fix.
//   - allow: PgBouncer's behaviour — passed through, counted and logged.
//
// Every hazard is counted per rule and action and logged once per client
// and rule.

// Policy is what the pooler does with session state in transaction mode
// (engine.Policy).
type Policy = engine.Policy

// Policies.
const (
	PolicyPreserve = engine.PolicyPreserve
	PolicyReset    = engine.PolicyReset
	PolicyReject   = engine.PolicyReject
	PolicyAllow    = engine.PolicyAllow
)

// StateEffect is one effect of a statement on session state
// (engine.StateEffect); its Kind is a kind of rules/effects.
type StateEffect = engine.StateEffect

// StateClassifier tells the pooler what a statement does to session
// state. Classify must be safe for concurrent use and must not keep sql
// (it may point into a reused buffer); transaction-scoped effects (SET
// LOCAL, ON COMMIT DROP, xact locks) are not reported. fingerprint
// identifies the statement in logs.
type StateClassifier interface {
	Classify(sql string) (effects []StateEffect, fingerprint string)
}

// KnownClassifier is implemented by classifiers that can skip parsing a
// statement whose only calls are of routines known to change nothing:
// known reports that of a routine name, in any case.
type KnownClassifier interface {
	ClassifyKnown(sql string, known func(name string) bool) (effects []StateEffect, fingerprint string)
}

// StateRules is implemented by classifiers that name the rule of state
// the pooler found on a server when it verified it (see stateFound).
type StateRules interface {
	RuleOf(k effects.Kind) (rule, fix string)
}

// hazardKey is one rule under one action.
type hazardKey struct{ rule, action string }

// hazardInfo is what the pooler keeps of one rule under one action. add
// publishes latest and at before it counts, and Hazards reads the counts
// first, so a line with a count has its latest occurrence, and clients
// never exceeds count.
type hazardInfo struct {
	count, clients atomic.Int64
	// at is when it was seen last (Unix nanoseconds).
	at     atomic.Int64
	latest atomic.Pointer[hazardLast]
}

// hazardLast is the application name and statement fingerprint of the
// latest occurrence of a hazard; never changed once published, and
// replaced only when they change.
type hazardLast struct{ appName, fp string }

// hazards counts the session-state hazards the pooler saw. It takes no
// lock and, once a rule and action were seen, allocates nothing: m is a
// map never changed once stored, replaced whole (CompareAndSwap) only when
// a new rule or action appears; the counters in it are atomic.
type hazards struct {
	m atomic.Pointer[map[hazardKey]*hazardInfo]
}

// entry returns the counters of k, making them.
func (h *hazards) entry(k hazardKey) *hazardInfo {
	for {
		cur := h.m.Load()
		if cur != nil {
			if hi := (*cur)[k]; hi != nil {
				return hi
			}
		}
		next := make(map[hazardKey]*hazardInfo)
		if cur != nil {
			maps.Copy(next, *cur)
		}
		hi := new(hazardInfo)
		next[k] = hi
		if h.m.CompareAndSwap(cur, &next) {
			return hi
		}
	}
}

// add counts one hazard; newClient says it is the client's first of the
// rule.
func (h *hazards) add(rule, action string, newClient bool, appName, fp string) {
	hi := h.entry(hazardKey{rule, action})
	for {
		old := hi.latest.Load()
		if old != nil && old.appName == appName && (fp == "" || fp == old.fp) {
			break
		}
		last := &hazardLast{appName: appName, fp: fp}
		if fp == "" && old != nil {
			// An occurrence without a fingerprint keeps the latest one
			// known.
			last.fp = old.fp
		}
		if hi.latest.CompareAndSwap(old, last) {
			break
		}
	}
	hi.at.Store(time.Now().UnixNano())
	hi.count.Add(1)
	if newClient {
		hi.clients.Add(1)
	}
}

// HazardCount is one line of the hazard counters: a rule under one
// action, how often it was seen, by how many clients, and the latest
// occurrence's application_name, statement fingerprint and time.
type HazardCount struct {
	Rule, Action    string
	Count           int64
	Clients         int64
	ApplicationName string
	Fingerprint     string
	LastSeen        time.Time
}

// Hazards returns the session-state hazards seen so far, sorted.
func (p *Proxy) Hazards() []HazardCount {
	out := []HazardCount{}
	m := p.hazards.m.Load()
	if m == nil {
		return out
	}
	for k, hi := range *m {
		clients := hi.clients.Load()
		count := hi.count.Load()
		if count == 0 {
			// Its first add has not counted yet.
			continue
		}
		last := hi.latest.Load()
		out = append(out, HazardCount{Rule: k.rule, Action: k.action, Count: count, Clients: clients,
			ApplicationName: last.appName, Fingerprint: last.fp, LastSeen: time.Unix(0, hi.at.Load())})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Action < out[j].Action
	})
	return out
}

// actionOf names what the policy does with an effect that makes state
// (engine.Makes), for counters: under preserve the state is replayed on
// the client's next server or pins the client to this one (engine.Pins).
func actionOf(p Policy, e StateEffect) string {
	switch p {
	case PolicyReject:
		return "rejected"
	case PolicyAllow:
		return "allowed"
	case PolicyReset:
		return "reset"
	}
	if engine.Pins(e.Kind) {
		return "pinned"
	}
	return "replayed"
}

// classifyText runs the classifier on a statement text from the read
// buffer (not kept) and counts and logs the hazards. It returns the
// effects (nil for most statements).
func (c *clientConn) classifyText(text []byte, parse bool) ([]StateEffect, string) {
	cls := c.proxy.cfg.Classifier
	if cls == nil || len(text) == 0 {
		return nil, ""
	}
	if text[len(text)-1] == 0 {
		text = text[:len(text)-1]
	}
	if len(text) == 0 {
		return nil, ""
	}
	var effs []StateEffect
	var fp string
	if kc, ok := cls.(KnownClassifier); ok {
		effs, fp = kc.ClassifyKnown(unsafe.String(&text[0], len(text)), c.pool.knownClean)
	} else {
		effs, fp = cls.Classify(unsafe.String(&text[0], len(text)))
	}
	effs = c.reachCalls(unsafe.String(&text[0], len(text)), effs, parse)
	if !parse {
		effs = c.sqlPrepareReach(unsafe.String(&text[0], len(text)), effs)
	}
	for _, e := range effs {
		if e.Kind == effects.CallRoutine || e.Kind == effects.RoutineChange {
			effs = c.knownCalls(effs)
			break
		}
	}
	if len(effs) == 0 {
		return nil, ""
	}
	c.countHazards(effs, fp)
	return effs, fp
}

// countHazards counts and logs the hazards among effs, the effects of a
// statement with fingerprint fp (or state found on the client's server).
func (c *clientConn) countHazards(effs []StateEffect, fp string) {
	p := c.proxy
	policy := c.eng.Policy()
	for _, e := range effs {
		if !engine.Makes(e.Kind) {
			continue // undoing state is no hazard (engine.Makes)
		}
		action := actionOf(policy, e)
		first := !c.eng.Session.Logged[e.Rule]
		if first {
			engine.SetAdd(&c.eng.Session.Logged, e.Rule)
		}
		p.hazards.add(e.Rule, action, first, c.appName, fp)
		c.rec.Hazard(e.Rule, action, fp) // when capturing, after the statement's own event
		if first {
			p.log.Info("session state in transaction mode", "rule", e.Rule, "action", action,
				"user", c.user, "database", c.database, "application_name", c.appName, "fingerprint", fp)
		}
	}
}

// classifyMessage classifies the SQL of a Query or Parse message whose
// header is next in c.r (body: see frontendBody, nil when not read yet).
// A Query larger than the read buffer is classified only when the relay
// read it whole (up to engine.MaxClassified).
func (c *clientConn) classifyMessage(typ byte, n int, body []byte) []StateEffect {
	if body == nil {
		if headerLen+n > c.r.Size() {
			return nil
		}
		b, err := c.r.Peek(headerLen + n)
		if err != nil {
			return nil
		}
		body = b[headerLen:]
	}
	if typ == 'P' {
		_, rest, ok := engine.CString(body)
		if !ok {
			return nil
		}
		q, _, ok := engine.CString(rest)
		if !ok {
			return nil
		}
		body = q
	}
	effs, _ := c.classifyText(body, typ == 'P')
	return effs
}

// cleanPlan is what cleaning a server of the client's session state takes:
// the settings read back first (names, by the query readback; under
// preserve, for a client still there), then the query that resets the
// rest (cleanup); either may be empty.
type cleanPlan struct {
	names             []string
	readback, cleanup string
}

// cleanPlan plans the clean of the client's server. ok is false when the
// server must be closed instead: a library was LOADed into it, or what
// the client's routines left on it was not read (verify), so that no
// clean can be sure to take it all off.
func (c *clientConn) cleanPlan(gone bool) (pl cleanPlan, ok bool) {
	st := &c.eng.Session
	if st.Loaded || st.Unverified() {
		*st = st.Cleaned(st.Settings)
		return pl, false
	}
	if c.eng.Policy() == PolicyPreserve && !gone {
		for n := range st.Touched {
			pl.names = append(pl.names, n)
		}
		sort.Strings(pl.names)
		if st.ResetAll {
			st.Settings = nil
		}
	}
	if len(pl.names) > 0 {
		pl.readback = engine.ReadbackSQL(pl.names)
	}
	pl.cleanup = engine.CleanupSQL(st)
	return pl, true
}

// cleanFailed logs a clean that failed and forgets the state that goes
// with the server, which is closed.
func (c *clientConn) cleanFailed(msg string, err error) {
	c.proxy.log.Warn(msg, "user", c.user, "err", err)
	c.dropServerState()
}

// cleanFinish ends a clean that worked: the settings read back (vals, for
// names) follow the client, the rest of its session state is gone.
func (c *clientConn) cleanFinish(names, vals []string) {
	st := &c.eng.Session
	settings := st.Settings
	for i, n := range names {
		found := false
		for j := range settings {
			if settings[j].Name == n {
				settings[j].Value, found = vals[i], true
			}
		}
		if !found {
			settings = append(settings, engine.Setting{Name: n, Value: vals[i]})
		}
	}
	*st = st.Cleaned(settings)
}

// dropServerState forgets the session state the client made on a server
// that is being closed: it goes with the server, so the next release must
// not try to clean it again. The settings that follow the client stay.
func (c *clientConn) dropServerState() {
	st := &c.eng.Session
	*st = st.Cleaned(st.Settings)
}

// startRead starts reading the state the client's routines left on its
// server: the calls are taken from the session (a read that fails
// leaves the session opaque).
func (c *clientConn) startRead() *stateRead {
	calls := c.eng.Session.TakeCalls()
	return newStateRead(c.proxy, c.pool.key.database, calls)
}

// stateFound makes the client's session what rd read on s: settings
// follow the client (preserve) or are reset, locks, LISTEN, temporary
// objects, held cursors and SQL prepared statements pin it (preserve) or
// are cleaned. What the pooler did not know of counts as hazards, as if
// the client had sent the statements. It reports false when rd could not
// read the state.
func (c *clientConn) stateFound(s *serverConn, rd *stateRead) bool {
	if rd.unreached && !rd.failed {
		// The statements kept while the reach was unknown reach no
		// code: there was nothing to read.
		c.eng.Session.Unreached()
		return true
	}
	var f engine.Found
	ok := false
	if !rd.failed && rd.done {
		f, ok = engine.ParseFound(rd.state, rd.plain, rd.custom)
	}
	if !ok {
		// The calls are taken: whatever reads this server next cannot
		// name what they may have set, so it is reset in full.
		c.eng.Session.Opaque()
		return false
	}
	found := c.eng.Session.Reconcile(f, s.pool.key.user, engine.IsTracked)
	if rd.opaque {
		c.eng.Session.Opaque()
	}
	if len(found) == 0 {
		return true
	}
	rn, _ := c.proxy.cfg.Classifier.(StateRules)
	for i := range found {
		if rn != nil {
			found[i].Rule, found[i].Fix = rn.RuleOf(found[i].Kind)
		}
		if found[i].Rule == "" {
			found[i].Rule = "session-state"
		}
	}
	c.countHazards(found, "")
	return true
}
