package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// writeGitHub renders GitHub Actions workflow commands, one line per
// finding:
//
//	::error file=F,line=L,col=C,endLine=EL,endColumn=EC,title=pgpoolcheck RULE::MESSAGE (fix: FIX)
//
// The command is "error" for critical and error findings, "warning" for
// warnings and "notice" for info. Unknown positions are left out. Nothing
// else is written, not even a summary: GitHub shows only a few annotations
// of each kind per step, and a summary notice would take the place of a
// finding. A report without findings produces no output; the CLI prints
// its summary on stderr if it wants one.
func writeGitHub(buf *bytes.Buffer, rep *analyzer.Report, _ Options) error {
	for _, f := range rep.Findings {
		writeGitHubFinding(buf, f)
	}
	return nil
}

// writeGitHubFinding writes the workflow command of one finding.
func writeGitHubFinding(buf *bytes.Buffer, f analyzer.Finding) {
	var props []string
	add := func(key, value string) { props = append(props, key+"="+escapeProperty(value)) }
	addInt := func(key string, n int) {
		if n > 0 {
			add(key, fmt.Sprint(n))
		}
	}
	if f.File != "" {
		add("file", f.File)
		addInt("line", f.Line)
		addInt("col", f.Column)
		addInt("endLine", f.EndLine)
		addInt("endColumn", f.EndColumn)
	}
	add("title", "pgpoolcheck "+f.Rule)
	msg := f.Message
	if f.Fix != "" {
		msg += " (fix: " + f.Fix + ")"
	}
	fmt.Fprintf(buf, "::%s %s::%s\n", githubCommand(f.Severity), strings.Join(props, ","), escapeData(msg))
}

// githubCommand maps a severity to a workflow command.
func githubCommand(s rules.Severity) string {
	switch s {
	case rules.Critical, rules.Error:
		return "error"
	case rules.Info:
		return "notice"
	}
	return "warning"
}

// dataEscaper escapes the message of a workflow command, as the Actions
// runner's toolkit does (escapeData in @actions/core).
var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// propertyEscaper escapes a property value of a workflow command
// (escapeProperty in @actions/core): also ':' and ',', which end values.
var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// escapeData escapes the message of a workflow command.
func escapeData(s string) string { return dataEscaper.Replace(s) }

// escapeProperty escapes a property value of a workflow command.
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
