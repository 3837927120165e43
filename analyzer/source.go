// Package analyzer is scan's analysis of a source tree: it turns SQL
// files, the SQL in application code and the connection settings of
// drivers and frameworks into findings. It splits and parses statements
// (through internal/sqlparse), follows transactions, runs the rules of the
// catalogue, applies ignore directives and maps byte offsets to lines and
// columns.
//
// It also declares what every analysis reports (Finding, Report, Summary)
// and how it is configured (Config): package analyzer/traffic, analyze's
// analysis of captured traffic, fills the same report.
package analyzer

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// Config says how to analyze SQL.
type Config struct {
	// Target is the pooler findings are judged against.
	Target rules.Target
	// Rules are the enabled rules; nil means every rule.
	Rules []*rules.Rule
	// Workers is the number of parser workers; 0 means GOMAXPROCS.
	Workers int
	// Severity overrides the severity of some rules' findings.
	Severity map[string]rules.Severity

	// testHelpers are the Rust functions of the scanned tree that hand
	// out a connection inside a test transaction (Stream finds them).
	testHelpers map[string]bool
	// calls is the routine table of a scan (calls.go); prepass is set
	// while it is built.
	calls   *routineTable
	prepass bool
	// called are the names called anywhere in the scan (pre-pass only).
	called map[string]bool
}

