package analyzer

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
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
// and Npgsql's in code_rust.go and code_csharp.go) are the rules' to
// report (rules.DriverAPI): apiFindings hands each call to the rules that
// list its API, which word and judge it. RuntimeParams and named queries
// are driver settings, reported as the settings of a connection string
// are: settingsCheck.setting hands each to the rules that list it
// (rules.DriverSetting), which word and judge it.

var (
	// runtimeParamsIndex is RuntimeParams[ before a key literal.
	runtimeParamsIndex = regexp.MustCompile(`\bRuntimeParams\s*\[\s*$`)
	// runtimeParamsMap is RuntimeParams: map[string]string{ or
	// RuntimeParams = map[string]string{.
	runtimeParamsMap = regexp.MustCompile(`\bRuntimeParams\s*(?::|=|:=)\s*map\[string\]string\s*\{`)
	// nodeQueryObject is .query({ … }: node-postgres's query config object.
	nodeQueryObject = regexp.MustCompile(`\.query\s*\(\s*\{`)
	// nodeName is the name key of a query config object.
	nodeName = regexp.MustCompile(`(?:^|[{,\s])name\s*:\s*$`)
	// nodeText is its text key.
	nodeText = regexp.MustCompile(`(?:^|[{,\s])text\s*:`)
)

// goRuntimeParams checks pgx's RuntimeParams.
func (s *settingsCheck) goRuntimeParams(src []byte, lits []extract.Literal, comments []extract.Comment) {
	if !bytes.Contains(src, []byte("RuntimeParams")) {
		return
	}
	code := extract.CodeMask(src, lits, comments)
	keyed := map[int]bool{} // literal starts that are map keys
	for _, m := range runtimeParamsMap.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		open := m[1] - 1
		shut := matchBrace(src, code, open)
		for i := range lits {
			l := &lits[i]
			if l.Start > open && l.End <= shut && bytes.HasPrefix(bytes.TrimLeft(src[l.End:shut], " \t\r\n"), []byte(":")) {
				keyed[l.Start] = true
			}
		}
	}
	for i := range lits {
		l := &lits[i]
		lineStart := bytes.LastIndexByte(src[:l.Start], '\n') + 1
		index := runtimeParamsIndex.Match(src[lineStart:l.Start])
		if !index && !keyed[l.Start] {
			continue
		}
		if index && !bytes.HasPrefix(bytes.TrimLeft(src[l.End:], " \t"), []byte("]")) {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(l.Value))
		if name == "" || strings.Contains(name, extract.Placeholder) {
			continue
		}
		p := param{lit: l, key: name, start: 0, end: len(l.Value), valueAt: func(i int) int { return i },
			text: fmt.Sprintf("RuntimeParams[%q]", l.Value)}
		s.setting(p, "pgx.RuntimeParams", rules.SettingUse{Key: l.Value, Param: name})
	}
}

// nodeNamedQueries checks node-postgres's named queries.
func (s *settingsCheck) nodeNamedQueries(src []byte, lits []extract.Literal, comments []extract.Comment) {
	if !bytes.Contains(src, []byte(".query")) || !bytes.Contains(src, []byte("name")) {
		return
	}
	code := extract.CodeMask(src, lits, comments)
	for _, m := range nodeQueryObject.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		open := m[1] - 1
		shut := matchBrace(src, code, open)
		if !nodeText.Match(maskedText(src, code, open, shut)) {
			continue
		}
		for i := range lits {
			l := &lits[i]
			if l.Start <= open || l.End > shut || !nodeName.Match(src[open:l.Start]) || depthBetween(src, code, open, l.Start) != 1 {
				continue
			}
			if strings.TrimSpace(l.Value) == "" {
				continue // an empty name is the unnamed statement
			}
			p := param{lit: l, key: "name", value: l.Value, start: 0, end: len(l.Value), valueAt: func(i int) int { return i },
				text: fmt.Sprintf("query({ name: %q, … })", l.Value)}
			s.setting(p, "node-postgres.name", rules.SettingUse{Value: l.Value})
		}
	}
}

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

// sequelListen matches Sequel's Database#listen with a block or loop:
// RECEIVER.listen(…) do, { or loop: true.
var sequelListen = regexp.MustCompile(`([A-Za-z_@:][A-Za-z0-9_:.@]*)\.(listen)\b`)

// blockDo is a do block on the line.
var blockDo = regexp.MustCompile(`\bdo\b`)

// sequelListens returns the calls of Sequel's listen in a Ruby file that
// uses Sequel: a receiver's listen called with a block or with loop:
// (Sequel's LISTEN and wait for notifications).
func sequelListens(src []byte, lits []extract.Literal, comments []extract.Comment) []extract.Subscription {
	if !bytes.Contains(src, []byte("Sequel")) || !bytes.Contains(src, []byte(".listen")) {
		return nil
	}
	code := extract.CodeMask(src, lits, comments)
	var out []extract.Subscription
	for _, m := range sequelListen.FindAllSubmatchIndex(src, -1) {
		if !code[m[4]] {
			continue
		}
		eol := bytes.IndexByte(src[m[5]:], '\n')
		if eol < 0 {
			eol = len(src) - m[5]
		}
		line := maskedText(src, code, m[5], m[5]+eol) // after "listen"
		args, after := line, line
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '(' {
			at := m[5] + len(line) - len(t)
			shut := matchBrace(src, code, at)
			args = maskedText(src, code, at, min(shut+1, len(src)))
			after = nil
			if shut < m[5]+eol {
				after = maskedText(src, code, shut+1, m[5]+eol)
			}
		}
		after = bytes.TrimLeft(after, " \t")
		block := bytes.HasPrefix(after, []byte("{")) || blockDo.Match(after)
		if !block && !bytes.Contains(args, []byte("loop:")) {
			continue
		}
		out = append(out, extract.Subscription{Start: m[4], End: m[5], API: "Sequel.listen", Receiver: string(src[m[2]:m[3]])})
	}
	return out
}

// sequelVirtualRowCall is a call of an advisory lock function in a Sequel
// virtual row block: ds.get{pg_advisory_lock(id)}.
var sequelVirtualRowCall = regexp.MustCompile(`\{\s*(?:\|\w+\|\s*)?(pg_(?:try_)?advisory_(?:lock|lock_shared|unlock|unlock_shared|unlock_all))\s*[({]`)

// sequelAdvisoryFindings reports the advisory lock functions that a Ruby
// file using Sequel calls through its virtual row DSL
// (ds.get{pg_advisory_lock(lock_id)}): Sequel sends them as SQL, and the
// rule that lists the function as an API of Sequel's reports it.
func (c *Config) sequelAdvisoryFindings(name string, src []byte, lines *sqlparse.LineIndex) []Finding {
	apis := c.apiRules()
	if len(apis) == 0 || !bytes.Contains(src, []byte("Sequel")) || !bytes.Contains(src, []byte("advisory_")) {
		return nil
	}
	lits, comments, err := extract.Literals(extract.Ruby, src)
	if err != nil {
		return nil
	}
	code := extract.CodeMask(src, lits, comments)
	var fs []Finding
	for _, m := range sequelVirtualRowCall.FindAllSubmatchIndex(src, -1) {
		if !code[m[2]] {
			continue
		}
		fs = append(fs, c.apiFindings(apis, name, lines, m[2], m[3], "Sequel."+string(src[m[2]:m[3]]), "")...)
	}
	return fs
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
