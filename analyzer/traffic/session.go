package traffic

import (
	"cmp"
	"slices"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// trafficAnalysis follows the sessions of captures. Each session is
// rebuilt transaction by transaction (from the events' transaction
// numbers, which the writer derives from ReadyForQuery): when a
// transaction ends, the SQL rules run over the statements it executed, as
// scan runs them over a BEGIN … COMMIT block; then the session state those
// statements created is followed into later transactions, and a rule's
// finding is kept only when the state crossed a transaction boundary.
type trafficAnalysis struct {
	cfg         *analyzer.Config
	opt         Options
	checks      []*rules.Rule // the enabled SQL rules
	traffic     []*rules.Rule // the enabled traffic rules
	interesting []string
	sessions    map[sessKey]*session
	parsed      map[string][]*parsedStmt
	groups      map[groupKey]*findingGroup
	order       []groupKey
	statements  int
	// sessionsSeen counts the sessions of the capture being read.
	sessionsSeen int
}

func newTrafficAnalysis(c *analyzer.Config, opt Options) *trafficAnalysis {
	a := &trafficAnalysis{cfg: c, opt: opt, sessions: map[sessKey]*session{}, parsed: map[string][]*parsedStmt{}, groups: map[groupKey]*findingGroup{}}
	a.checks = c.Checks()
	for _, r := range c.EnabledRules() {
		if r.Traffic != nil {
			a.traffic = append(a.traffic, r)
		}
	}
	a.interesting = rules.InterestingFuncs(a.checks)
	for _, f := range effects.Funcs {
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

// sessKey identifies a session: its capture (captureSet.key) and its id,
// which is unique only within the capture.
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
	evTx  int64 // the transaction number of the last event; cur.num counts on its own
	// state is what the session holds, paired by the one session model;
	// items are the parts of it analyze follows, by their state.
	state  effects.Session
	items  []*item
	itemOf map[*effects.Held]*item

	named   map[string]protoStmt // named protocol statements
	unnamed protoStmt
	portals map[string]string // portal → query string
	lastRun *stmtRun          // the last statement executed
	runOpen bool              // lastRun has not been answered by a ReadyForQuery yet

	nextval  map[string]int64 // sequence key → transaction of its last nextval()
	anyNext  int64            // transaction of the last nextval() of any sequence
	insertTx int64            // transaction of the last INSERT

	// extended is set while the client's last message was an
	// extended-protocol one; skipping after an error among those, until
	// the next Sync: the server ignores the messages in between.
	extended, skipping bool
	// segRuns are the statements the Executes since the last Sync ran,
	// in order (nil for an Execute of nothing known), for an error's
	// Completed count.
	segRuns []*stmtRun

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
	client    bool // the client sent a message in it
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

func (a *trafficAnalysis) event(capKey string, h capture.Header, file string, ev *capture.Event) {
	key := sessKey{capKey, ev.Session}
	s := a.sessions[key]
	if s == nil {
		a.sessionsSeen++
		s = &session{a: a, key: key, file: file, start: h.Start, named: map[string]protoStmt{}, portals: map[string]string{},
			nextval: map[string]int64{}, idleSince: -1, itemOf: map[*effects.Held]*item{}}
		s.state.Begin()
		s.evTx = ev.Tx
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
	if ev.Tx != s.evTx {
		s.evTx = ev.Tx
		s.endTx()
		s.beginTx(s.cur.num + 1)
	}
	switch ev.Kind {
	case capture.Query, capture.Parse, capture.Bind, capture.Describe, capture.Execute, capture.Close,
		capture.Sync, capture.Flush, capture.FunctionCall:
		s.clientActive(ev)
		s.clientTx()
	case capture.CopyEnd:
		if ev.From == "client" {
			s.clientActive(ev)
			s.clientTx()
		}
	}
	switch ev.Kind {
	case capture.Parse, capture.Bind, capture.Describe, capture.Execute, capture.Close, capture.Flush:
		s.extended = true
	case capture.Query, capture.FunctionCall:
		s.extended = false
	case capture.Sync:
		s.extended, s.skipping = false, false
	case capture.Ready:
		// The round trip is answered (the capture holds a client's
		// next messages until then): its Executes are settled.
		s.segRuns = s.segRuns[:0]
	case capture.Error:
		if s.extended {
			s.skipping = true
		}
		if ev.Completed != nil {
			// The Executes before the failed one ran; the failed one and
			// every one after it (the server skipped them) did not.
			for i, e := range s.segRuns {
				if i >= *ev.Completed && e != nil {
					e.failed = true
				}
			}
			s.segRuns = s.segRuns[:0]
			s.cur.sawError, s.cur.recovered = true, false
			return
		}
	}
	if s.skipping {
		switch ev.Kind {
		case capture.Query, capture.Parse, capture.Bind, capture.Describe, capture.Execute, capture.Close, capture.FunctionCall:
			return // skipped by the server: it ran nothing
		}
	}
	switch ev.Kind {
	case capture.Query:
		s.segRuns = s.segRuns[:0]
		if ev.SQL != "" {
			s.run(ev.SQL, file, ev)
		}
	case capture.Parse:
		ps := protoStmt{sql: ev.SQL, tx: s.cur.num, file: file, line: ev.Line, ok: ev.SQL != "" || ev.Invalid == ""}
		if ev.Name == "" {
			s.unnamed = ps
		} else {
			s.named[ev.Name] = ps
			s.state.Parse(ev.Name)
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
			s.ended(s.state.CloseStatement(ev.Name).Ended, false)
		} else if ev.Target == "P" {
			delete(s.portals, ev.Name)
		}
	case capture.Execute:
		var run *stmtRun
		if sql := s.portals[ev.Portal]; sql != "" {
			s.run(sql, file, ev)
			run = s.lastRun
		}
		s.segRuns = append(s.segRuns, run)
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

// maxTxStatements is the number of statements of one transaction kept in
// full; later ones are kept only when a rule may report them.
const maxTxStatements = 10000

// run executes the statements of a query string.
//
// A COMMIT or ROLLBACK inside a Query string ends the transaction there:
// the statements after it run in another one, though the capture numbers
// them with the rest of the Query.
func (s *session) run(sql, file string, ev *capture.Event) {
	for i, p := range s.a.parse(sql) {
		if i > 0 && s.lastRun != nil && s.lastRun.p.facts.ends {
			s.endTx()
			s.beginTx(s.cur.num + 1)
			s.clientTx()
		}
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

// beginTx starts transaction num.
func (s *session) beginTx(num int64) {
	s.cur = txn{num: num}
	s.state.Begin()
	clear(s.portals)
}

// clientTx notes that the client sent a message in the current
// transaction. Only such a transaction counts as a later transaction of a
// session SET or SET ROLE: a transaction made of server messages alone
// (a ReadyForQuery that answers no client message, such as the answer to
// a reset a proxy sends after its client left) ran nothing of the
// client's.
func (s *session) clientTx() {
	if s.cur.client {
		return
	}
	s.cur.client = true
	for _, it := range s.items {
		if (it.kind == itemSet || it.kind == itemRole) && it.tx < s.cur.num {
			it.laterTx++
		}
	}
}

// endTx runs the SQL rules over the transaction that just ended and
// settles the state it made.
func (s *session) endTx() {
	tx := s.cur
	if len(tx.execs) == 0 {
		s.ended(s.state.Commit().Ended, true)
		return
	}
	last := tx.execs[len(tx.execs)-1]
	rolledBack := last.p.facts.rollback || (tx.sawError && !tx.recovered)

	// A statement that failed made nothing; a rollback undoes what the
	// session model says it undoes (not advisory locks nor SQL prepared
	// statements), and transaction-scoped state ends here.
	for _, it := range append([]*item(nil), s.items...) {
		if it.tx == tx.num && it.ex.failed {
			s.state.Forget(it.h)
			s.remove(it)
		}
	}
	if rolledBack {
		s.ended(s.state.Rollback().Ended, true)
	} else {
		s.ended(s.state.Commit().Ended, true)
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
	pass := rules.NewPass(nil, s.a.cfg.JudgedTarget(), g, func(f rules.Finding) { found = append(found, f) })
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

func (s *session) fill(o *occurrence, e *stmtRun, f *rules.Finding) {
	o.msg, o.fix = analyzer.HidePlaceholder(f.Message), f.Fix
	o.stmt, o.fp = e.p.text, e.p.fp
	o.key = e.p.fp
	if o.key == "" {
		o.key = e.p.text
	}
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
