package analyzer

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// A scan follows calls of the routines defined in the scanned tree: before
// the files are analyzed one by one, a pre-pass collects the names called
// anywhere (lexically, routineNames), then parses the statements that
// create a function or procedure of such a name and keeps, per routine
// name, the last definition in path order (a later CREATE OR REPLACE
// replaces an earlier one) with the findings of its body and the user
// routines its body calls. A script that creates a routine more than once
// keeps each definition: a call in that script resolves to the last
// definition before it, the one in force when the call runs.
// A statement that calls such a routine then gets, at the call, one
// finding per finding of the routine's body (and of the routines that body
// calls, up to maxCallDepth routines deep), with the definitions as
// related locations.
//
// Routines are matched by name: a call's schema, when given, must match
// the definition's, when given; argument types (overloads) are not
// compared, and two routines of the same name in different schemas count
// as one, the later definition winning.

// Related is another place a finding refers to, such as the definition of
// the routine a statement calls.
type Related struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// maxCallDepth is how many routines deep calls are followed from a call:
// the routine called, the routines its body calls, and theirs.
const maxCallDepth = 3

// routineDef is one routine definition found by the pre-pass.
type routineDef struct {
	name, schema string // lower-case; schema empty when unqualified
	display      string // as written: schema.name or name
	at           Related
	findings     []bodyFinding
	calls        []effects.UserCall
}

// bodyFinding is a finding of the rules inside a routine's body.
type bodyFinding struct {
	rule     string
	severity rules.Severity
	message  string
	fix      string
}

// callEffect is what calling a routine reports: the message goes after
// "calls NAME(), whose body ".
type callEffect struct {
	rule     string
	severity rules.Severity
	message  string
	fix      string
	related  []Related
}

// routineTable holds the routines whose calls have findings.
type routineTable struct {
	defs    map[string]*routineDef // by name
	effects map[*routineDef][]callEffect
	// redefined holds, per file and name, the definitions of a routine
	// that one file creates more than once, in file order: a call in that
	// file resolves to the one before it.
	redefined map[string]map[string][]*routineDef
	// redefinedCalled names the redefined routines one of whose
	// definitions has effects.
	redefinedCalled map[string]bool
}

// mentionsRoutineKeyword reports whether src holds "function" or
// "procedure" in any case: a quick test before the pre-pass splits a file.
func mentionsRoutineKeyword(src []byte) bool {
	for i := 0; i+8 <= len(src); i++ {
		switch src[i] | 0x20 {
		case 'f':
			if asciiFoldEq(src[i:], "function") {
				return true
			}
		case 'p':
			if i+9 <= len(src) && asciiFoldEq(src[i:], "procedure") {
				return true
			}
		}
	}
	return false
}

// asciiFoldEq reports whether b starts with the lower-case word w, in any
// case.
func asciiFoldEq(b []byte, w string) bool {
	for k := 0; k < len(w); k++ {
		if b[k]|0x20 != w[k] {
			return false
		}
	}
	return true
}

