// Package traffic is analyze's analysis of captured traffic (the files the
// proxy's capture writes, package capture). It rebuilds each client
// session transaction by transaction, runs the SQL rules of the catalogue
// over each transaction as scan runs them over a BEGIN … COMMIT block,
// follows the session state the statements made (one effects.Session per
// session) into later transactions, and keeps a finding when that state
// crossed a transaction boundary. What only traffic shows (startup
// parameters, protocol-level prepared statements, idle transactions) it
// hands to the catalogue's traffic rules as events (rules.TrafficEvent),
// which judge them. Findings go into the same analyzer.Report as scan's.
package traffic

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// Options say how to analyze captured traffic.
type Options struct {
	// IdleThreshold is how long a client may leave a transaction open
	// and idle before idle-in-transaction reports it; 0 means
	// DefaultIdleThreshold.
	IdleThreshold time.Duration
	// Strict makes a corrupt line in the middle of a capture an error;
	// otherwise it is skipped, counted and reported as a warning.
	Strict bool
}

// DefaultIdleThreshold is the idle-in-transaction threshold when none is
// given.
const DefaultIdleThreshold = time.Second

// Analyze reads capture files and reports what the clients relied
// on across transaction boundaries.
//
// The files may come from several proxy instances (a fleet): they are
// grouped into captures, one per recording (capture_id and start; the parts
// of a rotated capture, given in any order, are one capture), and a
// session is identified by its capture and its session id, so sessions of
// two instances never mix even though every instance numbers its sessions
// from 1. A file that holds the same part of the same capture as another
// (a copy) is read once, with a warning. Captures are analyzed in parallel
// (Config.Workers at a time), each streamed line by line: memory grows
// with the live sessions of the captures being read, not with the file
// sizes. Each finding is reported once, with its counts summed over the
// captures, and the report does not depend on the order the captures were
// read in. The warnings say what the reader forgave (a last line cut by a
// crash, dropped events, a duplicate file).
func Analyze(c *analyzer.Config, paths []string, opt Options) (*analyzer.Report, []string, error) {
	if opt.IdleThreshold <= 0 {
		opt.IdleThreshold = DefaultIdleThreshold
	}
	caps, warns, err := groupCaptures(paths)
	if err != nil {
		return nil, nil, err
	}
	results := make([]*captureResult, len(caps))
	failed := analyzeParallel(c, opt, caps, results)
	total := newTrafficAnalysis(c, opt)
	files := 0
	for i, r := range results {
		if failed >= 0 && i > failed {
			break // not read, or read after the capture that failed: left out so that the warnings do not depend on timing
		}
		warns = append(warns, r.warns...)
		if r.err != nil {
			return nil, warns, r.err
		}
		total.merge(r)
		files += len(caps[i].files)
	}
	rep := &analyzer.Report{Tool: "pgpoolcheck", Target: c.JudgedTarget(), Findings: total.findings()}
	rep.Summary.Files = files
	rep.Summary.CaptureFiles = files
	rep.Summary.Captures = len(caps)
	instances := map[string]bool{}
	for _, cs := range caps {
		instances[cs.instance] = true
	}
	rep.Summary.Instances = len(instances)
	rep.Summary.Sessions = total.sessionsSeen
	rep.Summary.Statements = total.statements
	for i := range rep.Findings {
		if sev, ok := c.Severity[rep.Findings[i].Rule]; ok {
			rep.Findings[i].Severity = sev
			rep.Findings[i].Security = sev == rules.Critical
		}
	}
	rep.Findings = analyzer.Sort(rep.Findings)
	rep.Summary.Count(rep.Findings)
	return rep, warns, nil
}

// captureFile is one file of a capture.
type captureFile struct {
	path string
	h    capture.Header
}

// captureSet is one recording: the files of one capture, in part order.
type captureSet struct {
	key string // identifies the capture among the others; sessions are keyed by it
	// instance identifies the proxy instance that recorded it: captures
	// of a restarted recorder share it.
	instance string
	start    time.Time
	files    []captureFile
}

