package pooler

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"
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

// Policy is what the pooler does with session state in transaction mode.
type Policy string

// Policies.
const (
	PolicyPreserve Policy = "preserve"
	PolicyReset    Policy = "reset"
	PolicyReject   Policy = "reject"
	PolicyAllow    Policy = "allow"
)

// StateKind is what a statement does to session state.
type StateKind uint8

// State kinds (see rules/classify for their exact scope).
const (
	StateSet StateKind = iota + 1 // a run-time parameter set (Name)
	StateReset
	StateResetAll
	StateRole // SET ROLE, SET SESSION AUTHORIZATION and their resets
	StateLock
	StateUnlock
	StateUnlockAll
	StateListen
	StateUnlisten
	StateUnlistenAll
	StateCreateTemp
	StateDropTemp
	StateDiscardTemp
	StateDeclareHold
	StateCloseCursor
	StateCloseAll
	StatePrepare
	StateDeallocate
	StateDeallocateAll
	StateLoad
	StateDiscardAll
)

// StateEffect is one effect of a statement on session state.
type StateEffect struct {
	Kind StateKind
	// Name is the parameter, channel, cursor, statement or object.
	Name string
	// Key identifies an advisory lock (KeyKnown); Shared and Pair are part
	// of its identity.
	Key              int64
	KeyKnown         bool
	Shared, Pair     bool
	SessionAuthority bool // StateRole: SET SESSION AUTHORIZATION
	// Rule is the catalogue rule and Fix its advice, for messages.
	Rule, Fix string
}

// StateClassifier tells the pooler what a statement does to session
// state. Classify must be safe for concurrent use and must not keep sql
// (it may point into a reused buffer); transaction-scoped effects (SET
// LOCAL, ON COMMIT DROP, xact locks) are not reported. fingerprint
// identifies the statement in logs.
type StateClassifier interface {
	Classify(sql string) (effects []StateEffect, fingerprint string)
}

// lockID is an advisory lock's identity.
type lockID struct {
	key          int64
	shared, pair bool
}

// sessionState is what the pooler knows of the session state a client
// created on its server (client goroutine and pump, under clientConn.mu).
type sessionState struct {
	// touched are the parameters (and "role", "session_authorization")
	// the client set or reset since it last left a server; settings are
	// the values it had there (preserve), restored on the next server.
	touched  map[string]bool
	resetAll bool
	// dynamicSet is a SET whose parameter name the pooler cannot know.
	dynamicSet bool
	settings   []setting
	// What pins the client (preserve) or must be cleaned (reset).
	locks        map[lockID]int
	unknownLocks int
	listens      map[string]bool
	temps        map[string]bool
	cursors      map[string]bool
	prepared     map[string]bool
	loaded       bool
	// logged are the rules already logged for this client.
	logged map[string]bool
}

type setting struct{ name, value string }

// held reports whether the client holds state that pins it (preserve).
func (st *sessionState) held() bool {
	return len(st.locks) > 0 || st.unknownLocks > 0 || len(st.listens) > 0 || len(st.temps) > 0 ||
		len(st.cursors) > 0 || len(st.prepared) > 0 || st.loaded || st.dynamicSet
}

// dirty reports whether the server needs cleaning before reuse.
func (st *sessionState) dirty() bool { return st.held() || len(st.touched) > 0 || st.resetAll }

func setAdd(m *map[string]bool, k string) {
	if *m == nil {
		*m = make(map[string]bool)
	}
	(*m)[k] = true
}