// createRoutineRE finds the application-code files the pre-pass parses.
var createRoutineRE = regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?(?:function|procedure)\b`)

// routines runs the pre-pass over the inputs, in path order (order holds
// their indexes sorted by name). It returns nil when no routine of the
// scanned files has findings.
func (c *Config) routines(inputs []Input, order []int) *routineTable {
	pre := *c
	pre.prepass = true
	pre.calls = nil
	var candidates []int
	pre.called, candidates = c.routineNames(inputs, order)
	if len(candidates) == 0 {
		return nil
	}
	order = candidates
	// As in Stream: the workers read ahead a few files; the definitions
	// are folded into the table in path order as they arrive, so only the
	// table (one definition per name) stays in memory.
	type job struct {
		input int
		done  chan []*routineDef
	}
	workers := c.workers()
	pending := make(chan job, workers*aheadPerWorker)
	work := make(chan job)
	go func() {
		defer close(pending)
		defer close(work)
		for _, i := range order {
			j := job{input: i, done: make(chan []*routineDef, 1)}
			pending <- j
			work <- j
		}
	}()
	for range workers {
		go func() {
			for j := range work {
				j.done <- pre.inputRoutines(inputs[j.input])
			}
		}()
	}
	t := &routineTable{defs: map[string]*routineDef{}, effects: map[*routineDef][]callEffect{}, redefined: map[string]map[string][]*routineDef{}}
	for j := range pending {
		defs := <-j.done
		count := map[string]int{}
		for _, d := range defs {
			count[d.name]++
		}
		for _, d := range defs {
			if count[d.name] > 1 {
				byName := t.redefined[d.at.File]
				if byName == nil {
					byName = map[string][]*routineDef{}
					t.redefined[d.at.File] = byName
				}
				byName[d.name] = append(byName[d.name], d)
			}
			if len(d.findings) == 0 && len(d.calls) == 0 {
				delete(t.defs, d.name)
				continue
			}
			t.defs[d.name] = d
		}
	}
	for _, d := range t.defs {
		if es := t.resolve(d, 1, nil); len(es) > 0 {
			t.effects[d] = es
		}
	}
	for _, byName := range t.redefined {
		for _, defs := range byName {
			for _, d := range defs {
				if _, done := t.effects[d]; !done {
					if es := t.resolve(d, 1, nil); len(es) > 0 {
						t.effects[d] = es
					}
				}
				if t.effects[d] != nil {
					if t.redefinedCalled == nil {
						t.redefinedCalled = map[string]bool{}
					}
					t.redefinedCalled[d.name] = true
				}
			}
		}
	}
	if len(t.effects) == 0 {
		return nil
	}
	return t
}

// routineNames is the first, lexical step of the pre-pass: it returns
// the names (lower-case, without schema) that appear as calls anywhere in
// the inputs (an identifier followed by "(", not after FUNCTION or
// PROCEDURE), and, in path order, the inputs that create a routine of one
// of those names. Only those are parsed: a routine nobody calls reports
// nothing. Strings and comments are not told apart, so a name may count
// as called when it is not, which only costs a parse.
func (c *Config) routineNames(inputs []Input, order []int) (map[string]bool, []int) {
	workers := c.workers()
	defines := make([][]string, len(order))
	sets := make([]map[string]bool, workers)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range workers {
		sets[w] = map[string]bool{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			called := sets[w]
			for k := range next {
				in := inputs[order[k]]
				data := in.Data
				if data == nil {
					if in.Err != nil {
						continue // the main pass reports it
					}
					b, err := os.ReadFile(in.Name)
					if err != nil {
						continue // the main pass reports it
					}
					data = b
				}
				if _, ok := extract.ConfigFormatFor(in.Name); ok && !IsSQLFile(in.Name) {
					continue
				}
				mayDefine := mentionsRoutineKeyword(data)
				callNames(data, func(name []byte, def bool) {
					switch {
					case def && mayDefine:
						defines[k] = append(defines[k], string(name))
					case !def && !called[string(name)]:
						called[string(name)] = true
					}
				})
			}
		}()
	}
	for k := range order {
		next <- k
	}
	close(next)
	wg.Wait()
	called := sets[0]
	for _, s := range sets[1:] {
		for n := range s {
			called[n] = true
		}
	}
	var candidates []int
	for k, names := range defines {
		if slices.ContainsFunc(names, func(n string) bool { return called[n] }) {
			candidates = append(candidates, order[k])
		}
	}
	return called, candidates
}

// callNames calls fn for each identifier in src that is followed by "("
// (quotes and white space between allowed), folded to lower case (ASCII),
// with def set when it follows FUNCTION or PROCEDURE (and a schema
// qualification): a routine created, altered, dropped or granted, not
// called. name is only valid during the call.
func callNames(src []byte, fn func(name []byte, def bool)) {
	var buf [64]byte
	afterKw := false
	for i := 0; i < len(src); {
		b := src[i]
		switch {
		case identStart(b):
			j := i
			for j < len(src) && (identStart(src[j]) || src[j] >= '0' && src[j] <= '9' || src[j] == '$') {
				j++
			}
			k := j
			if k < len(src) && src[k] == '"' {
				k++
			}
			for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
				k++
			}
			n := j - i
			if n > len(buf) {
				afterKw = false
				i = j
				continue
			}
			for x := range n {
				c := src[i+x]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf[x] = c
			}
			name := buf[:n]
			if k < len(src) && src[k] == '(' {
				fn(name, afterKw)
			}
			if k >= len(src) || src[k] != '.' {
				afterKw = string(name) == "function" || string(name) == "procedure"
			}
			i = j
		case b == '"' || b == '.' || b == ' ' || b == '\t' || b == '\n' || b == '\r':
			i++
		default:
			afterKw = false
			i++
		}
	}
}

// definedName returns the lower-case name of the routine that a CREATE
// statement starting with head creates, or "".
func definedName(head []byte) string {
	name := ""
	callNames(head, func(n []byte, def bool) {
		if def && name == "" {
			name = string(n)
		}
	})
	return name
}

// inputRoutines returns the routine definitions of one input, in file
// order, when its text creates a function or procedure.
func (c *Config) inputRoutines(in Input) []*routineDef {
	data := in.Data
	if data == nil {
		if in.Err != nil {
			return nil // the main pass reports it
		}
		b, err := os.ReadFile(in.Name)
		if err != nil {
			return nil // the main pass reports it
		}
		data = b
	}
	if !mentionsRoutineKeyword(data) {
		return nil
	}
	if why, _ := notText(data); why != "" {
		return nil
	}
	var res Result
	if lang, ok := extract.LanguageFor(in.Name); ok && !IsSQLFile(in.Name) {
		if !createRoutineRE.Match(data) {
			return nil
		}
		r, err := c.AnalyzeCode(in.Name, data, lang)
		if err != nil {
			return nil
		}
		res = r
	} else if _, ok := extract.ConfigFormatFor(in.Name); ok && !IsSQLFile(in.Name) {
		return nil
	} else {
		return c.sourceRoutines(in.Name, data)
	}
	return res.defs
}

// createChunkRE matches the start of a statement that creates a routine.
var createChunkRE = regexp.MustCompile(`(?i)^create\s+(?:or\s+replace\s+)?(?:function|procedure)\b`)

// sourceRoutines is the pre-pass over one SQL text: only the statements
// that create a routine are parsed, and only their bodies are checked.
func (c *Config) sourceRoutines(name string, src []byte) []*routineDef {
	checks := c.checks()
	interesting := rules.InterestingFuncs(checks)
	lines := sqlparse.NewLineIndex(src)
	fb := &findingBuilder{name: name, src: src, lines: lines, prepass: true}
	pass := rules.NewPass(nil, c.target(), nil, fb.add)
	runGroup := func(g *rules.Group) {
		pass.Group = g
		for _, r := range checks {
			pass.Rule = r
			pass.Run()
		}
	}
	script := sqlparse.SplitFunc(src, func(ch sqlparse.Chunk) {
		if !createChunkRE.Match(src[ch.Start:min(ch.End, ch.Start+64)]) {
			return
		}
		if c.called != nil && !c.called[definedName(src[ch.Start:min(ch.End, ch.Start+512)])] {
			return // nobody calls it
		}
		stmts := sqlparse.ParseChunk(src, ch)
		for i := range stmts {
			st := rules.NewStmt(&stmts[i], interesting)
			def := fb.define(st)
			if def == nil {
				continue
			}
			var body []*rules.Stmt
			for _, b := range sqlparse.Bodies(src, &stmts[i], prepassFilter) {
				body = append(body, rules.NewStmt(&b, interesting))
			}
			fb.body(def, body, def.name, runGroup)
		}
	})
	fs, _ := applyDirectives(c, name, src, lines, sqlComments(src, script.Comments), fb.findings)
	collectBodyFindings(fs)
	return fb.defs
}

// find returns the definition a call resolves to, or nil.
func (t *routineTable) find(name, schema string) *routineDef {
	d := t.defs[name]
	if d == nil || schema != "" && d.schema != "" && schema != d.schema {
		return nil
	}
	return d
}

// resolve lists what a call of d reports; depth counts the routines from
// the call to d, stack the routines on the way (cycles are not followed).
func (t *routineTable) resolve(d *routineDef, depth int, stack []*routineDef) []callEffect {
	var out []callEffect
	for _, f := range d.findings {
		out = append(out, callEffect{rule: f.rule, severity: f.severity, message: "does this: " + f.message, fix: f.fix})
	}
	if depth >= maxCallDepth {
		return out
	}
	stack = append(stack, d)
	for _, c := range d.calls {
		callee := t.find(c.Name, c.Schema)
		if callee == nil || slices.Contains(stack, callee) {
			continue
		}
		at := callee.at
		at.Message = callee.display + "() defined here"
		for _, e := range t.resolve(callee, depth+1, stack) {
			out = append(out, callEffect{
				rule: e.rule, severity: e.severity, fix: e.fix,
				message: "calls " + callee.display + "(), whose body " + e.message,
				related: append([]Related{at}, e.related...),
			})
		}
	}
	return out
}

// mentions reports whether text holds an identifier that names a routine
// of the table (compared case-insensitively, ASCII only: routine names are
// folded to lower case as PostgreSQL folds unquoted names).
func (t *routineTable) mentions(text string) bool {
	var buf [64]byte
	for i := 0; i < len(text); {
		if !identStart(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && (identStart(text[j]) || text[j] >= '0' && text[j] <= '9' || text[j] == '$') {
			j++
		}
		if n := j - i; n <= len(buf) {
			for k := range n {
				b := text[i+k]
				if b >= 'A' && b <= 'Z' {
					b += 'a' - 'A'
				}
				buf[k] = b
			}
			if d := t.defs[string(buf[:n])]; d != nil && t.effects[d] != nil || t.redefinedCalled[string(buf[:n])] {
				return true
			}
		}
		i = j
	}
	return false
}

func identStart(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b >= 0x80
}

// bodyFilter returns the filter for routine bodies: with a routine table,
// statements naming one of its routines matter too.
func (c *Config) bodyFilter() *sqlparse.Filter {
	switch {
	case c.prepass:
		return prepassFilter
	case c.calls != nil:
		t := c.calls
		return &sqlparse.Filter{
			Relevant:     func(lower string) bool { return rules.Relevant(lower) || t.mentions(lower) },
			NeedsContext: rules.NeedsContext,
		}
	}
	return bodyFilter
}

// prepassFilter keeps the body statements that a rule may report and
// those that may call a user routine (whose calls are followed).
var prepassFilter = &sqlparse.Filter{
	Relevant:     func(lower string) bool { return rules.Relevant(lower) || mayCallRoutine(lower) },
	NeedsContext: rules.NeedsContext,
}

// mayCallRoutine reports whether lower-case text holds an identifier
// followed by "(" that is not the name of a built-in function: a possible
// call of a user routine (or a keyword such as IN or VALUES, which only
// costs a parse).
func mayCallRoutine(lower string) bool {
	for i := 0; i < len(lower); {
		if !identStart(lower[i]) {
			i++
			continue
		}
		j := i
		for j < len(lower) && (identStart(lower[j]) || lower[j] >= '0' && lower[j] <= '9' || lower[j] == '$') {
			j++
		}
		k := j
		for k < len(lower) && (lower[k] == ' ' || lower[k] == '\t' || lower[k] == '\n' || lower[k] == '\r') {
			k++
		}
		if k < len(lower) && lower[k] == '(' && !effects.Builtin(lower[i:j]) && !notCallWords[lower[i:j]] {
			return true
		}
		i = j
	}
	return false
}

// notCallWords are keywords often followed by "(".
var notCallWords = map[string]bool{
	"in": true, "values": true, "exists": true, "and": true, "or": true, "not": true, "if": true,
	"coalesce": true, "nullif": true, "greatest": true, "least": true, "cast": true, "row": true,
	"any": true, "all": true, "some": true, "array": true, "using": true, "as": true, "on": true,
	"into": true, "from": true, "where": true, "select": true, "when": true, "then": true, "else": true,
	"return": true, "returns": true, "table": true, "over": true, "filter": true, "within": true,
	"numeric": true, "decimal": true, "varchar": true, "char": true, "character": true, "interval": true,
	"timestamp": true, "time": true, "float": true, "bit": true, "varying": true, "extract": true,
	"position": true, "substring": true, "overlay": true, "trim": true, "grouping": true, "lateral": true,
}

// define records the routine that st creates (pre-pass only) and returns
// it, or nil.
func (b *findingBuilder) define(st *rules.Stmt) *routineDef {
	if !b.prepass || st.Node == nil {
		return nil
	}
	cf := st.Node.GetCreateFunctionStmt()
	if cf == nil || len(cf.Funcname) == 0 {
		return nil
	}
	var parts []string
	for _, n := range cf.Funcname {
		parts = append(parts, n.GetString_().GetSval())
	}
	d := &routineDef{name: strings.ToLower(parts[len(parts)-1]), display: strings.Join(parts, ".")}
	if len(parts) > 1 {
		d.schema = strings.ToLower(parts[len(parts)-2])
	}
	var f Finding
	b.locate(&f, st.Start, st.Statement)
	d.at = Related{File: b.name, Line: f.Line, Column: f.Column, Message: "defined here"}
	b.defs = append(b.defs, d)
	return d
}

// body runs the rules over a routine body (findings made then belong to
// def), then looks for calls in it. self names the routine whose body it
// is ("" for a DO block): its calls of itself are not reported.
func (b *findingBuilder) body(def *routineDef, stmts []*rules.Stmt, self string, run func(*rules.Group)) {
	if len(stmts) > 0 {
		b.inDef = def
		runBody(stmts, run)
		b.inDef = nil
	}
	for _, st := range stmts {
		if def != nil && st.Node != nil {
			for _, c := range effects.UserCalls(st.Node) {
				if c.Name != def.name && !slices.ContainsFunc(def.calls, func(o effects.UserCall) bool { return o.Name == c.Name && o.Schema == c.Schema }) {
					def.calls = append(def.calls, c)
				}
			}
		}
		b.callFindings(st, self)
	}
}

// routineName returns the lower-case name of the routine st creates, or "".
func routineName(st *rules.Stmt) string {
	if st.Node == nil {
		return ""
	}
	if cf := st.Node.GetCreateFunctionStmt(); cf != nil && len(cf.Funcname) > 0 {
		return strings.ToLower(cf.Funcname[len(cf.Funcname)-1].GetString_().GetSval())
	}
	return ""
}

// callFindings reports the calls in st of routines of the table, except
// calls of self.
func (b *findingBuilder) callFindings(st *rules.Stmt, self string) {
	t := b.calls
	if t == nil || st.Node == nil || !t.mentions(st.Text) {
		return
	}
	for _, c := range effects.UserCalls(st.Node) {
		if c.Name == self {
			continue
		}
		d := t.find(c.Name, c.Schema)
		if defs := t.redefined[b.name][c.Name]; len(defs) > 0 {
			// The script creates the routine more than once: the
			// definition in force at the call is the last one before it.
			var at Finding
			b.locate(&at, st.Offset(c.Location), st.Statement)
			for _, e := range defs {
				if e.at.Line < at.Line || e.at.Line == at.Line && e.at.Column < at.Column {
					d = e
				}
			}
		}
		if d == nil {
			continue
		}
		where := ""
		switch {
		case st.Body == "DO block":
			where = " (in a DO block)"
		case st.Body != "":
			where = " (in the body of " + st.Body + bodySuffix
		}
		for _, e := range t.effects[d] {
			f := Finding{
				Rule:      e.rule,
				Severity:  e.severity,
				Security:  e.severity == rules.Critical,
				File:      b.name,
				Message:   "calls " + d.display + "(), whose body " + e.message + where,
				Fix:       e.fix,
				Statement: HidePlaceholder(b.statementText(st.Statement)),
				Related:   append([]Related{d.at}, e.related...),
			}
			if fp, err := sqlparse.Fingerprint(st.Text); err == nil {
				f.Fingerprint = fp
			}
			b.locate(&f, st.Offset(c.Location), st.Statement)
			b.findings = append(b.findings, f)
		}
	}
}

// bodySuffix ends the message of a finding in a routine body (rules.Pass):
// at a call, the routine is named at the start instead.
const bodySuffix = ", run when it is called)"

// collectBodyFindings gives each routine of the pre-pass the findings of
// its body that survived the file's ignore directives.
func collectBodyFindings(fs []Finding) {
	for _, f := range fs {
		if d := f.def; d != nil {
			msg := f.Message
			if strings.HasSuffix(msg, bodySuffix) {
				if i := strings.LastIndex(msg, " (in the body of "); i >= 0 {
					msg = msg[:i]
				}
			}
			d.findings = append(d.findings, bodyFinding{rule: f.Rule, severity: f.Severity, message: msg, fix: f.Fix})
		}
	}
}
