package rules

import "fmt"

// The rules in this file are about the scan itself. Each judges the scan
// events of one kind (scan_event.go).

// ParseError is a statement the PostgreSQL parser rejects.
var ParseError = &Rule{
	ID:       "parse-error",
	Title:    "statement does not parse",
	Severity: Info,
	Fix:      "fix the syntax, or exclude the file if it is not PostgreSQL",
	Kind:     ScanRule,
	Scan:     checkParseError,
}

func checkParseError(p *ScanPass) {
	if p.Event.Kind != ParseFailure {
		return
	}
	p.Report(p.Rule.Severity, "statement does not parse: "+p.Event.Message, "")
}

// BadIgnore is a malformed ignore directive.
var BadIgnore = &Rule{
	ID:       "bad-ignore",
	Title:    "ignore directive without a reason or with an unknown rule",
	Severity: Warning,
	Fix:      "write -- pgpoolcheck:ignore RULE[,RULE] reason, with rule ids from `pgpoolcheck rules`",
	Kind:     ScanRule,
	Scan:     checkBadIgnore,
}

// checkBadIgnore reports a directive that names a rule the catalogue does
// not know, names no rule (ignore without -file), or gives no reason. The
// scan uses only the directives it does not report.
func checkBadIgnore(p *ScanPass) {
	d := p.Event.Directive
	if p.Event.Kind != Directive || d == nil {
		return
	}
	var msg string
	switch {
	case len(d.Unknown) > 0:
		msg = fmt.Sprintf("ignore directive names unknown rule %q", d.Unknown[0])
	case !d.File && len(d.Rules) == 0:
		msg = "ignore directive names no rule: write -- pgpoolcheck:ignore RULE[,RULE] reason"
	case d.Reason == "":
		msg = "ignore directive has no reason: say why the finding is safe to ignore after the rule ids"
	default:
		return
	}
	p.Report(p.Rule.Severity, msg, "")
}

// UnusedIgnore is an ignore directive that suppressed nothing.
var UnusedIgnore = &Rule{
	ID:       "unused-ignore",
	Title:    "ignore directive matched no finding",
	Severity: Info,
	Fix:      "remove the directive",
	Kind:     ScanRule,
	Scan:     checkUnusedIgnore,
}

func checkUnusedIgnore(p *ScanPass) {
	d := p.Event.Directive
	if p.Event.Kind != DirectiveUse || d == nil || d.Matched > 0 {
		return
	}
	p.Report(p.Rule.Severity, "ignore directive matched no finding: "+d.Source, "")
}

// InvalidEncoding is a file that is not UTF-8 text, which the scan skips.
var InvalidEncoding = &Rule{
	ID:       "invalid-encoding",
	Title:    "file is not UTF-8 and was not scanned",
	Severity: Warning,
	Fix:      "convert the file to UTF-8 (for example iconv -f LATIN1 -t UTF-8), or exclude it in .pgpoolcheck.yaml",
	Kind:     ScanRule,
	Scan:     checkInvalidEncoding,
}

func checkInvalidEncoding(p *ScanPass) {
	ev := p.Event
	if ev.Kind != NotUTF8 {
		return
	}
	p.Report(p.Rule.Severity, fmt.Sprintf("the file is not UTF-8: byte 0x%02X at byte offset %d is not part of a UTF-8 character; the file was not scanned", ev.Byte, ev.Offset), "")
}

// OtherDialect is a SQL file written for another database.
var OtherDialect = &Rule{
	ID:       "other-dialect",
	Title:    "SQL file written for another database",
	Severity: Info,
	Fix:      "nothing to do if the file is not run against PostgreSQL; exclude it in .pgpoolcheck.yaml to drop this note",
	Kind:     ScanRule,
	Scan:     checkOtherDialect,
}

// checkOtherDialect reports a file of another database that had something
// to report: statements PostgreSQL refuses, or findings. The note stands
// for them all: the scan drops the file's other findings when the rule
// reports it, and a file of another database with nothing to report gets
// no note.
func checkOtherDialect(p *ScanPass) {
	ev := p.Event
	if ev.Kind != ForeignFile || ev.Refused == 0 && ev.Findings == 0 {
		return
	}
	msg := fmt.Sprintf("the file is written for %s (%s), not PostgreSQL", ev.Dialect, ev.Marker)
	if ev.Refused > 0 {
		msg += fmt.Sprintf(": PostgreSQL refuses %d of its %d statements", ev.Refused, ev.Statements)
	}
	p.Report(p.Rule.Severity, msg+"; it was not checked", "")
}