// groupCaptures reads the header of every file and groups the files into
// captures, ordered by start, capture id and first file. A capture is its
// capture_id together with its start (the parts of a capture share both);
// a file without a capture_id is a capture of its own.
func groupCaptures(paths []string) ([]*captureSet, []string, error) {
	var warns []string
	byKey := map[string]*captureSet{}
	var caps []*captureSet
	for _, p := range paths {
		f, err := capture.Open(p)
		if err != nil {
			return nil, nil, err
		}
		h := f.Header()
		f.Close()
		key, instance := "file:"+p, "file:"+p
		if h.ID != "" {
			key = h.ID + "@" + h.Start.UTC().Format(time.RFC3339Nano)
			instance = "id:" + h.InstanceID()
		}
		cs := byKey[key]
		if cs == nil {
			cs = &captureSet{key: key, instance: instance, start: h.Start}
			byKey[key] = cs
			caps = append(caps, cs)
		}
		cs.files = append(cs.files, captureFile{p, h})
	}
	for _, cs := range caps {
		slices.SortStableFunc(cs.files, func(a, b captureFile) int {
			return cmp.Or(cmp.Compare(a.h.Part, b.h.Part), cmp.Compare(a.path, b.path))
		})
		// The same part twice is the same file twice (a copy, or a
		// second name for it): its sessions must not be replayed.
		kept := cs.files[:1]
		for _, f := range cs.files[1:] {
			if last := kept[len(kept)-1]; f.h.Part == last.h.Part {
				warns = append(warns, fmt.Sprintf("%s: the same part (%d) of capture %s as %s; read once", f.path, f.h.Part, f.h.ID, last.path))
				continue
			}
			kept = append(kept, f)
		}
		cs.files = kept
	}
	slices.SortStableFunc(caps, func(a, b *captureSet) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.files[0].h.ID, b.files[0].h.ID), cmp.Compare(a.files[0].path, b.files[0].path))
	})
	return caps, warns, nil
}

// captureResult is what the analysis of one capture found.
type captureResult struct {
	groups       map[groupKey]*findingGroup
	order        []groupKey
	statements   int
	sessionsSeen int
	warns        []string
	err          error
}

