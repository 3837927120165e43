// Package analyzer turns SQL sources into findings: it splits and parses
// them (through internal/sqlparse), follows transactions, runs the rules of
// the catalogue, applies ignore directives and maps byte offsets to lines
// and columns.
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

// Result is the outcome of analyzing one source.
type Result struct {
	Findings   []Finding
	Statements int
	Suppressed int
}

// window is how many statements are parsed before their rules run, which
// bounds the memory held in parse trees for very large files.
const window = 4096

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
	script := sqlparse.Split(src)
	lines := sqlparse.NewLineIndex(src)
	var checks []*rules.Rule
	for _, r := range c.rules() {
		if r.Check != nil {
			checks = append(checks, r)
		}
	}
	interesting := rules.InterestingFuncs(checks)
	fb := &findingBuilder{name: name, src: src, lines: lines}
	var res Result

	pass := rules.NewPass(nil, c.target(), nil, fb.add)
	runGroup := func(g *rules.Group) {
		pass.Group = g
		for _, r := range checks {
			pass.Rule = r
			pass.Run()
		}
	}
	tx := &txTracker{run: runGroup}

	// Windows are parsed ahead (one in flight) while the rules of the
	// previous one run, so the sequential part overlaps the parallel one.
	chunks := script.Chunks
	windows := make(chan []parsed, 1)
	go func() {
		defer close(windows)
		for lo := 0; lo < len(chunks); lo += window {
			windows <- c.parseChunks(src, chunks[lo:min(lo+window, len(chunks))], interesting)
		}
	}()
	for out := range windows {
		for _, p := range out {
			for i, st := range p.stmts {
				res.Statements++
				if st.Err != nil && c.enabled(rules.ParseError.ID) {
					fb.addParseError(st)
				}
				tx.add(st)
				if len(p.bodies[i]) > 0 {
					runGroup(&rules.Group{Stmts: p.bodies[i], Explicit: true, Body: p.bodies[i][0].Body})
				}
			}
		}
	}
	tx.flush()
	res.Findings = fb.findings
	res.Findings, res.Suppressed = applyDirectives(c, name, src, lines, script.Comments, res.Findings)
	return res
}

// parseChunks parses chunks, in parallel when there are many.
func (c *Config) parseChunks(src []byte, chunks []sqlparse.Chunk, interesting []string) []parsed {
	out := make([]parsed, len(chunks))
	one := func(i int) {
		stmts := sqlparse.ParseChunk(src, chunks[i])
		p := parsed{stmts: make([]*rules.Stmt, len(stmts)), bodies: make([][]*rules.Stmt, len(stmts))}
		for j := range stmts {
			p.stmts[j] = rules.NewStmt(&stmts[j], interesting)
			if isRoutine(stmts[j].Node) {
				for _, b := range sqlparse.Bodies(src, &stmts[j], bodyFilter) {
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

// txTracker groups statements into transactions: BEGIN/START TRANSACTION
// … COMMIT/END/ROLLBACK/ABORT/PREPARE TRANSACTION form one explicit group;
// every statement outside such a block is a group of its own.
type txTracker struct {
	cur *rules.Group
	run func(*rules.Group)
}

func (t *txTracker) add(st *rules.Stmt) {
	var ts *pg.TransactionStmt
	if st.Node != nil {
		ts = st.Node.GetTransactionStmt()
	}
	if t.cur == nil {
		if ts != nil && (ts.Kind == pg.TransactionStmtKind_TRANS_STMT_BEGIN || ts.Kind == pg.TransactionStmtKind_TRANS_STMT_START) {
			t.cur = &rules.Group{Stmts: []*rules.Stmt{st}, Explicit: true}
			return
		}
		t.run(&rules.Group{Stmts: []*rules.Stmt{st}})
		return
	}
	t.cur.Stmts = append(t.cur.Stmts, st)
	if ts == nil {
		return
	}
	switch ts.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK,
		pg.TransactionStmtKind_TRANS_STMT_PREPARE:
		t.flush()
		if ts.Chain {
			t.cur = &rules.Group{Explicit: true}
		}
	}
}

func (t *txTracker) flush() {
	if t.cur != nil && len(t.cur.Stmts) > 0 {
		t.run(t.cur)
	}
	t.cur = nil
}

// findingBuilder turns rule findings into located findings.
type findingBuilder struct {
	name     string
	src      []byte
	lines    *sqlparse.LineIndex
	findings []Finding
}

const maxStatementText = 1000

func (b *findingBuilder) statementText(st *sqlparse.Statement) string {
	text := st.Text
	if st.Body == "" && st.End <= len(b.src) && st.Start <= st.End {
		text = string(b.src[st.Start:st.End])
	}
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
	p := b.lines.Position(off)
	f.Line, f.Column = p.Line, p.Column
	end := st.End
	if end < off {
		end = off
	}
	e := b.lines.Position(end)
	f.EndLine, f.EndColumn = e.Line, e.Column
	f.SourceLine = b.lines.LineText(p.Line)
	f.stmtLine = b.lines.Position(st.Start).Line
}

func (b *findingBuilder) add(rf rules.Finding) {
	st := rf.Stmt.Statement
	f := Finding{
		Rule:      rf.Rule.ID,
		Severity:  rf.Severity,
		Security:  rf.Severity == rules.Critical,
		File:      b.name,
		Message:   rf.Message,
		Fix:       rf.Fix,
		Statement: b.statementText(st),
	}
	if fp, err := sqlparse.Fingerprint(st.Text); err == nil {
		f.Fingerprint = fp
	}
	b.locate(&f, rf.Offset, st)
	b.findings = append(b.findings, f)
}

func (b *findingBuilder) addParseError(st *rules.Stmt) {
	f := Finding{
		Rule:      rules.ParseError.ID,
		Severity:  rules.ParseError.Severity,
		File:      b.name,
		Message:   "statement does not parse: " + st.Err.Message,
		Fix:       rules.ParseError.Fix,
		Statement: b.statementText(st.Statement),
	}
	b.locate(&f, st.Err.Offset, st.Statement)
	b.findings = append(b.findings, f)
}
