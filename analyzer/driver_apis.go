package analyzer

import (
	"bytes"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// Session state that drivers create through their APIs rather than SQL
// text:
//
//   - pgx's ConnConfig.RuntimeParams (cfg.RuntimeParams["search_path"] =
//     "app", or RuntimeParams: map[string]string{"search_path": "app"}),
//     which pgx sends as startup parameters: startup-parameter;
//   - node-postgres's named queries (client.query({name: "q", text:
//     "…"})), which it prepares as named statements on the server
//     connection: protocol-prepare;
//   - Sequel's Database#listen (DB.listen(:jobs) do … end, or with loop:
//     true), which runs LISTEN on a connection of its pool and waits there
//     for notifications: listen (subscriptionFindings);
//   - the advisory lock functions of Sequel's virtual rows
//     (sequelAdvisoryFindings).
//
// The calls that keep listen and advisory-lock state (these two, sqlx's
// and Npgsql's in lang_rust.go and lang_csharp.go) are the rules' to
// report (rules.DriverAPI): apiFindings hands each call to the rules that
// list its API, which word and judge it. RuntimeParams and named queries
// are driver settings, reported as the settings of a connection string
// are: settingsCheck.setting hands each to the rules that list it
// (rules.DriverSetting), which word and judge it.

// matchBrace returns the offset of the code brace that closes the one at
// open, or len(src).
func matchBrace(src []byte, code []bool, open int) int {
	depth := 0
	for k := open; k < len(src); k++ {
		if !code[k] {
			continue
		}
		switch src[k] {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return len(src)
}

// depthBetween returns the bracket depth of offset to, counted from the
// bracket at from.
func depthBetween(src []byte, code []bool, from, to int) int {
	depth := 0
	for k := from; k < to; k++ {
		if !code[k] {
			continue
		}
		switch src[k] {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
		}
	}
	return depth
}

// maskedText returns src[from:to] with everything but code blanked.
func maskedText(src []byte, code []bool, from, to int) []byte {
	out := bytes.Clone(src[from:min(to, len(src))])
	for k := range out {
		if !code[from+k] {
			out[k] = ' '
		}
	}
	return out
}

// apiRules returns the enabled rules that report calls of driver APIs.
func (c *Config) apiRules() []*rules.Rule {
	var out []*rules.Rule
	for _, r := range c.rules() {
		if len(r.APIs) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// apiFindings reports a call of a driver API (api, called on receiver
// recv, at src[start:end]) through the rules that list the API: each
// finding, its message and severity included, is the rule's.
func (c *Config) apiFindings(rs []*rules.Rule, name string, lines *sqlparse.LineIndex, start, end int, api, recv string) []Finding {
	var fs []Finding
	for _, r := range rs {
		cf, ok := r.CheckCall(c.target(), api, recv)
		if !ok {
			continue
		}
		s, e := lines.Position(start), lines.Position(end)
		fs = append(fs, Finding{
			Rule:     r.ID,
			Severity: cf.Severity,
			File:     name,
			Line:     s.Line, Column: s.Column, EndLine: e.Line, EndColumn: e.Column,
			Message:     cf.Message,
			Fix:         cf.Fix,
			Statement:   cf.Text,
			SourceLine:  lines.LineText(s.Line),
			stmtLine:    s.Line,
			literalLine: s.Line,
		})
	}
	return fs
}
