package analyzer

import (
	"cmp"
	"slices"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// Finding is one problem at one place, ready for output.
type Finding struct {
	Rule     string         `json:"rule"`
	Severity rules.Severity `json:"severity"`
	Security bool           `json:"security,omitempty"`
	File     string         `json:"file"`
	// Line and Column are 1-based; columns count characters. EndLine and
	// EndColumn end the statement (EndColumn is one past its last
	// character).
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	Message   string `json:"message"`
	Fix       string `json:"fix,omitempty"`
	// Statement is the statement's text (truncated when very long).
	Statement string `json:"statement,omitempty"`
	// Fingerprint is pg_query's fingerprint of the statement, empty for
	// statements that do not parse.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Traffic is set for findings from captured traffic (analyze): one
	// finding then stands for every occurrence of the same rule, severity
	// and statement.
	Traffic *TrafficStats `json:"traffic,omitempty"`
	// Related lists other places the finding refers to: for a call of a
	// routine defined in the scanned tree, the routine's definition (and
	// those of the routines its body calls, when the finding comes from
	// one of them).
	Related []Related `json:"related,omitempty"`
	// SourceLine is the text of Line, for renderers that show it.
	SourceLine string `json:"-"`
	// stmtLine is the line where the finding's statement starts; ignore
	// directives above a statement cover all of its findings.
	stmtLine int
	// literalLine is the line where the string literal holding the
	// statement starts (application code only).
	literalLine int
	// def is the routine whose body the finding is in (scan pre-pass
	// only).
	def *routineDef
}

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

// Sort orders findings by file, line, column, rule and message, and drops
// exact duplicates.
func Sort(fs []Finding) []Finding {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.CompactFunc(fs, func(a, b Finding) bool {
		return a.File == b.File && a.Line == b.Line && a.Column == b.Column && a.Rule == b.Rule && a.Message == b.Message
	})
}

// Summary counts findings.
type Summary struct {
	Files      int `json:"files"`
	Statements int `json:"statements"`
	// Instances, Captures, CaptureFiles and Sessions describe the
	// captured traffic analyzed: the proxy instances that recorded it (a
	// recorder restarted onto its capture file is still one), the
	// captures (one per recording; the parts of a rotated capture count
	// once), the capture files among Files and the client sessions in
	// them. All zero for a scan.
	Instances    int            `json:"instances"`
	Captures     int            `json:"captures"`
	CaptureFiles int            `json:"capture_files"`
	Sessions     int            `json:"sessions"`
	Findings     int            `json:"findings"`
	BySeverity   map[string]int `json:"by_severity"`
	ByRule       map[string]int `json:"by_rule"`
	// Skipped lists inputs that were not scanned, with the reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Suppressed counts findings hidden by ignore directives.
	Suppressed int `json:"suppressed"`
	// Baselined counts findings hidden by a baseline; StaleBaseline lists
	// baseline entries that matched no finding.
	Baselined     int             `json:"baselined"`
	StaleBaseline []BaselineEntry `json:"stale_baseline,omitempty"`
}

// BaselineEntry is one finding recorded in a baseline file.
type BaselineEntry struct {
	Rule        string `json:"rule"`
	File        string `json:"file"`
	Fingerprint string `json:"fingerprint"`
	// Occurrence numbers findings with the same rule, file and
	// fingerprint, from 1.
	Occurrence int `json:"occurrence"`
}

// Skipped is an input that was not scanned.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
	// Unreadable says the input could not be read (a file, or a directory
	// a walk could not list): the scan is incomplete.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Unreadable returns the skipped inputs that could not be read.
func (s Summary) Unreadable() []Skipped {
	var out []Skipped
	for _, sk := range s.Skipped {
		if sk.Unreadable {
			out = append(out, sk)
		}
	}
	return out
}

// Count fills the counts of s from fs.
func (s *Summary) Count(fs []Finding) {
	s.Findings = len(fs)
	s.BySeverity = map[string]int{}
	s.ByRule = map[string]int{}
	for _, f := range fs {
		s.BySeverity[f.Severity.String()]++
		s.ByRule[f.Rule]++
	}
}

// Report is the result of one scan or analysis, what every output format
// renders.
type Report struct {
	// Tool is "pgpoolcheck"; Version its version.
	Tool    string `json:"tool"`
	Version string `json:"version"`
	// Target is the pooler the findings were judged against.
	Target   rules.Target `json:"target"`
	Findings []Finding    `json:"findings"`
	Summary  Summary      `json:"summary"`
	// Verdict is gate's verdict; nil for scan and analyze.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Verdict is gate's answer: ready for transaction pooling or not.
type Verdict struct {
	// Ready is true when no finding blocks.
	Ready bool `json:"ready"`
	// Message is the verdict line gate prints, e.g. "NOT READY: 2
	// blocking findings".
	Message string `json:"message"`
	// Blocking counts the findings at or above FailOn that no baseline
	// hides; NotBlocking the findings below FailOn (not listed).
	Blocking    int `json:"blocking"`
	NotBlocking int `json:"not_blocking"`
	// FailOn is the severity at or above which a finding blocks, or
	// "never".
	FailOn string `json:"fail_on"`
}