// apply records effs, sent to the server by the client.
func (st *sessionState) apply(effs []StateEffect) {
	for _, e := range effs {
		switch e.Kind {
		case StateSet, StateReset:
			if e.Name == "" {
				// set_config($1, …): which parameter is known only to
				// the server, so it cannot be read back and moved: the
				// client keeps its server (and RESET ALL cleans it).
				st.dynamicSet, st.resetAll = true, true
				continue
			}
			if isTracked(e.Name) {
				// The tracked parameters follow the client anyway
				// (varcache).
				continue
			}
			setAdd(&st.touched, strings.ToLower(e.Name))
		case StateResetAll:
			st.resetAll = true
		case StateRole:
			if e.SessionAuthority {
				setAdd(&st.touched, "session_authorization")
			}
			setAdd(&st.touched, "role")
		case StateLock:
			if !e.KeyKnown {
				st.unknownLocks++
				continue
			}
			if st.locks == nil {
				st.locks = make(map[lockID]int)
			}
			st.locks[lockID{e.Key, e.Shared, e.Pair}]++
		case StateUnlock:
			if !e.KeyKnown {
				// Which lock is unknown: assume the last unknown one.
				if st.unknownLocks > 0 {
					st.unknownLocks--
				}
				continue
			}
			id := lockID{e.Key, e.Shared, e.Pair}
			if st.locks[id] > 1 {
				st.locks[id]--
			} else {
				delete(st.locks, id)
			}
		case StateUnlockAll:
			st.locks, st.unknownLocks = nil, 0
		case StateListen:
			setAdd(&st.listens, e.Name)
		case StateUnlisten:
			delete(st.listens, e.Name)
		case StateUnlistenAll:
			st.listens = nil
		case StateCreateTemp:
			setAdd(&st.temps, e.Name)
		case StateDropTemp:
			delete(st.temps, e.Name)
		case StateDiscardTemp:
			st.temps = nil
		case StateDeclareHold:
			setAdd(&st.cursors, e.Name)
		case StateCloseCursor:
			delete(st.cursors, e.Name)
		case StateCloseAll:
			st.cursors = nil
		case StatePrepare:
			setAdd(&st.prepared, e.Name)
		case StateDeallocate:
			delete(st.prepared, e.Name)
		case StateDeallocateAll:
			st.prepared = nil
		case StateLoad:
			st.loaded = true
		case StateDiscardAll:
			st.locks, st.unknownLocks, st.listens, st.temps, st.cursors, st.prepared = nil, 0, nil, nil, nil, nil
			st.resetAll = true
			setAdd(&st.touched, "role")
			setAdd(&st.touched, "session_authorization")
		}
	}
}

// hazardKey is one rule under one action.
type hazardKey struct{ rule, action string }

// hazardInfo is what the pooler keeps of one rule under one action.
type hazardInfo struct {
	count, clients int64
	appName, fp    string
	last           time.Time
}

// hazards counts the session-state hazards the pooler saw. Only
// statements that change session state reach it, so a mutex is cheap.
type hazards struct {
	mu     sync.Mutex
	counts map[hazardKey]*hazardInfo
}

// add counts one hazard; newClient says it is the client's first of the
// rule.
func (h *hazards) add(rule, action string, newClient bool, appName, fp string) {
	now := time.Now()
	h.mu.Lock()
	if h.counts == nil {
		h.counts = make(map[hazardKey]*hazardInfo)
	}
	k := hazardKey{rule, action}
	hi := h.counts[k]
	if hi == nil {
		hi = &hazardInfo{}
		h.counts[k] = hi
	}
	hi.count++
	if newClient {
		hi.clients++
	}
	if fp != "" {
		hi.fp = fp
	}
	hi.appName, hi.last = appName, now
	h.mu.Unlock()
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
	p.hazards.mu.Lock()
	defer p.hazards.mu.Unlock()
	out := make([]HazardCount, 0, len(p.hazards.counts))
	for k, hi := range p.hazards.counts {
		out = append(out, HazardCount{Rule: k.rule, Action: k.action, Count: hi.count, Clients: hi.clients,
			ApplicationName: hi.appName, Fingerprint: hi.fp, LastSeen: hi.last})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Action < out[j].Action
	})
	return out
}

// actionOf names what the policy does with an effect, for counters.
func actionOf(p Policy, e StateEffect) string {
	switch p {
	case PolicyReject:
		return "rejected"
	case PolicyAllow:
		return "allowed"
	case PolicyReset:
		return "reset"
	}
	switch e.Kind {
	case StateSet, StateReset, StateResetAll, StateRole:
		return "replayed"
	}
	return "pinned"
}

