package output

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// SARIF constants.
const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	// sarifFingerprint names the partial fingerprint: rule, file and the
	// pg_query fingerprint of the statement, stable across line moves.
	sarifFingerprint = "pgpoolcheck/v1"
	// sarifSrcRoot is the base of relative artifact URIs: the directory
	// the scan ran from.
	sarifSrcRoot   = "%SRCROOT%"
	informationURI = "https://github.com/pgpoolcheck/pgpoolcheck"
)

// The SARIF 2.1.0 objects pgpoolcheck writes, a small subset of the
// standard (https://docs.oasis-open.org/sarif/sarif/v2.1.0/).
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool     `json:"tool"`
		Results    []sarifResult `json:"results"`
		ColumnKind string        `json:"columnKind"`
		// Invocations is set when inputs could not be read: the run is
		// incomplete, and a notification names each of them.
		Invocations []sarifInvocation `json:"invocations,omitempty"`
		// Properties is set when captured traffic was analyzed.
		Properties *sarifRunProperties `json:"properties,omitempty"`
	}
	sarifInvocation struct {
		ExecutionSuccessful        bool                `json:"executionSuccessful"`
		ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
	// sarifRunProperties say what captured traffic a run covered.
	sarifRunProperties struct {
		Instances    int `json:"instances"`
		Captures     int `json:"captures"`
		CaptureFiles int `json:"captureFiles"`
		Sessions     int `json:"sessions"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string              `json:"id"`
		Name                 string              `json:"name"`
		ShortDescription     sarifText           `json:"shortDescription"`
		FullDescription      sarifText           `json:"fullDescription"`
		Help                 sarifText           `json:"help"`
		DefaultConfiguration sarifConfiguration  `json:"defaultConfiguration"`
		Properties           sarifRuleProperties `json:"properties"`
	}
	sarifText struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	sarifConfiguration struct {
		Level string `json:"level"`
	}
	sarifRuleProperties struct {
		Tags      []string `json:"tags,omitempty"`
		Precision string   `json:"precision"`
	}
	sarifResult struct {
		RuleID string `json:"ruleId"`
		// RuleIndex is a pointer because index 0 is meaningful.
		RuleIndex           *int                  `json:"ruleIndex,omitempty"`
		Level               string                `json:"level"`
		Message             sarifText             `json:"message"`
		Locations           []sarifLocation       `json:"locations,omitempty"`
		RelatedLocations    []sarifLocation       `json:"relatedLocations,omitempty"`
		PartialFingerprints map[string]string     `json:"partialFingerprints,omitempty"`
		Properties          sarifResultProperties `json:"properties"`
	}
	sarifResultProperties struct {
		Severity string `json:"severity"`
		// The traffic fields are set for findings from captured traffic.
		Occurrences      int      `json:"occurrences,omitempty"`
		Sessions         int      `json:"sessions,omitempty"`
		FirstSeen        string   `json:"firstSeen,omitempty"`
		LastSeen         string   `json:"lastSeen,omitempty"`
		ApplicationNames []string `json:"applicationNames,omitempty"`
	}
	sarifLocation struct {
		// ID and Message are set for related locations.
		ID               *int                  `json:"id,omitempty"`
		PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
		Message          *sarifText            `json:"message,omitempty"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
		Region           *sarifRegion          `json:"region,omitempty"`
	}
	sarifArtifactLocation struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	sarifRegion struct {
		StartLine   int        `json:"startLine"`
		StartColumn int        `json:"startColumn,omitempty"`
		EndLine     int        `json:"endLine,omitempty"`
		EndColumn   int        `json:"endColumn,omitempty"`
		Snippet     *sarifText `json:"snippet,omitempty"`
	}
)

// writeSARIF renders a SARIF 2.1.0 log with one run. The driver lists every
// rule of the catalogue, in catalogue order, so ruleIndex is a rule's
// position in rules.All() (see catalogue). Columns count Unicode code points.
func writeSARIF(buf *bytes.Buffer, rep *analyzer.Report, _ Options) error {
	name := rep.Tool
	if name == "" {
		name = "pgpoolcheck"
	}
	driver := sarifDriver{
		Name:           name,
		Version:        rep.Version,
		InformationURI: informationURI,
		Rules:          []sarifRule{},
	}
	index := sarifRuleIndex()
	for _, r := range catalogue() {
		driver.Rules = append(driver.Rules, sarifRuleOf(r))
	}
	results := make([]sarifResult, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		results = append(results, sarifResultOf(f, index))
	}
	run := sarifRun{
		Tool:       sarifTool{Driver: driver},
		Results:    results,
		ColumnKind: "unicodeCodePoints",
	}
	if bad := rep.Summary.Unreadable(); len(bad) > 0 {
		inv := sarifInvocation{ExecutionSuccessful: false}
		for _, sk := range bad {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
				Level:     "error",
				Message:   sarifText{Text: sk.File + ": " + sk.Reason + "; it was not scanned"},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysical(analyzer.Finding{File: sk.File})}},
			})
		}
		run.Invocations = []sarifInvocation{inv}
	}
	if s := rep.Summary; s.Captures > 0 {
		run.Properties = &sarifRunProperties{Instances: s.Instances, Captures: s.Captures, CaptureFiles: s.CaptureFiles, Sessions: s.Sessions}
	}
	log := sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs:    []sarifRun{run},
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// sarifRuleIndex maps each rule id to its position in the driver's rules.
func sarifRuleIndex() map[string]int {
	index := map[string]int{}
	for i, r := range catalogue() {
		index[r.ID] = i
	}
	return index
}