func (c *Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (c *Config) rules() []*rules.Rule {
	if c.Rules == nil {
		return rules.All()
	}
	return c.Rules
}

// checks returns the enabled rules that check statements.
func (c *Config) checks() []*rules.Rule {
	var checks []*rules.Rule
	for _, r := range c.rules() {
		if r.Check != nil {
			checks = append(checks, r)
		}
	}
	return checks
}

func (c *Config) enabled(id string) bool {
	for _, r := range c.rules() {
		if r.ID == id {
			return true
		}
	}
	return false
}

func (c *Config) target() rules.Target {
	if c.Target == "" {
		return rules.DefaultTarget
	}
	return c.Target
}

// JudgedTarget returns the pooler findings are judged against: Target, or
// rules.DefaultTarget when it is empty.
func (c *Config) JudgedTarget() rules.Target { return c.target() }

// EnabledRules returns the enabled rules: Rules, or every rule when it is
// nil.
func (c *Config) EnabledRules() []*rules.Rule { return c.rules() }

// Checks returns the enabled rules that check statements.
func (c *Config) Checks() []*rules.Rule { return c.checks() }

// Enabled reports whether the rule with the given id is enabled.
func (c *Config) Enabled(id string) bool { return c.enabled(id) }

// WorkerCount returns the number of workers: Workers, or GOMAXPROCS when
// it is 0.
func (c *Config) WorkerCount() int { return c.workers() }

// Result is the outcome of analyzing one source.
type Result struct {
	Findings   []Finding
	Statements int
	Suppressed int
	// defs are the routines the source creates (scan pre-pass only).
	defs []*routineDef
}

// window is how many statements are parsed before their rules run, which
// bounds the memory held in parse trees for very large files.
const window = 512

// parallelMin is the number of statements below which a source is parsed
// by one goroutine.
const parallelMin = 256

// parsed is one chunk's statements, with the statements of the routine
// bodies that follow each of them.
type parsed struct {
	stmts  []*rules.Stmt
	bodies [][]*rules.Stmt // bodies[i] belongs to stmts[i]
}

// AnalyzeSource analyzes one SQL text. name is the path reported in
// findings.
func (c *Config) AnalyzeSource(name string, src []byte) Result {
	lines := sqlparse.NewLineIndex(src)
	checks := c.checks()
	interesting := rules.InterestingFuncs(checks)
	fb := &findingBuilder{name: name, src: src, lines: lines, calls: c.calls, prepass: c.prepass}
	var res Result

	pass := rules.NewPass(nil, c.target(), nil, fb.add)
	runGroup := func(g *rules.Group) {
		if !g.Explicit && len(g.Stmts) == 1 && rules.Inert(g.Stmts[0]) {
			return
		}
		pass.Group = g
		for _, r := range checks {
			pass.Rule = r
			pass.Run()
		}
	}
	tx := &txTracker{run: runGroup}

	// Three stages overlap: splitting, parsing a window of statements on
	// the workers, and running the rules over the window before (which is
	// sequential: transactions span statements).
	var script *sqlparse.Script
	chunkWindows := make(chan []sqlparse.Chunk, 2)
	go func() {
		defer close(chunkWindows)
		var w []sqlparse.Chunk
		script = sqlparse.SplitFunc(src, func(ch sqlparse.Chunk) {
			w = append(w, ch)
			if len(w) == window {
				chunkWindows <- w
				w = nil
			}
		})
		if len(w) > 0 {
			chunkWindows <- w
		}
	}()
	windows := make(chan []parsed, 1)
	filter := c.bodyFilter()
	go func() {
		defer close(windows)
		for w := range chunkWindows {
			windows <- c.parseChunks(src, w, interesting, filter)
		}
	}()
	refused := 0 // statements PostgreSQL refuses: parse errors, SETs of unknown parameters
	for out := range windows {
		for _, p := range out {
			for i, st := range p.stmts {
				res.Statements++
				if st.Err != nil || st.Node != nil && otherDialect(st.Node) {
					refused++
				}
				if st.Err != nil && c.enabled(rules.ParseError.ID) {
					fb.addParseError(st)
				}
				tx.add(st)
				fb.callFindings(st, "")
				fb.body(fb.define(st), p.bodies[i], routineName(st), runGroup)
			}
		}
	}
	tx.flush()
	res.Findings = fb.findings
	f, foreign := pathDialect(name)
	if !foreign && refused > 0 {
		// A file with syntax of another database that PostgreSQL
		// refuses is that database's. A PostgreSQL file that merely
		// holds such a word parses, and is checked as usual.
		f, foreign = otherSQLDialect(src)
	}
	if foreign {
		// One note instead of its parse errors and of findings for
		// statements never sent to PostgreSQL, when other-dialect says
		// so (even when it is disabled: the findings go all the same).
		ev := &rules.ScanEvent{Kind: rules.ForeignFile, Dialect: f.dialect, Marker: f.what,
			Refused: refused, Statements: res.Statements, Findings: len(res.Findings)}
		if notes := rules.OtherDialect.CheckScan(ev); len(notes) > 0 {
			res.Findings = nil
			if c.enabled(rules.OtherDialect.ID) {
				res.Findings = []Finding{otherDialectFinding(name, lines, f.off, notes[0])}
			}
		}
	}
	res.Findings, res.Suppressed = applyDirectives(c, name, src, lines, sqlComments(src, script.Comments), res.Findings)
	if c.prepass {
		collectBodyFindings(res.Findings)
		res.defs = fb.defs
	}
	return res
}

// parseChunks parses chunks, in parallel when there are many.
func (c *Config) parseChunks(src []byte, chunks []sqlparse.Chunk, interesting []string, filter *sqlparse.Filter) []parsed {
	out := make([]parsed, len(chunks))
	one := func(i int) {
		stmts := sqlparse.ParseChunk(src, chunks[i])
		p := parsed{stmts: make([]*rules.Stmt, len(stmts)), bodies: make([][]*rules.Stmt, len(stmts))}
		for j := range stmts {
			p.stmts[j] = rules.NewStmt(&stmts[j], interesting)
			if isRoutine(stmts[j].Node) {
				for _, b := range sqlparse.Bodies(src, &stmts[j], filter) {
					p.bodies[j] = append(p.bodies[j], rules.NewStmt(&b, interesting))
				}
			}
		}
		out[i] = p
	}
	w := c.workers()
	if w <= 1 || len(chunks) < parallelMin {
		for i := range chunks {
			one(i)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	const batch = 16
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(batch)) - batch
				if lo >= len(chunks) {
					return
				}
				for i := lo; i < min(lo+batch, len(chunks)); i++ {
					one(i)
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// bodyFilter skips routine bodies and PL/pgSQL expressions that no rule
// can report.
var bodyFilter = &sqlparse.Filter{Relevant: rules.Relevant, NeedsContext: rules.NeedsContext}

func isRoutine(n *pg.Node) bool {
	return n != nil && (n.GetCreateFunctionStmt() != nil || n.GetDoStmt() != nil)
}

// txTracker groups statements into transactions. BEGIN/START
// TRANSACTION … COMMIT/END/ROLLBACK/ABORT/PREPARE TRANSACTION form one
// explicit group; every other statement is a group of its own, except in a
// file that has no BEGIN and ends a transaction anyway (a test file run
// inside a transaction that a harness or a psql \i of a setup file opened,
// ending in ROLLBACK): its statements up to that COMMIT or ROLLBACK are one
// explicit group. Autocommit statements therefore wait in pending (at most
// maxPending of them) until it is known which case applies.
type txTracker struct {
	cur      *rules.Group
	pending  []*rules.Stmt
	sawBegin bool
	run      func(*rules.Group)
}

// maxPending bounds the autocommit statements kept for a stray COMMIT or
// ROLLBACK; older ones are checked as autocommit statements.
const maxPending = 1000

func txKind(st *rules.Stmt) (begins, ends, chain bool) {
	if st.Node == nil {
		return false, false, false
	}
	ts := st.Node.GetTransactionStmt()
	if ts == nil {
		return false, false, false
	}
	switch ts.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		return true, false, false
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK,
		pg.TransactionStmtKind_TRANS_STMT_PREPARE:
		return false, true, ts.Chain
	}
	return false, false, false
}

func (t *txTracker) add(st *rules.Stmt) {
	begins, ends, chain := txKind(st)
	switch {
	case t.cur != nil:
		t.cur.Stmts = append(t.cur.Stmts, st)
		if ends {
			t.run(t.cur)
			t.cur = nil
		}
	case begins:
		t.flushPending()
		t.sawBegin = true
		t.cur = &rules.Group{Stmts: []*rules.Stmt{st}, Explicit: true}
		return
	case ends && !t.sawBegin:
		t.run(&rules.Group{Stmts: append(t.pending, st), Explicit: true})
		t.pending = nil
	case ends:
		t.flushPending()
		t.run(&rules.Group{Stmts: []*rules.Stmt{st}})
	default:
		if len(t.pending) == maxPending {
			t.run(&rules.Group{Stmts: []*rules.Stmt{t.pending[0]}})
			t.pending = t.pending[1:]
		}
		t.pending = append(t.pending, st)
		return
	}
	if ends && chain {
		t.cur = &rules.Group{Explicit: true}
	}
}

func (t *txTracker) flushPending() {
	for _, st := range t.pending {
		t.run(&rules.Group{Stmts: []*rules.Stmt{st}})
	}
	t.pending = nil
}

func (t *txTracker) flush() {
	t.flushPending()
	if t.cur != nil && len(t.cur.Stmts) > 0 {
		t.run(t.cur)
	}
	t.cur = nil
}

// runBody checks the statements of one routine body as one explicit
// group: a call runs inside its caller's transaction, and even a
// procedure that commits keeps its server connection for the whole CALL,
// so statements of one body see each other as one transaction does.
func runBody(stmts []*rules.Stmt, run func(*rules.Group)) {
	run(&rules.Group{Stmts: stmts, Explicit: true, Body: stmts[0].Body})
}

// findingBuilder turns rule findings into located findings.
type findingBuilder struct {
	name     string
	src      []byte
	lines    *sqlparse.LineIndex
	findings []Finding
	// code maps statements found in string literals of application code
	// to their literal; their offsets are in the literal's SQL text.
	code map[*sqlparse.Statement]*codeSQL
	// calls is the scan's routine table, for findings at calls.
	calls *routineTable
	// prepass collects the routines created (defs) and marks the findings
	// of their bodies (inDef is the routine whose body runs).
	prepass bool
	defs    []*routineDef
	inDef   *routineDef
}

const maxStatementText = 1000

func (b *findingBuilder) statementText(st *sqlparse.Statement) string {
	text := st.Text
	if cs := b.code[st]; cs != nil {
		text = cs.text(st)
	} else if st.Body == "" && st.End <= len(b.src) && st.Start <= st.End {
		text = string(b.src[st.Start:st.End])
	}
	return TruncateStatement(text)
}

// TruncateStatement trims a statement's text for a finding, cutting it
// (at a character boundary, with "…") when it is very long.
func TruncateStatement(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > maxStatementText {
		cut := maxStatementText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

func (b *findingBuilder) locate(f *Finding, off int, st *sqlparse.Statement) {
	start, end := st.Start, st.End
	if end < off {
		end = off
	}
	if cs := b.code[st]; cs != nil {
		off, start, end = cs.source(off), cs.source(start), cs.sourceEnd(end)
		f.literalLine = b.lines.Position(cs.lit.Start).Line
	}
	p := b.lines.Position(off)
	f.Line, f.Column = p.Line, p.Column
	e := b.lines.Position(end)
	f.EndLine, f.EndColumn = e.Line, e.Column
	f.SourceLine = b.lines.LineText(p.Line)
	f.stmtLine = b.lines.Position(start).Line
}

// HidePlaceholder shows the run-time parts of dynamic SQL in a finding's
// message or statement as "…".
func HidePlaceholder(s string) string {
	return strings.ReplaceAll(s, sqlparse.DynamicPlaceholder, "…")
}

func (b *findingBuilder) add(rf rules.Finding) {
	st := rf.Stmt.Statement
	f := Finding{
		Rule:      rf.Rule.ID,
		Severity:  rf.Severity,
		Security:  rf.Severity == rules.Critical,
		File:      b.name,
		Message:   HidePlaceholder(rf.Message),
		Fix:       rf.Fix,
		Statement: HidePlaceholder(b.statementText(st)),
		def:       b.inDef,
	}
	if fp, err := sqlparse.Fingerprint(st.Text); err == nil {
		f.Fingerprint = fp
	}
	b.locate(&f, rf.Offset, st)
	b.findings = append(b.findings, f)
}

// addParseError reports a statement the parser rejects, as parse-error
// words it.
func (b *findingBuilder) addParseError(st *rules.Stmt) {
	for _, sf := range rules.ParseError.CheckScan(&rules.ScanEvent{Kind: rules.ParseFailure, Message: st.Err.Message}) {
		f := Finding{
			Rule:      sf.Rule.ID,
			Severity:  sf.Severity,
			File:      b.name,
			Message:   sf.Message,
			Fix:       sf.Fix,
			Statement: b.statementText(st.Statement),
		}
		b.locate(&f, st.Err.Offset, st.Statement)
		b.findings = append(b.findings, f)
	}
}
