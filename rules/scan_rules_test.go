package rules_test

import (
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestScanChecks checks each scan rule over the events it judges and over
// the events of the others, which it leaves alone.
func TestScanChecks(t *testing.T) {
	unknown := &rules.IgnoreDirective{Rules: []string{"listen", "nosuch"}, Unknown: []string{"nosuch"}, Reason: "why"}
	tests := []struct {
		rule *rules.Rule
		ev   rules.ScanEvent
		want string // "" for no finding
	}{
		{rules.ParseError, rules.ScanEvent{Kind: rules.ParseFailure, Message: `syntax error at or near "SELEC"`}, `statement does not parse: syntax error at or near "SELEC"`},
		{rules.BadIgnore, rules.ScanEvent{Kind: rules.Directive, Directive: unknown}, `ignore directive names unknown rule "nosuch"`},
		{rules.BadIgnore, rules.ScanEvent{Kind: rules.Directive, Directive: &rules.IgnoreDirective{Reason: "why"}}, "ignore directive names no rule: write -- pgpoolcheck:ignore RULE[,RULE] reason"},
		{rules.BadIgnore, rules.ScanEvent{Kind: rules.Directive, Directive: &rules.IgnoreDirective{File: true, Reason: "generated"}}, ""},
		{rules.BadIgnore, rules.ScanEvent{Kind: rules.Directive, Directive: &rules.IgnoreDirective{Rules: []string{"listen"}}}, "ignore directive has no reason: say why the finding is safe to ignore after the rule ids"},
		{rules.BadIgnore, rules.ScanEvent{Kind: rules.DirectiveUse, Directive: unknown}, ""},
		{rules.UnusedIgnore, rules.ScanEvent{Kind: rules.DirectiveUse, Directive: &rules.IgnoreDirective{Source: "-- pgpoolcheck:ignore listen ok"}}, "ignore directive matched no finding: -- pgpoolcheck:ignore listen ok"},
		{rules.UnusedIgnore, rules.ScanEvent{Kind: rules.DirectiveUse, Directive: &rules.IgnoreDirective{Matched: 2}}, ""},
		{rules.UnusedIgnore, rules.ScanEvent{Kind: rules.Directive, Directive: &rules.IgnoreDirective{}}, ""},
		{rules.InvalidEncoding, rules.ScanEvent{Kind: rules.NotUTF8, Byte: 0xE9, Offset: 16}, "the file is not UTF-8: byte 0xE9 at byte offset 16 is not part of a UTF-8 character; the file was not scanned"},
		{rules.OtherDialect, rules.ScanEvent{Kind: rules.ForeignFile, Dialect: "MySQL", Marker: "its path names it", Refused: 2, Statements: 3}, "the file is written for MySQL (its path names it), not PostgreSQL: PostgreSQL refuses 2 of its 3 statements; it was not checked"},
		{rules.OtherDialect, rules.ScanEvent{Kind: rules.ForeignFile, Dialect: "MySQL", Marker: "its path names it", Findings: 1}, "the file is written for MySQL (its path names it), not PostgreSQL; it was not checked"},
		{rules.OtherDialect, rules.ScanEvent{Kind: rules.ForeignFile, Dialect: "MySQL", Marker: "its path names it"}, ""},
		{rules.OtherDialect, rules.ScanEvent{Kind: rules.ParseFailure, Message: "x"}, ""},
	}
	for _, tt := range tests {
		fs := tt.rule.CheckScan(&tt.ev)
		switch {
		case tt.want == "" && len(fs) > 0:
			t.Errorf("%s over %+v: %+v, want nothing", tt.rule.ID, tt.ev, fs)
		case tt.want == "":
		case len(fs) != 1 || fs[0].Message != tt.want || fs[0].Rule != tt.rule || fs[0].Severity != tt.rule.Severity || fs[0].Fix != tt.rule.Fix:
			t.Errorf("%s over %+v: %+v, want %q", tt.rule.ID, tt.ev, fs, tt.want)
		}
	}
	for _, r := range rules.All() {
		if r.Kind != rules.ScanRule && len(r.CheckScan(&rules.ScanEvent{Kind: rules.ParseFailure})) > 0 {
			t.Errorf("%s rule %s reports a scan event", r.Kind, r.ID)
		}
	}
}
