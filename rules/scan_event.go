package rules

// ScanEvent is something the scan ran into that is about the scan itself
// rather than about session state: a statement the parser rejects, an
// ignore directive, a file that is not UTF-8, a file written for another
// database. Package analyzer finds it and gives the facts; the scan rule
// whose event it is says whether it is a finding, and words it.
type ScanEvent struct {
	Kind ScanEventKind
	// Message is the parser's message (ParseFailure).
	Message string
	// Byte is the first byte that is not part of a UTF-8 character, at
	// byte Offset of the file (NotUTF8).
	Byte   byte
	Offset int
	// Directive is the ignore directive (Directive, DirectiveUse).
	Directive *IgnoreDirective
	// Dialect names the other database, Marker what shows it ("its path
	// names it", "AUTO_INCREMENT here"); Refused counts the statements
	// PostgreSQL refuses of the file's Statements, Findings the findings
	// of the file's other statements (ForeignFile).
	Dialect, Marker               string
	Refused, Statements, Findings int
}

// ScanEventKind says what the scan ran into.
type ScanEventKind int

// Kinds of scan events, each judged by one rule.
const (
	// ParseFailure: PostgreSQL's parser rejects a statement
	// (parse-error).
	ParseFailure ScanEventKind = iota
	// Directive: a comment is an ignore directive (bad-ignore).
	Directive
	// DirectiveUse: the file's findings were matched against a
	// well-formed ignore directive (unused-ignore).
	DirectiveUse
	// NotUTF8: a file is not UTF-8 text (invalid-encoding).
	NotUTF8
	// ForeignFile: a SQL file is written for another database
	// (other-dialect).
	ForeignFile
)

// IgnoreDirective is a "pgpoolcheck:ignore" or "pgpoolcheck:ignore-file"
// comment as the scan read it.
type IgnoreDirective struct {
	// File is set for ignore-file.
	File bool
	// Rules are the rule ids it names; Unknown those of them the
	// catalogue does not know.
	Rules, Unknown []string
	// Reason is what it says after the rule ids.
	Reason string
	// Source is the comment as written.
	Source string
	// Matched counts the findings it suppressed (DirectiveUse).
	Matched int
}

// ScanFinding is one problem a scan rule found in an event.
type ScanFinding struct {
	Rule     *Rule
	Severity Severity
	Message  string
	Fix      string
}

// ScanPass is one run of one scan rule over one event.
type ScanPass struct {
	Rule  *Rule
	Event *ScanEvent
	found []ScanFinding
}

// Report records a finding. An empty fix means the rule's default fix.
func (p *ScanPass) Report(sev Severity, msg, fix string) {
	if fix == "" {
		fix = p.Rule.Fix
	}
	p.found = append(p.found, ScanFinding{Rule: p.Rule, Severity: sev, Message: msg, Fix: fix})
}

// CheckScan runs r's scan check over ev and returns its findings: none
// when r has no scan check or ev is not a problem for it.
func (r *Rule) CheckScan(ev *ScanEvent) []ScanFinding {
	if r.Scan == nil {
		return nil
	}
	p := &ScanPass{Rule: r, Event: ev}
	r.Scan(p)
	return p.found
}
