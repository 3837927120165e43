package analyzer

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// trafficAnalysis follows the sessions of captures. Each session is
// rebuilt transaction by transaction (from the events' transaction
// numbers, which the writer derives from ReadyForQuery): when a
// transaction ends, the SQL rules run over the statements it executed, as
// scan runs them over a BEGIN … COMMIT block; then the session state those
// statements created is followed into later transactions, and a rule's
// finding is kept only when the state crossed a transaction boundary.
type trafficAnalysis struct {
	cfg         *Config
	opt         CaptureOptions
	checks      []*rules.Rule
	interesting []string
	sessions    map[sessKey]*session
	parsed      map[string][]*parsedStmt
	groups      map[groupKey]*findingGroup
	order       []groupKey
	statements  int
}

func newTrafficAnalysis(c *Config, opt CaptureOptions) *trafficAnalysis {
	a := &trafficAnalysis{cfg: c, opt: opt, sessions: map[sessKey]*session{}, parsed: map[string][]*parsedStmt{}, groups: map[groupKey]*findingGroup{}}
	for _, r := range c.rules() {
		if r.Check != nil {
			a.checks = append(a.checks, r)
		}
	}
	a.interesting = rules.InterestingFuncs(a.checks)
	for _, f := range trafficFuncs {
		if !contains(a.interesting, f) {
			a.interesting = append(a.interesting, f)
		}
	}
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sessKey identifies a session across the files of one capture.
type sessKey struct {
	capture string
	id      uint64
}

// session is the state of one client session being followed.
type session struct {
	a     *trafficAnalysis
	key   sessKey
	file  string
	start time.Time // the capture's start
	app   string
	cur   txn
	items []*item

	named   map[string]protoStmt // named protocol statements
	unnamed protoStmt
	portals map[string]string // portal → query string
	lastRun *stmtRun          // the last statement executed
	runOpen bool              // lastRun has not been answered by a ReadyForQuery yet

	nextval  map[string]int64 // sequence key → transaction of its last nextval()
	anyNext  int64            // transaction of the last nextval() of any sequence
	insertTx int64            // transaction of the last INSERT

	idleSince int64 // time of a ReadyForQuery T or E not yet followed by a client message; -1 when none
	idleLine  int
	idleFile  string
}

// protoStmt is a statement prepared with Parse.
type protoStmt struct {
	sql  string
	tx   int64
	file string
	line int
	ok   bool
}

// txn is the current transaction of a session.
type txn struct {
	num       int64
	execs     []*stmtRun
	explicit  bool // a ReadyForQuery T or E was seen inside it
	sawError  bool
	recovered bool // a ROLLBACK TO SAVEPOINT after the last error
}

// stmtRun is one execution of one statement.
type stmtRun struct {
	p        *parsedStmt
	st       *rules.Stmt
	file     string
	line     int
	t        int64
	items    []*item
	failed   bool
	seqCross bool
}

// itemKind is a kind of session state followed across transactions.
type itemKind int

const (
	itemSet itemKind = iota
	itemRole
	itemLock
	itemListen
	itemTemp
	itemCursor
	itemPrepare
)

// item is one piece of session state a statement created.
type item struct {
	kind       itemKind
	name       string
	tx         int64
	ex         *stmtRun
	finding    *rules.Finding
	commitDrop bool

	laterTx   int   // later transactions the session ran while it existed
	read      bool  // a later transaction read it (SHOW, current_setting)
	usedLater bool  // a later transaction used it
	endedTx   int64 // the later transaction that ended it (unlock, UNLISTEN, DROP …)
	notified  int   // notifications that arrived on its channel
}

func (a *trafficAnalysis) event(h capture.Header, file string, ev *capture.Event) {
	key := sessKey{h.ID + "/" + file, ev.Session}
	if h.ID != "" {
		key.capture = h.ID
	}
	s := a.sessions[key]
	if s == nil {
		s = &session{a: a, key: key, file: file, start: h.Start, named: map[string]protoStmt{}, portals: map[string]string{},
			nextval: map[string]int64{}, idleSince: -1}
		s.cur.num = ev.Tx
		a.sessions[key] = s
	}
	if ev.Kind == capture.SessionStart {
		s.app = ev.ApplicationName
		s.startup(ev)
		return
	}
	if ev.Kind == capture.SessionEnd {
		s.clientGone(ev.T)
		s.finish()
		delete(a.sessions, key)
		return
	}
	if ev.Tx != s.cur.num {
		s.endTx()
		s.beginTx(ev.Tx)
	}
	switch ev.Kind {
	case capture.Query, capture.Parse, capture.Bind, capture.Describe, capture.Execute, capture.Close,
		capture.Sync, capture.Flush, capture.FunctionCall:
		s.clientActive(ev)
	case capture.CopyEnd:
		if ev.From == "client" {
			s.clientActive(ev)
		}
	}
	switch ev.Kind {
	case capture.Query:
		if ev.SQL != "" {
			s.run(ev.SQL, file, ev)
		}
	case capture.Parse:
		ps := protoStmt{sql: ev.SQL, tx: s.cur.num, file: file, line: ev.Line, ok: ev.SQL != "" || ev.Invalid == ""}
		if ev.Name == "" {
			s.unnamed = ps
		} else {
			s.named[ev.Name] = ps
		}
	case capture.Bind:
		sql := s.useStatement(ev.Name, ev)
		s.portals[ev.Portal] = sql
	case capture.Describe:
		if ev.Target == "S" {
			s.useStatement(ev.Name, ev)
		}
	case capture.Close:
		if ev.Target == "S" && ev.Name != "" {
			delete(s.named, ev.Name)
		} else if ev.Target == "P" {
			delete(s.portals, ev.Name)
		}
	case capture.Execute:
		if sql := s.portals[ev.Portal]; sql != "" {
			s.run(sql, file, ev)
		}
	case capture.Ready:
		s.runOpen = false
		switch ev.Status {
		case "T", "E":
			s.cur.explicit = true
			s.idleSince, s.idleFile, s.idleLine = ev.T, file, ev.Line
		default:
			s.idleSince = -1
		}
	case capture.Error:
		// The error is the last statement's when no ReadyForQuery came
		// between them; an error of a Bind or Parse fails no statement.
		s.cur.sawError = true
		s.cur.recovered = false
		if s.runOpen && s.lastRun != nil {
			s.lastRun.failed = true
		}
	case capture.Notification:
		for _, it := range s.items {
			if it.kind == itemListen && it.name == ev.Channel {
				it.notified++
			}
		}
	}
}

// finishAll ends every session still open (the capture stopped first).
func (a *trafficAnalysis) finishAll() {
	keys := make([]sessKey, 0, len(a.sessions))
	for k := range a.sessions {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y sessKey) int {
		return cmp.Or(cmp.Compare(x.capture, y.capture), cmp.Compare(x.id, y.id))
	})
	for _, k := range keys {
		a.sessions[k].finish()
		delete(a.sessions, k)
	}
}