// analyzeParallel analyzes the captures on Config.Workers goroutines, each
// capture on one of them (its parts in order), and fills results. After a
// failure, captures after the failed one are not started; it returns the
// index of the first capture that failed, or -1. Every capture before that
// one is analyzed in full, so the outcome does not depend on timing.
func analyzeParallel(c *analyzer.Config, opt Options, caps []*captureSet, results []*captureResult) int {
	var mu sync.Mutex
	failed := -1
	next := 0
	claim := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(caps) || (failed >= 0 && next > failed) {
			return -1
		}
		next++
		return next - 1
	}
	var wg sync.WaitGroup
	for range min(c.WorkerCount(), len(caps)) {
		wg.Go(func() {
			a := newTrafficAnalysis(c, opt) // one per worker: its parse cache serves every capture it reads
			for i := claim(); i >= 0; i = claim() {
				r := a.analyzeCapture(caps[i])
				results[i] = r
				if r.err != nil {
					mu.Lock()
					if failed < 0 || i < failed {
						failed = i
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// analyzeCapture reads the files of one capture in order and returns what
// they showed; the analysis is then ready for the next capture.
func (a *trafficAnalysis) analyzeCapture(cs *captureSet) *captureResult {
	r := &captureResult{}
	read := capture.ReadFilesSkippingCorrupt
	if a.opt.Strict {
		read = capture.ReadFiles
	}
	for _, f := range cs.files {
		w, err := read([]string{f.path}, func(h capture.Header, file string, ev *capture.Event) error {
			a.event(cs.key, h, file, ev)
			return nil
		})
		r.warns = append(r.warns, w...)
		if err != nil {
			r.err = err
			break
		}
	}
	a.finishAll()
	// Sessions never span captures: from here on a group only needs to
	// know how many it had.
	for _, g := range a.groups {
		g.nsess += len(g.sessions)
		g.sessions = nil
	}
	r.groups, r.order, r.statements, r.sessionsSeen = a.groups, a.order, a.statements, a.sessionsSeen
	a.groups, a.order, a.statements, a.sessionsSeen = map[groupKey]*findingGroup{}, nil, 0, 0
	return r
}

// merge adds the findings of one capture: counts add up (the captures'
// sessions are distinct), the first occurrence is the earliest of both.
func (a *trafficAnalysis) merge(r *captureResult) {
	a.statements += r.statements
	a.sessionsSeen += r.sessionsSeen
	for _, k := range r.order {
		from := r.groups[k]
		g := a.groups[k]
		if g == nil {
			a.groups[k] = from
			a.order = append(a.order, k)
			continue
		}
		if earlier(from.first, g.first) {
			g.first = from.first
		}
		g.count += from.count
		g.nsess += from.nsess
		for app := range from.apps {
			g.apps[app] = struct{}{}
		}
		if from.firstAt.Before(g.firstAt) {
			g.firstAt = from.firstAt
		}
		if from.lastAt.After(g.lastAt) {
			g.lastAt = from.lastAt
		}
		for text, n := range from.notes {
			if m := g.notes[text]; m == nil {
				g.notes[text] = n
			} else {
				m.n += n.n
				if earlierAt(n.at, n.file, n.line, m.at, m.file, m.line) {
					m.at, m.file, m.line = n.at, n.file, n.line
				}
			}
		}
		g.longest = max(g.longest, from.longest)
	}
}

// occurrence is one time a finding was observed.
type occurrence struct {
	rule     string
	sev      rules.Severity
	key      string // groups occurrences: the statement's fingerprint, or another key
	fp       string
	stmt     string
	msg, fix string
	note     string // what the traffic showed, counted per group
	file     string
	line     int
	session  sessKey
	app      string
	at       time.Time
	dur      time.Duration // idle-in-transaction: how long
}

type groupKey struct {
	rule string
	sev  rules.Severity
	key  string
}

type findingGroup struct {
	first occurrence
	count int
	// sessions are the sessions with an occurrence while the capture is
	// read; nsess counts them once it is over (and those of the captures
	// merged in).
	sessions map[sessKey]struct{}
	nsess    int
	apps     map[string]struct{}
	firstAt  time.Time
	lastAt   time.Time
	notes    map[string]*noteCount
	longest  time.Duration
}

// noteCount counts the occurrences of a group with one note (what the
// traffic showed) and remembers the first of them: notes are listed in
// the order they were first seen.
type noteCount struct {
	n    int
	at   time.Time
	file string
	line int
}

func (a *trafficAnalysis) add(o occurrence) {
	if !a.cfg.Enabled(o.rule) {
		return
	}
	k := groupKey{o.rule, o.sev, o.key}
	g := a.groups[k]
	if g == nil {
		g = &findingGroup{first: o, sessions: map[sessKey]struct{}{}, apps: map[string]struct{}{}, notes: map[string]*noteCount{}, firstAt: o.at, lastAt: o.at}
		a.groups[k] = g
		a.order = append(a.order, k)
	}
	if earlier(o, g.first) {
		g.first = o // the finding points at the first occurrence
	}
	g.count++
	g.sessions[o.session] = struct{}{}
	g.apps[o.app] = struct{}{}
	if o.at.Before(g.firstAt) {
		g.firstAt = o.at
	}
	if o.at.After(g.lastAt) {
		g.lastAt = o.at
	}
	if o.note != "" {
		n := g.notes[o.note]
		if n == nil {
			n = &noteCount{at: o.at, file: o.file, line: o.line}
			g.notes[o.note] = n
		} else if earlierAt(o.at, o.file, o.line, n.at, n.file, n.line) {
			n.at, n.file, n.line = o.at, o.file, o.line
		}
		n.n++
	}
	g.longest = max(g.longest, o.dur)
}

// earlier orders occurrences by time, then place, so that a group's first
// occurrence does not depend on the order sessions were settled in.
func earlier(a, b occurrence) bool {
	return earlierAt(a.at, a.file, a.line, b.at, b.file, b.line)
}

func earlierAt(at time.Time, file string, line int, bAt time.Time, bFile string, bLine int) bool {
	return cmp.Or(at.Compare(bAt), cmp.Compare(file, bFile), cmp.Compare(line, bLine)) < 0
}

// findings turns the groups into findings, one per group.
func (a *trafficAnalysis) findings() []analyzer.Finding {
	out := []analyzer.Finding{}
	for _, k := range a.order {
		g := a.groups[k]
		o := g.first
		msg := o.msg
		if g.longest > 0 {
			msg += fmt.Sprintf(" (longest %s)", g.longest.Round(time.Millisecond))
		}
		if len(g.notes) > 0 {
			seq := make([]string, 0, len(g.notes))
			for text := range g.notes {
				seq = append(seq, text)
			}
			slices.SortFunc(seq, func(x, y string) int {
				n, m := g.notes[x], g.notes[y]
				if earlierAt(n.at, n.file, n.line, m.at, m.file, m.line) {
					return -1
				}
				if earlierAt(m.at, m.file, m.line, n.at, n.file, n.line) {
					return 1
				}
				return cmp.Compare(x, y)
			})
			var parts []string
			for _, n := range seq {
				if g.count == 1 {
					parts = append(parts, n)
				} else {
					parts = append(parts, fmt.Sprintf("%s (%d of %d)", n, g.notes[n].n, g.count))
				}
			}
			msg += "; in the capture: " + strings.Join(parts, ", ")
		}
		apps := make([]string, 0, len(g.apps))
		for app := range g.apps {
			apps = append(apps, app)
		}
		slices.Sort(apps)
		f := analyzer.Finding{
			Rule:        o.rule,
			Severity:    o.sev,
			Security:    o.sev == rules.Critical,
			File:        o.file,
			Line:        o.line,
			Column:      1,
			Message:     msg,
			Fix:         o.fix,
			Statement:   analyzer.TruncateStatement(o.stmt),
			Fingerprint: o.fp,
			Traffic: &analyzer.TrafficStats{
				Count: g.count, Sessions: len(g.sessions) + g.nsess,
				FirstSeen: g.firstAt.UTC(), LastSeen: g.lastAt.UTC(),
				ApplicationNames: apps,
			},
		}
		out = append(out, f)
	}
	return out
}

// parsedStmt is one statement of a query string, with what does not
// change between its executions.
type parsedStmt struct {
	st    *sqlparse.Statement
	text  string
	fp    string
	facts *facts
}

// maxParsed bounds the cache of parsed query strings.
const maxParsed = 20000

// parse splits and parses a query string once; later calls with the same
// text return the cached result.
func (a *trafficAnalysis) parse(sql string) []*parsedStmt {
	if ps, ok := a.parsed[sql]; ok {
		return ps
	}
	src := []byte(sql)
	var out []*parsedStmt
	for _, ch := range sqlparse.Split(src).Chunks {
		for _, st := range sqlparse.ParseChunk(src, ch) {
			if st.Err != nil || st.Node == nil {
				continue
			}
			p := &parsedStmt{st: &st, text: strings.TrimSpace(string(src[st.Start:st.End]))}
			if fp, err := sqlparse.Fingerprint(p.text); err == nil {
				p.fp = fp
			}
			p.facts = statementFacts(rules.NewStmt(p.st, a.interesting))
			out = append(out, p)
		}
	}
	if len(a.parsed) >= maxParsed {
		clear(a.parsed)
	}
	a.parsed[sql] = out
	return out
}

// fingerprint returns the fingerprint of a whole query string ("" when it
// does not parse).
func (a *trafficAnalysis) fingerprint(sql string) string {
	ps := a.parse(sql)
	if len(ps) == 1 {
		return ps[0].fp
	}
	fp, err := sqlparse.Fingerprint(sql)
	if err != nil {
		return ""
	}
	return fp
}
