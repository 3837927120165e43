package analyzer

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// directive is one "pgpoolcheck:ignore" or "pgpoolcheck:ignore-file"
// comment.
type directive struct {
	file bool
	// line is the line the directive covers: its own line when code stands
	// before it there, otherwise the line after it.
	line   int
	rules  []string // empty for ignore-file without rules: everything
	pos    sqlparse.Position
	used   bool
	source string
}

const directivePrefix = "pgpoolcheck:ignore"

// parseDirective reads the text of a comment. It returns ok=false for
// comments that are not directives, and a problem for malformed ones.
func parseDirective(text string) (d directive, ok bool, problem string) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, directivePrefix) {
		return d, false, ""
	}
	rest := text[len(directivePrefix):]
	switch {
	case strings.HasPrefix(rest, "-file"):
		d.file = true
		rest = rest[len("-file"):]
	case rest == "" || rest[0] == ' ' || rest[0] == '\t':
	default:
		return d, false, ""
	}
	fields := strings.Fields(rest)
	if len(fields) > 0 && (!d.file || looksLikeRuleList(fields[0])) {
		for _, id := range strings.Split(fields[0], ",") {
			if id == "" {
				continue
			}
			if rules.Lookup(id) == nil {
				return d, true, fmt.Sprintf("ignore directive names unknown rule %q", id)
			}
			d.rules = append(d.rules, id)
		}
		fields = fields[1:]
	}
	if !d.file && len(d.rules) == 0 {
		return d, true, "ignore directive names no rule: write -- pgpoolcheck:ignore RULE[,RULE] reason"
	}
	if len(fields) == 0 {
		return d, true, "ignore directive has no reason: say why the finding is safe to ignore after the rule ids"
	}
	return d, true, ""
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
// many were suppressed.
func applyDirectives(c *Config, name string, src []byte, lines *sqlparse.LineIndex, comments []comment, fs []Finding) ([]Finding, int) {
	var ds []*directive
	var extra []Finding
	for _, cm := range comments {
		d, ok, problem := parseDirective(cm.Text)
		if !ok {
			continue
		}
		start := lines.Position(cm.Start)
		d.pos = start
		d.source = strings.TrimSpace(string(src[cm.Start:cm.End]))
		if problem != "" {
			if c.enabled(rules.BadIgnore.ID) {
				extra = append(extra, directiveFinding(name, lines, rules.BadIgnore, d, problem))
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
			d.used = true
			suppressed++
			continue
		}
		kept = append(kept, f)
	}
	for _, d := range ds {
		if !d.used && c.enabled(rules.UnusedIgnore.ID) {
			extra = append(extra, directiveFinding(name, lines, rules.UnusedIgnore, *d, "ignore directive matched no finding: "+d.source))
		}
	}
	return append(kept, extra...), suppressed
}

func matchDirective(ds []*directive, f Finding) *directive {
	for _, d := range ds {
		if !d.file && f.Line != d.line && f.stmtLine != d.line && f.literalLine != d.line {
			continue
		}
		if len(d.rules) == 0 {
			return d
		}
		for _, id := range d.rules {
			if id == f.Rule {
				return d
			}
		}
	}
	return nil
}

func directiveFinding(name string, lines *sqlparse.LineIndex, r *rules.Rule, d directive, msg string) Finding {
	return Finding{
		Rule: r.ID, Severity: r.Severity, File: name,
		Line: d.pos.Line, Column: d.pos.Column, EndLine: d.pos.Line, EndColumn: d.pos.Column + len([]rune(d.source)),
		Message: msg, Fix: r.Fix, SourceLine: lines.LineText(d.pos.Line), stmtLine: d.pos.Line,
	}
}
