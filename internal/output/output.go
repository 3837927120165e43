// Package output renders an analyzer.Report in one of pgpoolcheck's output
// formats: text for people, json for scripts, sarif for code-scanning
// services and github for GitHub Actions annotations.
//
// Every renderer writes the findings in the order they arrive (the analyzer
// sorts them) and never reorders them. Counts shown in summaries are
// recomputed from the findings; the number of files and statements, the
// suppressed count and the skipped inputs come from the report's Summary.
//
// Write renders a whole report at once; Stream renders the same bytes while
// the findings arrive file by file (scan), keeping none of them.
package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// Options controls how a report is rendered.
type Options struct {
	// Color turns on ANSI colours in the text format. The caller decides
	// (see UseColor); the other formats ignore it.
	Color bool
}

// formats maps each format name to its renderer, in documentation order.
var formats = []struct {
	name   string
	render func(*bytes.Buffer, *analyzer.Report, Options) error
}{
	{"text", writeText},
	{"json", writeJSON},
	{"sarif", writeSARIF},
	{"github", writeGitHub},
}

// Formats returns the names of the output formats, the default (text)
// first.
func Formats() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return names
}

// Write renders rep to w in the named format. The output is built in memory
// and written with one call, so w receives either the whole report or an
// error is returned. An unknown format name is an error that lists the known
// ones.
func Write(w io.Writer, format string, rep *analyzer.Report, opt Options) error {
	if rep == nil {
		return errors.New("output: nil report")
	}
	for _, f := range formats {
		if f.name != format {
			continue
		}
		var buf bytes.Buffer
		if err := f.render(&buf, rep, opt); err != nil {
			return fmt.Errorf("output: %s: %w", format, err)
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats(), ", "))
}

// severities lists the severities, highest first, as summaries show them.
var severities = []rules.Severity{rules.Critical, rules.Error, rules.Warning, rules.Info}

// summary returns rep's summary with the finding counts recomputed from
// rep.Findings, so a caller that forgot Summary.Count still gets true
// numbers. rep's own maps are not modified.
func summary(rep *analyzer.Report) analyzer.Summary {
	s := rep.Summary
	s.Count(rep.Findings)
	return s
}

// ruleInfo is what the renderers need to know about a rule.
type ruleInfo struct {
	ID       string
	Title    string
	Severity rules.Severity
	Security bool
	Fix      string
	// Doc is the rule's documentation page (Markdown).
	Doc string
}

// catalogue returns the rules the renderers describe, in catalogue order.
// It is a variable so that tests can fix it and keep golden files
// independent of the rule documentation.
var catalogue = func() []ruleInfo {
	all := rules.All()
	out := make([]ruleInfo, len(all))
	for i, r := range all {
		out[i] = ruleInfo{ID: r.ID, Title: r.Title, Severity: r.Severity, Security: r.Security, Fix: r.Fix, Doc: r.Doc()}
	}
	return out
}

// plural returns "1 file" or "2 files".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