// classifyText runs the classifier on a statement text from the read
// buffer (not kept) and counts and logs the hazards. It returns the
// effects (nil for most statements).
func (c *clientConn) classifyText(text []byte) ([]StateEffect, string) {
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
	effs, fp := cls.Classify(unsafe.String(&text[0], len(text)))
	if len(effs) == 0 {
		return nil, ""
	}
	p := c.proxy
	policy := p.cfg.OnSessionState
	for _, e := range effs {
		action := actionOf(policy, e)
		c.mu.Lock()
		first := !c.state.logged[e.Rule]
		if first {
			setAdd(&c.state.logged, e.Rule)
		}
		c.mu.Unlock()
		p.hazards.add(e.Rule, action, first, c.appName, fp)
		c.rec.Hazard(e.Rule, action, fp) // when capturing, after the statement's own event
		if first {
			p.log.Info("session state in transaction mode", "rule", e.Rule, "action", action,
				"user", c.user, "database", c.database, "application_name", c.appName, "fingerprint", fp)
		}
	}
	return effs, fp
}

// rejection is the ErrorResponse that refuses a statement (reject).
func rejection(effs []StateEffect) []byte {
	e := effs[0]
	msg := fmt.Sprintf("pgpoolcheck refuses this statement in transaction pooling: it changes session state that would leak to other clients (rule %s)", e.Rule)
	b := errorResponse("ERROR", codeFeatureNotSupported, "%s", msg)
	if e.Fix != "" {
		// Re-encode with the fix as the hint.
		return errorResponseHint("ERROR", codeFeatureNotSupported, msg, e.Fix)
	}
	return b
}

// raiseQuery is a simple Query that makes the server raise the refusal
// itself, so that a transaction in progress fails as PostgreSQL would fail
// it.
func raiseQuery(effs []StateEffect) string {
	e := effs[0]
	msg := fmt.Sprintf("pgpoolcheck refuses this statement in transaction pooling: it changes session state that would leak to other clients (rule %s)", e.Rule)
	q := "DO $pgpoolcheck$BEGIN RAISE EXCEPTION USING ERRCODE = '0A000', MESSAGE = " + quoteLiteral(msg)
	if e.Fix != "" {
		q += ", HINT = " + quoteLiteral(e.Fix)
	}
	return q + "; END$pgpoolcheck$"
}

// cleanupSQL is the statement that leaves a server as clean as a fresh
// one of what st created on it, or "" when there is nothing to clean.
// With discard set it cleans everything (DISCARD ALL).
func cleanupSQL(st *sessionState) string {
	if !st.dirty() {
		return ""
	}
	var q []string
	if st.resetAll || st.touched["session_authorization"] {
		q = append(q, "SET SESSION AUTHORIZATION DEFAULT")
	}
	if st.touched["role"] {
		q = append(q, "RESET ROLE")
	}
	if st.resetAll {
		q = append(q, "RESET ALL")
	} else {
		names := make([]string, 0, len(st.touched))
		for n := range st.touched {
			if n != "role" && n != "session_authorization" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			q = append(q, "RESET "+quoteIdent(n))
		}
	}
	if len(st.locks) > 0 || st.unknownLocks > 0 {
		q = append(q, "SELECT pg_advisory_unlock_all()")
	}
	if len(st.listens) > 0 {
		q = append(q, "UNLISTEN *")
	}
	if len(st.temps) > 0 {
		q = append(q, "DISCARD TEMP")
	}
	if len(st.cursors) > 0 {
		q = append(q, "CLOSE ALL")
	}
	for n := range st.prepared {
		q = append(q, "DEALLOCATE "+quoteIdent(n))
	}
	return strings.Join(q, "; ")
}

