package analyzer

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// directive is one "pgpoolcheck:ignore" or "pgpoolcheck:ignore-file"
// comment: what it says (rules.IgnoreDirective, which bad-ignore and
// unused-ignore judge) and where.
type directive struct {
	rules.IgnoreDirective
	// line is the line the directive covers: its own line when code stands
	// before it there, otherwise the line after it.
	line int
	pos  sqlparse.Position
}

const directivePrefix = "pgpoolcheck:ignore"

// parseDirective reads the text of a comment. It returns ok=false for
// comments that are not directives; whether a directive is well formed is
// bad-ignore's to say.
func parseDirective(text string) (d directive, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, directivePrefix) {
		return d, false
	}
	rest := text[len(directivePrefix):]
	switch {
	case strings.HasPrefix(rest, "-file"):
		d.File = true
		rest = rest[len("-file"):]
	case rest == "" || rest[0] == ' ' || rest[0] == '\t':
	default:
		return d, false
	}
	fields := strings.Fields(rest)
	if len(fields) > 0 && (!d.File || looksLikeRuleList(fields[0])) {
		for _, id := range strings.Split(fields[0], ",") {
			if id == "" {
				continue
			}
			d.Rules = append(d.Rules, id)
			if rules.Lookup(id) == nil {
				d.Unknown = append(d.Unknown, id)
			}
		}
		fields = fields[1:]
	}
	d.Reason = strings.Join(fields, " ")
	return d, true
}

// looksLikeRuleList tells a rule list from the first word of a reason in
// "ignore-file [RULE,…] reason".
func looksLikeRuleList(w string) bool {
	if rules.Lookup(strings.Split(w, ",")[0]) != nil {
		return true
	}
	if !strings.ContainsAny(w, "-,") {
		return false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == ',') {
			return false
		}
	}
	return true
}

// comment is a comment of any language: its source range and its text
// without the markers.
type comment struct {
	Start, End int
	Text       string
}

// sqlComments converts the splitter's comments.
func sqlComments(src []byte, cs []sqlparse.Comment) []comment {
	out := make([]comment, len(cs))
	for i, c := range cs {
		out[i] = comment{c.Start, c.End, commentText(src, c)}
	}
	return out
}

// commentText strips the comment markers.
func commentText(src []byte, c sqlparse.Comment) string {
	t := string(src[c.Start:c.End])
	if c.Line {
		return strings.TrimPrefix(t, "--")
	}
	t = strings.TrimPrefix(t, "/*")
	return strings.TrimSuffix(t, "*/")
}

// applyDirectives removes findings covered by ignore directives and adds
// bad-ignore and unused-ignore findings. It returns the findings and how
// many were suppressed. A directive that bad-ignore reports suppresses
// nothing, whether the rule is enabled or not.
func applyDirectives(c *Config, name string, src []byte, lines *sqlparse.LineIndex, comments []comment, fs []Finding) ([]Finding, int) {
	var ds []*directive
	var extra []Finding
	for _, cm := range comments {
		d, ok := parseDirective(cm.Text)
		if !ok {
			continue
		}
		start := lines.Position(cm.Start)
		d.pos = start
		d.Source = strings.TrimSpace(string(src[cm.Start:cm.End]))
		if bad := rules.BadIgnore.CheckScan(&rules.ScanEvent{Kind: rules.Directive, Directive: &d.IgnoreDirective}); len(bad) > 0 {
			if c.enabled(rules.BadIgnore.ID) {
				extra = append(extra, directiveFindings(name, lines, d, bad)...)
			}
			continue
		}
		ls := lines.LineStart(start.Line)
		if strings.TrimSpace(string(src[ls:cm.Start])) != "" {
			d.line = start.Line
		} else {
			d.line = lines.Position(cm.End).Line + 1
		}
		ds = append(ds, &d)
	}
	if len(ds) == 0 {
		return append(fs, extra...), 0
	}
	kept := fs[:0]
	suppressed := 0
	for _, f := range fs {
		if d := matchDirective(ds, f); d != nil {
			d.Matched++
			suppressed++
			continue
		}
		kept = append(kept, f)
	}
	if c.enabled(rules.UnusedIgnore.ID) {
		for _, d := range ds {
			unused := rules.UnusedIgnore.CheckScan(&rules.ScanEvent{Kind: rules.DirectiveUse, Directive: &d.IgnoreDirective})
			extra = append(extra, directiveFindings(name, lines, *d, unused)...)
		}
	}
	return append(kept, extra...), suppressed
}

func matchDirective(ds []*directive, f Finding) *directive {
	for _, d := range ds {
		if !d.File && f.Line != d.line && f.stmtLine != d.line && f.literalLine != d.line {
			continue
		}
		if len(d.Rules) == 0 {
			return d
		}
		for _, id := range d.Rules {
			if id == f.Rule {
				return d
			}
		}
	}
	return nil
}

// directiveFindings place the findings a scan rule made of a directive on
// the directive.
func directiveFindings(name string, lines *sqlparse.LineIndex, d directive, sfs []rules.ScanFinding) []Finding {
	var fs []Finding
	for _, sf := range sfs {
		fs = append(fs, Finding{
			Rule: sf.Rule.ID, Severity: sf.Severity, File: name,
			Line: d.pos.Line, Column: d.pos.Column, EndLine: d.pos.Line, EndColumn: d.pos.Column + len([]rune(d.Source)),
			Message: sf.Message, Fix: sf.Fix, SourceLine: lines.LineText(d.pos.Line), stmtLine: d.pos.Line,
		})
	}
	return fs
}
