package output

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/width"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

// indent starts the lines printed under a finding's header.
const indent = "    "

// writeText renders the compiler-style text format: for each finding a
// header "path:line:col: severity [rule] message" (with " (security)"
// appended for security findings), the source line with a caret under the
// column, and the fix; then a blank line and a summary.
func writeText(buf *bytes.Buffer, rep *analyzer.Report, opt Options) error {
	p := newPalette(opt.Color)
	for _, f := range rep.Findings {
		writeTextFinding(buf, p, f)
	}
	if len(rep.Findings) > 0 {
		buf.WriteByte('\n')
	}
	writeTextSummary(buf, rep)
	return nil
}

// writeTextFinding writes one finding with its source line, caret and fix.
func writeTextFinding(buf *bytes.Buffer, p *palette, f analyzer.Finding) {
	if loc := location(f); loc != "" {
		buf.WriteString(p.path.Sprint(loc + ":"))
		buf.WriteByte(' ')
	}
	sev := f.Severity.String()
	fmt.Fprintf(buf, "%s [%s] %s", p.sev(sev), f.Rule, indentLines(f.Message))
	if f.Security {
		buf.WriteString(" (security)")
	}
	buf.WriteByte('\n')

	if src := strings.TrimRight(f.SourceLine, "\r\n"); src != "" {
		buf.WriteString(indent + src + "\n")
		if f.Column > 0 {
			buf.WriteString(indent + caretPad(src, f.Column) + "^\n")
		}
	}
	for _, r := range f.Related {
		buf.WriteString(indent + relatedText(r) + "\n")
	}
	if t := f.Traffic; t != nil {
		if f.Statement != "" {
			buf.WriteString(indent + "statement: " + indentLines(f.Statement) + "\n")
		}
		buf.WriteString(indent + "seen: " + trafficLine(t) + "\n")
	}
	if f.Fix != "" {
		buf.WriteString(indent + "fix: " + indentLines(f.Fix) + "\n")
	}
}

// relatedText says where a related location is: "defined at FILE:LINE"
// for a message "defined here", else the message with "here" replaced.
func relatedText(r analyzer.Related) string {
	at := location(analyzer.Finding{File: r.File, Line: r.Line})
	if msg, ok := strings.CutSuffix(r.Message, " here"); ok {
		return msg + " at " + at
	}
	return r.Message + ": " + at
}

// trafficLine says how often and where a finding from traffic was seen.
func trafficLine(t *analyzer.TrafficStats) string {
	s := fmt.Sprintf("%s in %s", plural(t.Count, "time"), plural(t.Sessions, "session"))
	const layout = "2006-01-02 15:04:05.000"
	if t.FirstSeen.Equal(t.LastSeen) {
		s += ", at " + t.FirstSeen.UTC().Format(layout) + " UTC"
	} else {
		s += ", " + t.FirstSeen.UTC().Format(layout) + " to " + t.LastSeen.UTC().Format(layout) + " UTC"
	}
	var apps []string
	for _, a := range t.ApplicationNames {
		if a == "" {
			a = `""`
		}
		apps = append(apps, a)
	}
	if len(apps) > 0 {
		s += ", application_name " + strings.Join(apps, ", ")
	}
	return s
}