// quoteIdent quotes a name as an SQL identifier when it needs quoting;
// dotted custom parameter names (app.tenant) are quoted part by part.
func quoteIdent(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		plain := p != ""
		for j := 0; j < len(p); j++ {
			ch := p[j]
			if !(ch == '_' || ch >= 'a' && ch <= 'z' || j > 0 && ch >= '0' && ch <= '9') {
				plain = false
				break
			}
		}
		if !plain {
			parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
		}
	}
	return strings.Join(parts, ".")
}

// readbackSQL is the query that reads the values of the parameters the
// client touched, in the order of names.
func readbackSQL(names []string) string {
	cols := make([]string, len(names))
	for i, n := range names {
		cols[i] = "current_setting(" + quoteLiteral(n) + ")"
	}
	return "SELECT " + strings.Join(cols, ", ")
}

// restoreSQL sets the client's settings on a server: the session
// authorization first, then the role, then the rest.
func restoreSQL(settings []setting) string {
	order := func(n string) int {
		switch n {
		case "session_authorization":
			return 0
		case "role":
			return 1
		}
		return 2
	}
	s := append([]setting(nil), settings...)
	sort.SliceStable(s, func(i, j int) bool { return order(s[i].name) < order(s[j].name) })
	cols := make([]string, len(s))
	for i, st := range s {
		cols[i] = "set_config(" + quoteLiteral(st.name) + ", " + quoteLiteral(st.value) + ", false)"
	}
	return "SELECT " + strings.Join(cols, ", ")
}

// maxClassifiedQuery is the largest simple Query the relay reads whole to
// classify it; larger ones (bulk loads) pass through unclassified.
const maxClassifiedQuery = 1 << 20

// classifyMessage classifies the SQL of a Query or Parse message whose
// header is next in c.r (body: see frontendBody, nil when not read yet).
// A Query larger than the read buffer is classified only when the relay
// read it whole (up to maxClassifiedQuery).
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
		_, rest, ok := cstring(body)
		if !ok {
			return nil
		}
		q, _, ok := cstring(rest)
		if !ok {
			return nil
		}
		body = q
	}
	effs, _ := c.classifyText(body)
	return effs
}

// cleanServer runs when s goes back to the pool (its client's transaction
// ended, or the client left): under preserve it first reads back the
// settings the client left on s, so that they follow the client; then it
// resets what the client changed. It reports false when the server must
// be closed instead (it failed, or a library was LOADed into it).
func (c *clientConn) cleanServer(s *serverConn, gone bool) bool {
	c.mu.Lock()
	st := &c.state
	if !st.dirty() {
		c.mu.Unlock()
		return true
	}
	if st.loaded {
		st.loaded = false
		*st = sessionState{logged: st.logged, settings: st.settings}
		c.mu.Unlock()
		return false
	}
	preserve := c.proxy.cfg.OnSessionState == PolicyPreserve && !gone
	var names []string
	if preserve {
		for n := range st.touched {
			names = append(names, n)
		}
		sort.Strings(names)
		if st.resetAll {
			st.settings = nil
		}
	}
	cleanup := cleanupSQL(st)
	c.mu.Unlock()
	var vals []string
	if len(names) > 0 {
		var err error
		if vals, err = s.runInternal(readbackSQL(names)); err != nil || len(vals) != len(names) {
			c.proxy.log.Warn("could not read a client's settings back; server closed", "user", c.user, "err", err)
			return false
		}
	}
	if cleanup != "" {
		if _, err := s.runInternal(cleanup); err != nil {
			c.proxy.log.Warn("could not clean a server of session state; server closed", "user", c.user, "err", err)
			return false
		}
	}
	c.mu.Lock()
	settings := st.settings
	for i, n := range names {
		found := false
		for j := range settings {
			if settings[j].name == n {
				settings[j].value, found = vals[i], true
			}
		}
		if !found {
			settings = append(settings, setting{n, vals[i]})
		}
	}
	*st = sessionState{logged: st.logged, settings: settings}
	c.mu.Unlock()
	return true
}
