// Package rules is pgpoolcheck's rule catalogue: pure functions over parsed
// SQL that find statements which depend on server session state and so
// break, or leak to other clients, behind a transaction-mode pooler.
//
// A rule is one package-level *Rule in its own file, registered in
// registry.go, with its documentation in docs/<id>.md and its fixtures in
// testdata/<id>/. A rule's Check looks at one Group: the statements of one
// transaction (an explicit BEGIN … COMMIT block, a single autocommit
// statement, or a routine body, which runs inside its caller's
// transaction). What each statement does to session state comes from the
// effects model (package rules/effects, through Stmt.Changes and
// Stmt.Reads); the rules decide which of it is a hazard behind which
// pooler (Target), and how severe.
//
// A traffic rule's Traffic looks at one event of a client session that
// analyze rebuilt from a capture (TrafficEvent: a startup parameter, a
// prepared statement used in a later transaction, an idle transaction). A
// rule's APIs are the driver calls of application code it reports
// (DriverAPI, CheckCall), its Settings the connection settings,
// configuration keys and driver calls that make a driver keep session state
// (DriverSetting, CheckSetting). A scan rule's Scan looks at one event of
// the scan itself (ScanEvent: a parse error, an ignore directive, a file
// that is not UTF-8 or is written for another database). A state rule's
// Crossed judges what analyze saw of its state once the transaction that
// made it ended (Crossing). Either way the finding's message, severity and
// fix are the rule's; the analyzers only say what happened where.
package rules

