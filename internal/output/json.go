package output

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

// JSONVersion is the version of the json format. It changes only when a
// change could break a reader: a field removed, renamed or given another
// type or meaning. New fields do not change it. docs/json-format.md
// describes the format.
const JSONVersion = 1

// jsonReport is the top-level object of the json format.
type jsonReport struct {
	Version     int    `json:"version"`
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	Target      string `json:"target"`
	// Verdict is present for gate only.
	Verdict  *jsonVerdict  `json:"verdict,omitempty"`
	Findings []jsonFinding `json:"findings"`
	Summary  jsonSummary   `json:"summary"`
}

// jsonVerdict is gate's verdict.
type jsonVerdict struct {
	Ready       bool   `json:"ready"`
	Message     string `json:"message"`
	Blocking    int    `json:"blocking"`
	NotBlocking int    `json:"not_blocking"`
	FailOn      string `json:"fail_on"`
}

// jsonFinding is one finding of the json format.
type jsonFinding struct {
	Rule        string `json:"rule"`
	Severity    string `json:"severity"`
	Security    bool   `json:"security"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	Column      int    `json:"column"`
	EndLine     int    `json:"end_line"`
	EndColumn   int    `json:"end_column"`
	Message     string `json:"message"`
	Fix         string `json:"fix"`
	Statement   string `json:"statement"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Traffic is set for findings from captured traffic (analyze, gate).
	Traffic *jsonTraffic `json:"traffic,omitempty"`
	// Related is set for findings at calls of routines defined in the
	// scanned files.
	Related []jsonRelated `json:"related,omitempty"`
}

// jsonRelated is another place a finding refers to.
type jsonRelated struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// jsonTraffic is what analyze observed about a finding from traffic.
type jsonTraffic struct {
	Occurrences      int      `json:"occurrences"`
	Sessions         int      `json:"sessions"`
	FirstSeen        string   `json:"first_seen"`
	LastSeen         string   `json:"last_seen"`
	ApplicationNames []string `json:"application_names"`
}

// jsonSummary is the summary of the json format.
type jsonSummary struct {
	Files      int `json:"files"`
	Statements int `json:"statements"`
	// Instances, Captures, CaptureFiles and Sessions describe the captured traffic
	// (analyze, gate --capture); 0 for a scan.
	Instances    int            `json:"instances"`
	Captures     int            `json:"captures"`
	CaptureFiles int            `json:"capture_files"`
	Sessions     int            `json:"sessions"`
	Findings     int            `json:"findings"`
	BySeverity   map[string]int `json:"by_severity"`
	ByRule       map[string]int `json:"by_rule"`
	Suppressed   int            `json:"suppressed"`
	Skipped      []jsonSkipped  `json:"skipped"`
	Baselined    int            `json:"baselined"`
	// StaleBaseline lists baseline entries that matched nothing.
	StaleBaseline []analyzer.BaselineEntry `json:"stale_baseline"`
}

// jsonSkipped is an input that was not scanned.
type jsonSkipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
	// Unreadable is true for an input that could not be read.
	Unreadable bool `json:"unreadable,omitempty"`
}

// writeJSON renders the json format: one object, indented by two spaces,
// with a trailing newline. Lists are [] rather than null when empty, and
// by_severity always has all four severities.
func writeJSON(buf *bytes.Buffer, rep *analyzer.Report, _ Options) error {
	return writeJSONSummary(buf, rep, summary(rep))
}

// writeJSONSummary is writeJSON with the summary s, its counts already
// made (a stream's findings are no longer in rep).
func writeJSONSummary(buf *bytes.Buffer, rep *analyzer.Report, s analyzer.Summary) error {
	out := jsonReport{
		Version:     JSONVersion,
		Tool:        rep.Tool,
		ToolVersion: rep.Version,
		Target:      string(rep.Target),
		Findings:    make([]jsonFinding, 0, len(rep.Findings)),
		Summary: jsonSummary{
			Files:         s.Files,
			Statements:    s.Statements,
			Instances:     s.Instances,
			Captures:      s.Captures,
			CaptureFiles:  s.CaptureFiles,
			Sessions:      s.Sessions,
			Findings:      s.Findings,
			BySeverity:    map[string]int{},
			ByRule:        s.ByRule,
			Suppressed:    s.Suppressed,
			Skipped:       make([]jsonSkipped, 0, len(s.Skipped)),
			Baselined:     s.Baselined,
			StaleBaseline: append([]analyzer.BaselineEntry{}, s.StaleBaseline...),
		},
	}
	if v := rep.Verdict; v != nil {
		out.Verdict = &jsonVerdict{Ready: v.Ready, Message: v.Message, Blocking: v.Blocking, NotBlocking: v.NotBlocking, FailOn: v.FailOn}
	}
	for _, f := range rep.Findings {
		out.Findings = append(out.Findings, jsonFindingOf(f))
	}
	for _, sev := range severities {
		out.Summary.BySeverity[sev.String()] = s.BySeverity[sev.String()]
	}
	for _, sk := range s.Skipped {
		out.Summary.Skipped = append(out.Summary.Skipped, jsonSkipped(sk))
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// jsonFindingOf converts a finding to the json format.
func jsonFindingOf(f analyzer.Finding) jsonFinding {
	var traffic *jsonTraffic
	if t := f.Traffic; t != nil {
		traffic = &jsonTraffic{
			Occurrences:      t.Count,
			Sessions:         t.Sessions,
			FirstSeen:        t.FirstSeen.UTC().Format(time.RFC3339Nano),
			LastSeen:         t.LastSeen.UTC().Format(time.RFC3339Nano),
			ApplicationNames: append([]string{}, t.ApplicationNames...),
		}
	}
	var related []jsonRelated
	for _, r := range f.Related {
		related = append(related, jsonRelated{File: r.File, Line: r.Line, Column: r.Column, Message: r.Message})
	}
	return jsonFinding{
		Related:     related,
		Rule:        f.Rule,
		Severity:    f.Severity.String(),
		Security:    f.Security,
		File:        f.File,
		Line:        f.Line,
		Column:      f.Column,
		EndLine:     f.EndLine,
		EndColumn:   f.EndColumn,
		Message:     f.Message,
		Fix:         f.Fix,
		Statement:   f.Statement,
		Fingerprint: f.Fingerprint,
		Traffic:     traffic,
	}
}