// location returns "path:line:col", leaving out the parts that are unknown.
func location(f analyzer.Finding) string {
	if f.File == "" {
		return ""
	}
	switch {
	case f.Line <= 0:
		return f.File
	case f.Column <= 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
}

// indentLines indents the continuation lines of a multi-line text so they
// stay under the finding they belong to.
func indentLines(s string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// caretPad returns the blank text that brings a caret under column col
// (1-based, counting code points) of src, when both are printed after the
// same prefix. Tabs in src before the column are copied, so the terminal
// expands them the same way; zero-width characters (combining marks, format
// characters) take no room and East Asian wide characters take two cells.
// A column past the end of src is padded with spaces.
func caretPad(src string, col int) string {
	var b strings.Builder
	n := 0
	for _, r := range src {
		if n == col-1 {
			break
		}
		n++
		switch {
		case r == '\t':
			b.WriteByte('\t')
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case isWide(r):
			b.WriteString("  ")
		default:
			b.WriteByte(' ')
		}
	}
	for ; n < col-1; n++ {
		b.WriteByte(' ')
	}
	return b.String()
}

// isWide reports whether r takes two cells in a terminal.
func isWide(r rune) bool {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return true
	}
	return false
}

// writeTextSummary writes the totals, the per-rule counts, the suppressed
// count and the skipped inputs.
func writeTextSummary(buf *bytes.Buffer, rep *analyzer.Report) {
	writeTextSummaryOf(buf, summary(rep))
}

// writeTextSummaryOf is writeTextSummary with the summary s, its counts
// already made (a stream's findings are no longer in a report).
func writeTextSummaryOf(buf *bytes.Buffer, s analyzer.Summary) {
	where := fmt.Sprintf("in %s, %s", plural(s.Files, "file"), plural(s.Statements, "statement"))
	if s.Captures > 0 {
		// Traffic is counted in sessions; the files and instances it
		// came from go on a line of their own.
		sessions := plural(s.Sessions, "session")
		if scanned := s.Files - s.CaptureFiles; scanned > 0 {
			sessions = plural(scanned, "file") + " and " + sessions
		}
		where = fmt.Sprintf("in %s, %s", sessions, plural(s.Statements, "statement"))
	}
	if s.Findings == 0 {
		buf.WriteString("no findings " + where + "\n")
	} else {
		var parts []string
		for _, sev := range severities {
			if n := s.BySeverity[sev.String()]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, sev))
			}
		}
		fmt.Fprintf(buf, "%s (%s) %s\n", plural(s.Findings, "finding"), strings.Join(parts, ", "), where)
		writeRuleCounts(buf, s.ByRule)
	}
	if s.Captures > 0 {
		files := plural(s.CaptureFiles, "capture file")
		if s.Captures != s.Instances {
			// A restarted recorder: one instance, several recordings.
			files = plural(s.Captures, "recording") + ", " + files
		}
		fmt.Fprintf(buf, "traffic from %s (%s)\n", plural(s.Instances, "proxy instance"), files)
	}
	if s.Baselined > 0 {
		fmt.Fprintf(buf, "%s hidden by the baseline\n", plural(s.Baselined, "finding"))
	}
	if len(s.StaleBaseline) > 0 {
		n := len(s.StaleBaseline)
		if n == 1 {
			fmt.Fprintf(buf, "1 baseline entry no longer matches (the code changed or was fixed; rewrite the baseline):\n")
		} else {
			fmt.Fprintf(buf, "%d baseline entries no longer match (the code changed or was fixed; rewrite the baseline):\n", n)
		}
		for _, e := range s.StaleBaseline {
			fmt.Fprintf(buf, "  %s [%s] %s #%d\n", e.File, e.Rule, e.Fingerprint, e.Occurrence)
		}
	}
	if s.Suppressed > 0 {
		fmt.Fprintf(buf, "%s suppressed by ignore directives\n", plural(s.Suppressed, "finding"))
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(buf, "skipped %s:\n", plural(len(s.Skipped), "file"))
		for _, sk := range s.Skipped {
			fmt.Fprintf(buf, "  %s: %s\n", sk.File, sk.Reason)
		}
	}
}

// writeRuleCounts writes one line per rule, most frequent first, then by
// id: the count, the id and the rule's title when the rule is known.
func writeRuleCounts(buf *bytes.Buffer, byRule map[string]int) {
	titles := map[string]string{}
	for _, r := range catalogue() {
		titles[r.ID] = r.Title
	}
	type row struct {
		id string
		n  int
	}
	var rows []row
	countWidth, idWidth := 0, 0
	for id, n := range byRule {
		rows = append(rows, row{id, n})
		countWidth = max(countWidth, len(fmt.Sprint(n)))
		idWidth = max(idWidth, len(id))
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.id, b.id))
	})
	for _, r := range rows {
		line := fmt.Sprintf("  %*d  %s", countWidth, r.n, r.id)
		if title := titles[r.id]; title != "" {
			line = fmt.Sprintf("  %*d  %-*s  %s", countWidth, r.n, idWidth, r.id, title)
		}
		buf.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}