func (s *session) at(t int64) time.Time { return s.start.Add(time.Duration(t)) }

// occurrence returns an occurrence of this session with the common fields.
func (s *session) occurrence(r *rules.Rule, sev rules.Severity, file string, line int, t int64) occurrence {
	return occurrence{rule: r.ID, sev: sev, fix: r.Fix, file: file, line: line, session: s.key, app: s.app, at: s.at(t)}
}

// startup checks the startup parameters against the target.
func (s *session) startup(ev *capture.Event) {
	names := make([]string, 0, len(ev.Params))
	for name := range ev.Params {
		names = append(names, name)
	}
	slices.Sort(names)
	t := s.a.cfg.target()
	for _, name := range names {
		v := ev.Params[name]
		lower := strings.ToLower(name)
		switch lower {
		case "user", "database", "application_name", "replication", "password":
			continue
		}
		if rules.TrackedParams[lower] {
			continue
		}
		what := fmt.Sprintf("the client sends startup parameter %s=%s", name, clip(v, 60))
		if lower == "options" && t == rules.PgBouncer {
			// PgBouncer 1.20+ parses options and keeps the -c settings of
			// the tracked parameters.
			untracked := untrackedOptions(v)
			if len(untracked) == 0 {
				continue
			}
			what += " with settings PgBouncer does not track (" + strings.Join(untracked, ", ") + ")"
		}
		sev, why := startupHandling(t, lower)
		o := s.occurrence(rules.StartupParameter, sev, s.file, ev.Line, ev.T)
		o.key = "param:" + lower
		o.msg = what + ": " + why
		if lower == "options" {
			o.fix = "remove the -c settings from the connection's options and set them per role or database (ALTER ROLE … SET), or with SET LOCAL inside transactions"
		}
		s.a.add(o)
	}
}

