package rules

import (
	"strings"
	"unicode/utf8"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// DriverAPI is a call of a driver's or framework's API that keeps session
// state without SQL in the code. The scan finds such calls in application
// code (package internal/extract names them); the rule that lists the API
// in its APIs reports them, in these words (CheckCall), and explain
// documents them.
type DriverAPI struct {
	// API is the extractor's name of the call: type and method
	// ("PgListener.listen", "NpgsqlConnection.Wait"), or framework and
	// function ("Sequel.listen", "Sequel.pg_advisory_lock").
	API string
	// Library is the driver or framework, with its language.
	Library string
	// When says, for explain, when a call counts (empty: always).
	When string
	// Text is how a finding shows the call. The message says what the
	// call does (Subject, or Text when empty, then Does), then what
	// breaks when the target leaves the state on the server connection
	// (Breaks). In each, {recv} stands for the receiver as written.
	Text, Subject, Does, Breaks string
	// Severity is the finding's severity before the target lowers it
	// (Adjust).
	Severity Severity
	// Fix replaces the rule's fix when set.
	Fix string
	// State is the kind of state the call keeps, as the target handles
	// it (Target.Handle).
	State effects.Kind
}

// CallFinding is what a rule reports about one call of a driver API.
type CallFinding struct {
	Rule     *Rule
	Severity Severity
	Message  string
	Fix      string
	// Text is the call as the finding shows it.
	Text string
}

// CheckCall reports what rule r finds in a call of api on receiver recv
// behind target t; ok is false when r does not list the API.
func (r *Rule) CheckCall(t Target, api, recv string) (f CallFinding, ok bool) {
	for i := range r.APIs {
		a := &r.APIs[i]
		if a.API != api {
			continue
		}
		fill := strings.NewReplacer("{recv}", recv).Replace
		h, note := t.Handle(a.State)
		subject := a.Subject
		if subject == "" {
			subject = a.Text
		}
		what := fill(subject + " " + a.Does)
		f = CallFinding{Rule: r, Severity: Adjust(a.Severity, h), Message: StateMessage(what, fill(a.Breaks), h, note), Fix: a.Fix, Text: fill(a.Text)}
		if f.Fix == "" {
			f.Fix = r.Fix
		}
		return f, true
	}
	return CallFinding{}, false
}

// ExplainAPIs renders the driver APIs of r for explain (Markdown), or ""
// when it lists none.
func (r *Rule) ExplainAPIs() string {
	if len(r.APIs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(wrap("In application code the scan also reports calls of these driver APIs, which keep the state without SQL in the code (with the severity before the target lowers it):", "") + "\n\n")
	for _, a := range r.APIs {
		typ, _, _ := strings.Cut(a.API, ".")
		fill := strings.NewReplacer("{recv}", typ).Replace
		item := "`" + fill(a.Text) + "` (" + a.Library
		if a.When != "" {
			item += ", " + a.When
		}
		item += "): " + fill(a.Does) + "; " + a.Severity.String() + "."
		b.WriteString(wrap("- "+item, "  ") + "\n")
	}
	return "## Driver APIs\n\n" + b.String()
}

// wrap breaks text into lines of at most 96 columns, as the
// documentation pages are written; indent starts each line after the
// first.
func wrap(text, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
		case n+1+utf8.RuneCountInString(w) > 96:
			b.WriteString("\n" + indent)
			n = len(indent)
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += utf8.RuneCountInString(w)
	}
	return b.String()
}