import (
	"embed"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Rule is one check of the catalogue.
type Rule struct {
	// ID is the stable kebab-case identifier.
	ID string
	// Title is a one-line summary, lower-case, no final period.
	Title string
	// Severity is the severity when nothing lowers or raises it.
	Severity Severity
	// Security marks rules whose findings let one client's privileges or
	// data context reach another client.
	Security bool
	// Fix is the default remedy, one sentence.
	Fix string
	// Kind says what the rule looks at: SQL text, captured traffic, or the
	// scan itself (parse errors, ignore directives).
	Kind Kind
	// Settings are the driver settings (connection strings,
	// configuration keys, driver calls) the rule reports in a source
	// tree (CheckSetting); for a traffic rule, they are what scan reports
	// of it.
	Settings []DriverSetting
	// judgeSetting says what a use of one of Settings means behind a
	// target.
	judgeSetting settingJudge
	// Check reports the rule's findings in one group; nil for rules that
	// are not checks over SQL text.
	Check func(p *Pass)
	// Traffic reports the rule's findings in one event of captured
	// traffic; set for traffic rules, nil for the others.
	Traffic func(p *TrafficPass)
	// Crossed judges, for analyze, what became of the session state one
	// of the rule's findings stands for once its transaction ended: the
	// finding's note, or ok false when the state did not cross a
	// transaction boundary in a way that matters. Set for the SQL rules
	// whose state analyze follows across transactions.
	Crossed func(c Crossing) (note string, ok bool)
	// Scan judges one event of the scan itself (ScanEvent: a parse
	// error, an ignore directive, a file that is not UTF-8 or is written
	// for another database); set for scan rules, nil for the others.
	Scan func(p *ScanPass)
	// APIs are the driver APIs whose calls in application code the rule
	// reports (CheckCall).
	APIs []DriverAPI
	// Funcs lists the lower-case function names the rule looks for. A
	// statement whose text mentions none of any rule's Funcs is not walked
	// for calls at all.
	Funcs []string
}

// Kind says what a rule looks at.
type Kind int

// Kinds of rules.
const (
	SQLRule     Kind = iota // a check over SQL text (scan and analyze)
	TrafficRule             // needs captured traffic (analyze only)
	ScanRule                // about the scan itself: parse errors, ignore directives
)

func (k Kind) String() string {
	switch k {
	case TrafficRule:
		return "traffic"
	case ScanRule:
		return "scan"
	}
	return "sql"
}

//go:embed docs/*.md
var docFS embed.FS

// Doc returns the rule's documentation page (Markdown).
func (r *Rule) Doc() string {
	b, err := docFS.ReadFile("docs/" + r.ID + ".md")
	if err != nil {
		return ""
	}
	return string(b)
}

// Group is the statements of one transaction, in order.
type Group struct {
	Stmts []*Stmt
	// Explicit is set for BEGIN … COMMIT blocks and routine bodies: the
	// statements share one transaction.
	Explicit bool
	// Body names the routine when the group is a routine body.
	Body string
	// RollsBack is set for a transaction that the driver rolls back and
	// never commits (a test transaction): it undoes what a ROLLBACK
	// undoes.
	RollsBack bool
	// AfterInsert is set for a framework's identity query: a statement
	// the framework runs right after an INSERT of its own, in that
	// INSERT's transaction, to read the key it generated (Spring
	// Security ACL's setClassIdentityQuery, MyBatis's @SelectKey with
	// before = false). A sequence the INSERT advanced is then advanced in
	// the group's transaction.
	AfterInsert bool

	undone []bool      // see Undone
	idx    *groupIndex // see index
	pairs  *pairing    // see pairing
}

// RolledBack reports whether the group is a transaction that ends with
// ROLLBACK (or ABORT): what it did to parameters, the role, temporary
// tables, LISTEN and cursors is undone, so none of it reaches the pool.
// Advisory locks, prepared statements and sequences are not transactional.
func (g *Group) RolledBack() bool {
	if !g.Explicit || g.Body != "" || len(g.Stmts) == 0 {
		return false
	}
	if g.RollsBack {
		return true
	}
	last := g.Stmts[len(g.Stmts)-1]
	if last.Node == nil {
		return false
	}
	ts := last.Node.GetTransactionStmt()
	return ts != nil && ts.Kind == pg.TransactionStmtKind_TRANS_STMT_ROLLBACK
}

// EndsInPrepare reports whether the group is a transaction that ends with
// PREPARE TRANSACTION. PostgreSQL refuses to prepare a transaction that
// operated on temporary objects, declared a WITH HOLD cursor or ran
// LISTEN or UNLISTEN: the PREPARE fails and the transaction is rolled
// back, so none of that reaches the pool. Parameters set with SET are
// kept, as after COMMIT.
func (g *Group) EndsInPrepare() bool {
	if !g.Explicit || g.Body != "" || len(g.Stmts) == 0 {
		return false
	}
	ts := g.Stmts[len(g.Stmts)-1].txStmt()
	return ts != nil && ts.Kind == pg.TransactionStmtKind_TRANS_STMT_PREPARE
}

// Undone reports whether the effects of statement i that a rollback
// undoes are undone: the group is rolled back, or a later ROLLBACK TO
// SAVEPOINT returns to a savepoint set before statement i.
func (g *Group) Undone(i int) bool {
	if g.RolledBack() {
		return true
	}
	if !g.Explicit || g.Body != "" {
		return false
	}
	if g.undone == nil {
		g.undone = undoneBySavepoints(g.Stmts)
	}
	return g.undone[i]
}

// undoneBySavepoints marks the statements that a ROLLBACK TO SAVEPOINT
// undoes: those after the savepoint it returns to.
func undoneBySavepoints(stmts []*Stmt) []bool {
	undone := make([]bool, len(stmts))
	var marks []int // open savepoints, by statement index
	for k, st := range stmts {
		ts := st.txStmt()
		if ts == nil {
			continue
		}
		switch ts.Kind {
		case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
			marks = append(marks, k)
		case pg.TransactionStmtKind_TRANS_STMT_RELEASE, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
			// Find the latest savepoint of that name; RELEASE destroys it
			// and the later ones, ROLLBACK TO keeps it and undoes what
			// follows it.
			for m := len(marks) - 1; m >= 0; m-- {
				if stmts[marks[m]].txStmt().SavepointName != ts.SavepointName {
					continue
				}
				if ts.Kind == pg.TransactionStmtKind_TRANS_STMT_RELEASE {
					marks = marks[:m]
					break
				}
				for j := marks[m] + 1; j < k; j++ {
					undone[j] = true
				}
				marks = marks[:m+1]
				break
			}
		}
	}
	return undone
}

func (st *Stmt) txStmt() *pg.TransactionStmt {
	if st.Node == nil {
		return nil
	}
	return st.Node.GetTransactionStmt()
}

// Finding is one problem a rule found.
type Finding struct {
	Rule     *Rule
	Severity Severity
	Stmt     *Stmt
	// Offset is the source byte offset the finding points at.
	Offset  int
	Message string
	Fix     string
}

// Pass is one run of one rule over one group.
type Pass struct {
	Rule   *Rule
	Target Target
	Group  *Group
	report func(Finding)
}

// NewPass prepares a run of r over g; report receives the findings.
func NewPass(r *Rule, t Target, g *Group, report func(Finding)) *Pass {
	return &Pass{Rule: r, Target: t, Group: g, report: report}
}

// Report records a finding at node location loc of st (or at the statement
// start when loc < 0). An empty fix means the rule's default fix.
func (p *Pass) Report(st *Stmt, loc int32, sev Severity, msg, fix string) {
	if fix == "" {
		fix = p.Rule.Fix
	}
	switch {
	case p.Group.Body == "DO block":
		msg += " (in a DO block)"
	case p.Group.Body != "":
		msg += " (in the body of " + p.Group.Body + ", run when it is called)"
	}
	p.report(Finding{Rule: p.Rule, Severity: sev, Stmt: st, Offset: st.Offset(loc), Message: msg, Fix: fix})
}

// StateMessage builds a finding's message: what the statement does, then,
// when the target lets the state break, what breaks and leaks, then the
// target's sentence.
func StateMessage(what, breaks string, h Handling, note string) string {
	if h == Breaks && breaks != "" {
		what += ": " + breaks
	}
	return what + "; " + note
}

// Stmt is one parsed statement, with what it does to session state
// (effects.Stmt: Changes, Reads) computed once for all rules.
type Stmt struct {
	*effects.Stmt
	// InCallerTx is set for a statement that runs in a transaction its
	// code's caller opened (a Python function of a DB-API file that runs
	// its SQL through a cursor it was given, before any commit of its
	// own), or after a call its code handed the transaction's connection:
	// what the caller ran before the call, or the callee, an INSERT that
	// advanced a sequence included, is in the statement's transaction.
	InCallerTx bool
	// TxBefore holds the statements that ran before this one in its
	// transaction but are not in its group (a guessed DB-API implicit
	// transaction, see extract.Span.Ungrouped): only sequence-session
	// reads them.
	TxBefore []*Stmt
	// mentioned lists the function names any enabled rule looks for that
	// occur in the statement's text.
	mentioned []string
}

// NewStmt wraps a parsed statement. interesting is the set of function
// names any enabled rule looks for (see Rule.Funcs).
func NewStmt(s *sqlparse.Statement, interesting []string) *Stmt {
	st := &Stmt{Stmt: effects.NewStmt(s)}
	for _, m := range st.Mentioned() {
		if slices.Contains(interesting, m) {
			st.mentioned = append(st.mentioned, m)
		}
	}
	return st
}

// Offset maps a node location of the statement to a source offset.
func (st *Stmt) Offset(loc int32) int {
	if loc < 0 || st.Inexact {
		return st.Start
	}
	off := st.Base + int(loc)
	if off < st.Start || off > st.End {
		return st.Start
	}
	return off
}

// Run runs the pass's rule.
func (p *Pass) Run() { p.Rule.Check(p) }