// untrackedOptions returns the names of the settings in a startup options
// string (-c name=value, --name=value) that are not tracked parameters.
func untrackedOptions(v string) []string {
	var out []string
	fields := strings.Fields(v)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		var setting string
		switch {
		case f == "-c" && i+1 < len(fields):
			i++
			setting = fields[i]
		case strings.HasPrefix(f, "-c"):
			setting = f[2:]
		case strings.HasPrefix(f, "--"):
			setting = f[2:]
		default:
			out = append(out, f) // another switch: PgBouncer refuses it
			continue
		}
		name, _, _ := strings.Cut(setting, "=")
		name = strings.ToLower(strings.ReplaceAll(name, "-", "_"))
		if !rules.TrackedParams[name] {
			out = append(out, name)
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// startupHandling says what target t does with a startup parameter that
// is not one of the tracked ones (rules/docs/startup-parameter.md).
func startupHandling(t rules.Target, name string) (rules.Severity, string) {
	switch t {
	case rules.PgBouncer, rules.PgBouncerLegacy:
		if name == "extra_float_digits" {
			return rules.Warning, "PgBouncer refuses the connection (unsupported startup parameter) unless ignore_startup_parameters lists it, and then drops it (harmless for this one)"
		}
		return rules.Error, "PgBouncer refuses the connection (unsupported startup parameter) unless ignore_startup_parameters lists it, and then drops it silently: the client runs with the server's default"
	case rules.PgDog:
		return rules.Info, "PgDog treats it like SET and replays it on the server connections the client gets"
	case rules.RDSProxy:
		return rules.Warning, "RDS Proxy pins sessions whose startup parameters it does not track: multiplexing is lost for this client"
	case rules.PgPoolCheck:
		return rules.Info, "pgpoolcheck (--on-session-state preserve) replays it on each server connection the client gets, like its SETs"
	}
	return rules.StartupParameter.Severity, "a transaction-mode pooler may run the client's transactions on server connections opened without it"
}

// clientActive ends an idle-in-transaction gap when the client speaks.
func (s *session) clientActive(ev *capture.Event) {
	if s.idleSince < 0 {
		return
	}
	s.idleGap(ev.T-s.idleSince, "")
	s.idleSince = -1
}

// clientGone ends an idle gap at the end of the session.
func (s *session) clientGone(t int64) {
	if s.idleSince >= 0 && t >= s.idleSince {
		s.idleGap(t-s.idleSince, " until the session ended")
	}
	s.idleSince = -1
}

func (s *session) idleGap(d int64, tail string) {
	if time.Duration(d) <= s.a.opt.IdleThreshold {
		return
	}
	o := s.occurrence(rules.IdleInTransaction, rules.IdleInTransaction.Severity, s.idleFile, s.idleLine, s.idleSince)
	o.dur = time.Duration(d)
	if e := s.lastRun; e != nil {
		o.file, o.line, o.stmt, o.fp, o.key = e.file, e.line, e.p.text, e.p.fp, e.p.fp
		if o.key == "" {
			o.key = e.p.text
		}
	}
	o.msg = fmt.Sprintf("the client left its transaction open and idle for more than %s%s after this statement: the server connection stays tied to it, so a transaction-mode pooler cannot give it to other clients, and the open transaction holds its locks and snapshot", s.a.opt.IdleThreshold, tail)
	s.a.add(o)
}

// useStatement records a Bind or Describe of a prepared statement and
// returns its query string.
func (s *session) useStatement(name string, ev *capture.Event) string {
	if name == "" {
		u := s.unnamed
		if u.ok && u.sql != "" && u.tx < s.cur.num && ev.Kind == capture.Bind {
			o := s.occurrence(rules.UnnamedStatementReuse, unnamedSeverity(s.a.cfg.target()), u.file, u.line, ev.T)
			o.stmt, o.fp = u.sql, s.a.fingerprint(u.sql)
			o.key = o.fp
			o.msg = "the unnamed statement is parsed, then Sync ends the round trip outside a transaction, and it is bound in the next one: " + unnamedWhat(s.a.cfg.target())
			s.a.add(o)
		}
		return u.sql
	}
	ps, ok := s.named[name]
	if !ok {
		return ""
	}
	if ps.tx < s.cur.num {
		o := s.occurrence(rules.ProtocolPrepare, protocolSeverity(s.a.cfg.target()), ps.file, ps.line, ev.T)
		o.stmt, o.fp = ps.sql, s.a.fingerprint(ps.sql)
		o.key = o.fp
		if o.key == "" {
			o.key = ps.sql
		}
		o.msg = fmt.Sprintf("the named protocol-level statement %s (%s) is prepared in one transaction and used in later ones: %s", namePattern(name), driverOf(name), protocolWhat(s.a.cfg.target()))
		s.a.add(o)
		// Count it once per transaction of use.
		ps.tx = s.cur.num
		s.named[name] = ps
	}
	return ps.sql
}

func unnamedSeverity(t rules.Target) rules.Severity {
	if t == rules.PgPoolCheck {
		return rules.Info
	}
	return rules.UnnamedStatementReuse.Severity
}

func unnamedWhat(t rules.Target) string {
	if t == rules.PgPoolCheck {
		return "pgpoolcheck re-parses the unnamed statement for its client, so the Bind finds it"
	}
	return "behind a transaction-mode pooler the Bind may reach another server connection, which has no such statement or someone else's (no pooler setting fixes this)"
}

func protocolSeverity(t rules.Target) rules.Severity {
	switch t {
	case rules.PgBouncer, rules.PgPoolCheck, rules.PgDog:
		return rules.Info
	case rules.RDSProxy:
		return rules.Warning
	}
	return rules.ProtocolPrepare.Severity
}

func protocolWhat(t rules.Target) string {
	switch t {
	case rules.PgBouncer:
		return "PgBouncer 1.21+ with max_prepared_statements set re-prepares it on whichever server connection the client gets (check that setting is on)"
	case rules.PgPoolCheck:
		return "pgpoolcheck re-prepares it on whichever server connection the client gets"
	case rules.PgDog:
		return "PgDog re-prepares it on whichever server connection the client gets"
	case rules.RDSProxy:
		return "RDS Proxy pins the session: multiplexing is lost for this client"
	case rules.PgBouncerLegacy:
		return "PgBouncer before 1.21 sends the later Bind to any server connection: \"prepared statement does not exist\", or another client's statement of the same name"
	}
	return "a transaction-mode pooler sends the later Bind to any server connection: \"prepared statement does not exist\", or another client's statement of the same name"
}

// drivers names the client library from a statement-name prefix.
var drivers = []struct{ prefix, driver string }{
	{"stmtcache_", "pgx's statement cache"},
	{"lrupsc_", "pgx v4's statement cache"},
	{"S_", "the PostgreSQL JDBC driver"},
	{"_pg3_", "psycopg 3"},
	{"__asyncpg_stmt_", "asyncpg"},
	{"sqlx_s_", "sqlx"},
	{"P_", "pgbench -M prepared"},
	{"pdo_stmt_", "PHP PDO"},
	{"_p", "Npgsql"},
}

func driverOf(name string) string {
	for _, d := range drivers {
		if strings.HasPrefix(name, d.prefix) && len(name) > len(d.prefix) {
			if d.prefix == "_p" && !digits(name[2:]) {
				continue
			}
			return "named by " + d.driver
		}
	}
	if len(name) > 1 && name[0] == 'a' && digits(name[1:]) {
		return "named by Rails (ActiveRecord)"
	}
	return "named by the application"
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// namePattern shows a statement name with its varying tail elided, so
// that one finding stands for every statement of a driver's cache.
func namePattern(name string) string {
	for _, d := range drivers {
		if strings.HasPrefix(name, d.prefix) && len(name) > len(d.prefix) {
			return strconv.Quote(d.prefix + "…")
		}
	}
	return strconv.Quote(name)
}

// maxTxStatements is the number of statements of one transaction kept in
// full; later ones are kept only when a rule may report them.
const maxTxStatements = 10000

// run executes the statements of a query string.
func (s *session) run(sql, file string, ev *capture.Event) {
	for _, p := range s.a.parse(sql) {
		s.a.statements++
		e := &stmtRun{p: p, st: rules.NewStmt(p.st, s.a.interesting), file: file, line: ev.Line, t: ev.T}
		s.lastRun, s.runOpen = e, true
		s.apply(e)
		// A huge transaction keeps only the statements that matter to a
		// rule, so memory stays bounded by the live sessions.
		if len(s.cur.execs) >= maxTxStatements && rules.Inert(e.st) && len(e.items) == 0 {
			continue
		}
		s.cur.execs = append(s.cur.execs, e)
	}
}

// live returns the live items of a kind with a name.
func (s *session) find(kind itemKind, name string) []*item {
	var out []*item
	for _, it := range s.items {
		if it.kind == kind && (name == "" || it.name == name) {
			out = append(out, it)
		}
	}
	return out
}

func (s *session) addItem(e *stmtRun, kind itemKind, name string) *item {
	it := &item{kind: kind, name: name, tx: s.cur.num, ex: e}
	s.items = append(s.items, it)
	e.items = append(e.items, it)
	return it
}

// end removes an item, reporting it when it crossed a transaction
// boundary in a way that matters for its kind.
func (s *session) end(it *item) {
	for i, x := range s.items {
		if x == it {
			s.items = append(s.items[:i], s.items[i+1:]...)
			break
		}
	}
	if it.tx == s.cur.num && it.finding == nil {
		return // made and cleaned in one transaction
	}
	if it.endedTx == 0 && it.tx < s.cur.num {
		it.endedTx = s.cur.num
	}
	s.report(it)
}

// apply follows what one execution does to the session's state.
func (s *session) apply(e *stmtRun) {
	f := e.p.facts
	now := s.cur.num
	later := func(it *item) bool { return it.tx < now }

	// Uses of state made earlier.
	for _, name := range f.reads {
		for _, it := range s.items {
			if (it.kind == itemSet && (it.name == name || it.name == "?")) || (it.kind == itemRole && roleParam(name)) {
				if later(it) {
					it.read = true
				}
			}
		}
	}
	for _, name := range f.rels {
		for _, it := range s.find(itemTemp, name) {
			if later(it) {
				it.usedLater = true
			}
		}
	}
	for _, name := range f.cursors {
		for _, it := range s.find(itemCursor, name) {
			if later(it) {
				it.usedLater = true
			}
		}
	}
	for _, name := range append(f.executes, f.deallocs...) {
		for _, it := range s.find(itemPrepare, name) {
			if later(it) {
				it.usedLater = true
			}
		}
	}
	for _, key := range f.currvals {
		src, ok := s.nextval[key]
		if !ok {
			src = s.insertTx
		}
		if src > 0 && src < now {
			e.seqCross = true
		}
	}
	if f.lastval {
		src := max(s.anyNext, s.insertTx)
		if src > 0 && src < now {
			e.seqCross = true
		}
	}

	// What it ends.
	if f.discardAll {
		for _, it := range append([]*item(nil), s.items...) {
			s.end(it)
		}
	}
	if f.resetAll {
		for _, it := range s.find(itemSet, "") {
			s.end(it)
		}
	}
	for _, name := range f.resets {
		for _, it := range s.find(itemSet, name) {
			s.end(it)
		}
	}
	if f.resetRole {
		for _, it := range s.find(itemRole, "") {
			s.end(it)
		}
	}
	for _, key := range f.unlocks {
		locks := s.find(itemLock, key)
		if len(locks) == 0 {
			// The values of query parameters are not in the capture: an
			// unlock may release a lock whose key was a parameter or an
			// expression.
			for _, it := range s.find(itemLock, "") {
				if !knownKey(it.name) {
					locks = append(locks, it)
				}
			}
		}
		if len(locks) > 0 {
			s.end(locks[len(locks)-1])
		}
	}
	if f.unlockAll {
		for _, it := range s.find(itemLock, "") {
			s.end(it)
		}
	}
	for _, name := range f.unlistens {
		for _, it := range s.find(itemListen, name) {
			s.end(it)
		}
	}
	if f.unlistenAll {
		for _, it := range s.find(itemListen, "") {
			s.end(it)
		}
	}
	for _, name := range f.drops {
		for _, it := range s.find(itemTemp, name) {
			if later(it) {
				it.usedLater = true
			}
			s.end(it)
		}
	}
	if f.discardTemp {
		for _, it := range s.find(itemTemp, "") {
			s.end(it)
		}
	}
	for _, name := range f.cursors {
		if e.p.st.Node.GetClosePortalStmt() != nil {
			for _, it := range s.find(itemCursor, name) {
				s.end(it)
			}
		}
	}
	if f.closeAll {
		for _, it := range s.find(itemCursor, "") {
			s.end(it)
		}
	}
	for _, name := range f.deallocs {
		for _, it := range s.find(itemPrepare, name) {
			s.end(it)
		}
	}
	if f.deallocAll {
		for _, it := range s.find(itemPrepare, "") {
			s.end(it)
		}
	}

	// What it makes.
	for _, name := range f.sets {
		for _, it := range s.find(itemSet, name) {
			s.end(it) // set again: the older value is gone
		}
		s.addItem(e, itemSet, name)
	}
	if f.role {
		for _, it := range s.find(itemRole, "") {
			s.end(it)
		}
		s.addItem(e, itemRole, "role")
	}
	for _, key := range f.locks {
		s.addItem(e, itemLock, key)
	}
	for _, name := range f.listens {
		if len(s.find(itemListen, name)) == 0 {
			s.addItem(e, itemListen, name)
		}
	}
	for _, t := range f.temps {
		s.addItem(e, itemTemp, t.name).commitDrop = t.commitDrop
	}
	for _, name := range f.holds {
		s.addItem(e, itemCursor, name)
	}
	for _, name := range f.prepares {
		s.addItem(e, itemPrepare, name)
	}
	if f.rollbackTo {
		s.cur.recovered = true
	}
	for _, key := range f.nextvals {
		s.nextval[key] = now
		s.anyNext = now
	}
	if f.insert {
		s.insertTx = now
	}
}

// knownKey reports whether an advisory lock key is made of constants only.
func knownKey(key string) bool {
	for _, k := range strings.Split(key, ",") {
		if k == "?" || strings.HasPrefix(k, "$") {
			return false
		}
	}
	return true
}

// beginTx starts transaction num.
func (s *session) beginTx(num int64) {
	s.cur = txn{num: num}
	clear(s.portals)
	for _, it := range s.items {
		if it.kind == itemSet || it.kind == itemRole {
			it.laterTx++
		}
	}
}

// stateRules are the SQL rules whose findings stand for session state that
// analyze follows; their findings are kept only when the state crossed a
// transaction boundary. Findings of the other SQL rules are kept as they
// are.
var stateRules = map[string]itemKind{
	rules.SessionSet.ID:          itemSet,
	rules.SessionRole.ID:         itemRole,
	rules.AdvisoryLockSession.ID: itemLock,
	rules.Listen.ID:              itemListen,
	rules.TempTable.ID:           itemTemp,
	rules.CursorWithHold.ID:      itemCursor,
	rules.SQLPrepare.ID:          itemPrepare,
}

// endTx runs the SQL rules over the transaction that just ended and
// settles the state it made.
func (s *session) endTx() {
	tx := s.cur
	if len(tx.execs) == 0 {
		return
	}
	last := tx.execs[len(tx.execs)-1]
	rolledBack := last.p.facts.rollback || (tx.sawError && !tx.recovered)

	// Undo what a rollback or a failed statement undoes. Advisory locks
	// and SQL prepared statements are not transactional.
	for _, it := range append([]*item(nil), s.items...) {
		if it.tx != tx.num {
			continue
		}
		transactional := it.kind != itemLock && it.kind != itemPrepare
		if it.ex.failed || (rolledBack && transactional) || (it.kind == itemTemp && it.commitDrop) {
			s.remove(it)
		}
	}

	g := &rules.Group{Explicit: tx.explicit || len(tx.execs) > 1}
	byStmt := map[*rules.Stmt]*stmtRun{}
	inert := true
	for _, e := range tx.execs {
		g.Stmts = append(g.Stmts, e.st)
		byStmt[e.st] = e
		if !rules.Inert(e.st) {
			inert = false
		}
	}
	if inert {
		return
	}
	var found []rules.Finding
	pass := rules.NewPass(nil, s.a.cfg.target(), g, func(f rules.Finding) { found = append(found, f) })
	for _, r := range s.a.checks {
		pass.Rule = r
		pass.Run()
	}
	for i := range found {
		f := &found[i]
		e := byStmt[f.Stmt]
		if e == nil || e.failed {
			continue
		}
		kind, isState := stateRules[f.Rule.ID]
		switch {
		case f.Rule == rules.SequenceSession:
			if e.seqCross {
				o := s.occurrence(f.Rule, f.Severity, e.file, e.line, e.t)
				s.fill(&o, e, f)
				o.note = "a nextval() ran in an earlier transaction of the session"
				s.a.add(o)
			}
		case isState:
			for _, it := range e.items {
				if it.kind == kind && s.alive(it) && it.finding == nil {
					it.finding = f
				}
			}
		default:
			o := s.occurrence(f.Rule, f.Severity, e.file, e.line, e.t)
			s.fill(&o, e, f)
			s.a.add(o)
		}
	}
}

func (s *session) alive(it *item) bool {
	for _, x := range s.items {
		if x == it {
			return true
		}
	}
	return false
}

// remove drops an item without reporting it.
func (s *session) remove(it *item) {
	for i, x := range s.items {
		if x == it {
			s.items = append(s.items[:i], s.items[i+1:]...)
			return
		}
	}
}

func (s *session) fill(o *occurrence, e *stmtRun, f *rules.Finding) {
	o.msg, o.fix = hidePlaceholder(f.Message), f.Fix
	o.stmt, o.fp = e.p.text, e.p.fp
	o.key = e.p.fp
	if o.key == "" {
		o.key = e.p.text
	}
}

// report turns an item that has ended (or outlived its session) into an
// occurrence when what it did crossed a transaction boundary.
func (s *session) report(it *item) {
	if it.finding == nil {
		return
	}
	var note string
	switch it.kind {
	case itemSet, itemRole:
		if it.laterTx == 0 {
			return
		}
		if it.read {
			note = "a later transaction read it (SHOW or current_setting)"
		} else {
			note = "the session ran later transactions, none of which read it back"
		}
	case itemLock:
		if it.endedTx > 0 {
			note = "still held when its transaction ended, released in a later transaction"
		} else {
			note = "still held when its transaction ended, never released by the session"
		}
	case itemListen:
		if it.notified > 0 {
			note = "notifications arrived after its transaction ended"
		} else {
			note = "listening after its transaction ended; no notification arrived"
		}
	case itemTemp, itemCursor, itemPrepare:
		if !it.usedLater {
			return
		}
		note = "used in a later transaction"
	}
	o := s.occurrence(it.finding.Rule, it.finding.Severity, it.ex.file, it.ex.line, it.ex.t)
	s.fill(&o, it.ex, it.finding)
	o.note = note
	s.a.add(o)
}

// finish ends the session: the open transaction is settled and the state
// still alive is reported.
func (s *session) finish() {
	s.endTx()
	s.cur = txn{num: s.cur.num + 1}
	for _, it := range append([]*item(nil), s.items...) {
		s.remove(it)
		s.report(it)
	}
}
