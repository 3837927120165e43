package analyzer

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// CaptureOptions say how to analyze captured traffic.
type CaptureOptions struct {
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

// TrafficStats is what analyze observed about one finding from captured
// traffic: a finding stands for every occurrence of the same rule,
// severity and statement (by fingerprint).
type TrafficStats struct {
	// Count is the number of occurrences.
	Count int `json:"count"`
	// Sessions is the number of client sessions with an occurrence.
	Sessions int `json:"sessions"`
	// FirstSeen and LastSeen are the wall-clock times of the first and
	// the last occurrence.
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	// ApplicationNames are the application_name values of the sessions,
	// sorted ("" when a client sent none).
	ApplicationNames []string `json:"application_names"`
}

// AnalyzeCaptures reads capture files and reports what the clients relied
// on across transaction boundaries. Files are ordered by capture and part
// (so the parts of a rotated capture may be given in any order) and
// streamed; memory grows with the live sessions, not with the file size.
// The warnings say what the reader forgave (a last line cut by a crash,
// dropped events).
func (c *Config) AnalyzeCaptures(paths []string, opt CaptureOptions) (*Report, []string, error) {
	if opt.IdleThreshold <= 0 {
		opt.IdleThreshold = DefaultIdleThreshold
	}
	type fileHead struct {
		path string
		h    capture.Header
	}
	var files []fileHead
	for _, p := range paths {
		f, err := capture.Open(p)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, fileHead{p, f.Header()})
		f.Close()
	}
	slices.SortStableFunc(files, func(a, b fileHead) int {
		return cmp.Or(a.h.Start.Compare(b.h.Start), cmp.Compare(a.h.ID, b.h.ID), cmp.Compare(a.h.Part, b.h.Part))
	})
	a := newTrafficAnalysis(c, opt)
	var warns []string
	lastID := ""
	for i, fh := range files {
		if i > 0 && fh.h.ID != lastID {
			a.finishAll() // the previous capture is over: so are its sessions
		}
		lastID = fh.h.ID
		read := capture.ReadFilesSkippingCorrupt
		if opt.Strict {
			read = capture.ReadFiles
		}
		w, err := read([]string{fh.path}, func(h capture.Header, file string, ev *capture.Event) error {
			a.event(h, file, ev)
			return nil
		})
		warns = append(warns, w...)
		if err != nil {
			return nil, warns, err
		}
	}
	a.finishAll()
	rep := &Report{Tool: "pgpoolcheck", Target: c.target(), Findings: a.findings()}
	rep.Summary.Files = len(files)
	rep.Summary.Statements = a.statements
	for i := range rep.Findings {
		if sev, ok := c.Severity[rep.Findings[i].Rule]; ok {
			rep.Findings[i].Severity = sev
			rep.Findings[i].Security = sev == rules.Critical
		}
	}
	rep.Findings = Sort(rep.Findings)
	rep.Summary.Count(rep.Findings)
	return rep, warns, nil
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
	first    occurrence
	count    int
	sessions map[sessKey]struct{}
	apps     map[string]struct{}
	firstAt  time.Time
	lastAt   time.Time
	notes    map[string]int
	noteSeq  []string
	longest  time.Duration
}

func (a *trafficAnalysis) add(o occurrence) {
	if !a.cfg.enabled(o.rule) {
		return
	}
	k := groupKey{o.rule, o.sev, o.key}
	g := a.groups[k]
	if g == nil {
		g = &findingGroup{first: o, sessions: map[sessKey]struct{}{}, apps: map[string]struct{}{}, notes: map[string]int{}, firstAt: o.at, lastAt: o.at}
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
		if g.notes[o.note] == 0 {
			g.noteSeq = append(g.noteSeq, o.note)
		}
		g.notes[o.note]++
	}
	g.longest = max(g.longest, o.dur)
}

// earlier orders occurrences by time, then place, so that a group's first
// occurrence does not depend on the order sessions were settled in.
func earlier(a, b occurrence) bool {
	return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line)) < 0
}

// findings turns the groups into findings, one per group.
func (a *trafficAnalysis) findings() []Finding {
	out := []Finding{}
	for _, k := range a.order {
		g := a.groups[k]
		o := g.first
		msg := o.msg
		if g.longest > 0 {
			msg += fmt.Sprintf(" (longest %s)", g.longest.Round(time.Millisecond))
		}
		if len(g.noteSeq) > 0 {
			var parts []string
			for _, n := range g.noteSeq {
				if g.count == 1 {
					parts = append(parts, n)
				} else {
					parts = append(parts, fmt.Sprintf("%s (%d of %d)", n, g.notes[n], g.count))
				}
			}
			msg += "; in the capture: " + strings.Join(parts, ", ")
		}
		apps := make([]string, 0, len(g.apps))
		for app := range g.apps {
			apps = append(apps, app)
		}
		slices.Sort(apps)
		f := Finding{
			Rule:        o.rule,
			Severity:    o.sev,
			Security:    o.sev == rules.Critical,
			File:        o.file,
			Line:        o.line,
			Column:      1,
			Message:     msg,
			Fix:         o.fix,
			Statement:   truncateStatement(o.stmt),
			Fingerprint: o.fp,
			Traffic: &TrafficStats{
				Count: g.count, Sessions: len(g.sessions),
				FirstSeen: g.firstAt.UTC(), LastSeen: g.lastAt.UTC(),
				ApplicationNames: apps,
			},
		}
		out = append(out, f)
	}
	return out
}

func truncateStatement(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxStatementText {
		return s
	}
	cut := maxStatementText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
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