// sarifResultOf converts a finding to a SARIF result; index is
// sarifRuleIndex().
func sarifResultOf(f analyzer.Finding, index map[string]int) sarifResult {
	res := sarifResult{
		RuleID:     f.Rule,
		Level:      sarifLevel(f.Severity),
		Message:    sarifText{Text: messageWithFix(f.Message, f.Fix, " Fix: ")},
		Properties: sarifResultProperties{Severity: f.Severity.String()},
	}
	if i, ok := index[f.Rule]; ok {
		res.RuleIndex = &i
	}
	if t := f.Traffic; t != nil {
		res.Properties.Occurrences, res.Properties.Sessions = t.Count, t.Sessions
		res.Properties.FirstSeen = t.FirstSeen.Format(time.RFC3339Nano)
		res.Properties.LastSeen = t.LastSeen.Format(time.RFC3339Nano)
		res.Properties.ApplicationNames = t.ApplicationNames
	}
	if f.File != "" {
		res.Locations = []sarifLocation{{PhysicalLocation: sarifPhysical(f)}}
	}
	for i, r := range f.Related {
		id := i
		res.RelatedLocations = append(res.RelatedLocations, sarifLocation{
			ID:               &id,
			PhysicalLocation: sarifPhysical(analyzer.Finding{File: r.File, Line: r.Line, Column: r.Column}),
			Message:          &sarifText{Text: r.Message},
		})
	}
	if f.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{sarifFingerprint: f.Fingerprint}
	}
	return res
}

// sarifRuleOf describes a rule for the SARIF driver.
func sarifRuleOf(r ruleInfo) sarifRule {
	doc := r.Doc
	help := sarifText{Text: doc, Markdown: doc}
	if doc == "" {
		help = sarifText{Text: messageWithFix(r.Title, r.Fix, " Fix: ")}
	}
	props := sarifRuleProperties{Precision: "high"}
	if r.Security {
		props.Tags = []string{"security"}
	}
	return sarifRule{
		ID:                   r.ID,
		Name:                 camelCase(r.ID),
		ShortDescription:     sarifText{Text: r.Title},
		FullDescription:      sarifText{Text: firstParagraph(doc, r.Title)},
		Help:                 help,
		DefaultConfiguration: sarifConfiguration{Level: sarifLevel(r.Severity)},
		Properties:           props,
	}
}

// sarifLevel maps a severity to a SARIF level: critical and error are
// "error", warning is "warning", info is "note". A severity that is not set
// (rules whose severity depends on the target) is "warning", SARIF's
// default.
func sarifLevel(s rules.Severity) string {
	switch s {
	case rules.Critical, rules.Error:
		return "error"
	case rules.Info:
		return "note"
	}
	return "warning"
}

// sarifPhysical locates a finding. A relative path stays relative, against
// %SRCROOT%; an absolute path becomes a file: URI.
func sarifPhysical(f analyzer.Finding) sarifPhysicalLocation {
	var loc sarifPhysicalLocation
	p := filepath.ToSlash(f.File)
	switch {
	case isWindowsAbs(p):
		loc.ArtifactLocation.URI = (&url.URL{Scheme: "file", Path: "/" + p}).String()
	case strings.HasPrefix(p, "/"):
		loc.ArtifactLocation.URI = (&url.URL{Scheme: "file", Path: p}).String()
	default:
		loc.ArtifactLocation.URI = relativeURI(p)
		loc.ArtifactLocation.URIBaseID = sarifSrcRoot
	}
	if f.Line > 0 {
		r := &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
		if f.EndLine >= f.Line {
			r.EndLine, r.EndColumn = f.EndLine, f.EndColumn
		}
		if f.Statement != "" {
			r.Snippet = &sarifText{Text: f.Statement}
		}
		loc.Region = r
	}
	return loc
}

// isWindowsAbs reports whether a slash-separated path starts with a drive
// letter, as in C:/src/a.sql.
func isWindowsAbs(p string) bool {
	return len(p) >= 3 && p[1] == ':' && p[2] == '/' &&
		('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}

// relativeURI percent-encodes a relative slash-separated path as a
// relative URI reference, keeping the slashes. A first segment with a colon
// gets "./" so it is not read as a scheme.
func relativeURI(p string) string {
	u := (&url.URL{Path: p}).EscapedPath()
	first, _, _ := strings.Cut(u, "/")
	if strings.Contains(first, ":") {
		u = "./" + u
	}
	return u
}

// camelCase turns a kebab-case rule id into a CamelCase name:
// "session-set" becomes "SessionSet".
func camelCase(id string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// firstParagraph returns the first paragraph of prose of a Markdown
// document, its lines joined by spaces: headings, code blocks, lists,
// quotes and tables are skipped. It returns fallback when there is none.
func firstParagraph(doc, fallback string) string {
	var para []string
	fence := false
	for _, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			if len(para) > 0 {
				break
			}
			continue
		}
		if fence {
			continue
		}
		if t == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		if len(para) == 0 && !isProse(t) {
			continue
		}
		para = append(para, t)
	}
	if len(para) == 0 {
		return fallback
	}
	return strings.Join(para, " ")
}

// isProse reports whether a trimmed Markdown line can start a paragraph of
// prose.
func isProse(t string) bool {
	for _, p := range []string{"#", "- ", "* ", "+ ", ">", "|", "<!--", "---", "==="} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

// messageWithFix joins a message and its fix with sep, ending the message
// with a period first when it has no final punctuation. An empty fix leaves
// the message as it is.
func messageWithFix(msg, fix, sep string) string {
	if fix == "" {
		return msg
	}
	if msg != "" && !strings.ContainsAny(msg[len(msg)-1:], ".!?:") {
		msg += "."
	}
	return msg + sep + fix
}
