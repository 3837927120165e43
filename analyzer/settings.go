package analyzer

// What scan finds in how an application connects rather than in its SQL:
// connection-string parameters that become session state on every server
// connection (startup-parameter), settings that make the driver prepare
// statements on the server (protocol-prepare), and driver settings and
// JDBC calls that the driver turns into session-level SETs (session-set).
// They are found in the string literals of application code and in
// configuration files (.env, properties, YAML, appsettings.json). The
// checks here find each and name it; the rule that lists it
// (rules.DriverSetting) words it and judges it behind the target.

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// settingsCheck collects the findings of one file.
type settingsCheck struct {
	c        *Config
	t        rules.Target
	name     string
	src      []byte
	lines    *sqlparse.LineIndex
	findings []Finding
	// secrets are the file ranges of passwords, hidden in the source
	// lines shown with the findings.
	secrets [][2]int
}

func newSettingsCheck(c *Config, name string, src []byte, lines *sqlparse.LineIndex) *settingsCheck {
	return &settingsCheck{c: c, t: c.target(), name: name, src: src, lines: lines}
}

// param is one setting found in a literal: a connection string parameter,
// or a configuration value and its key.
type param struct {
	lit        *extract.Literal
	key, value string
	// start and end are the setting's range in the literal's value;
	// valueAt maps an offset in value to the literal's value.
	start, end int
	valueAt    func(int) int
	// text is the setting as shown in the finding's statement field.
	text string
}

func connParam(lit *extract.Literal, p *extract.ConnParam) param {
	return param{lit: lit, key: p.Key, value: p.Value, start: p.KeyStart, end: p.End, valueAt: p.ValueOffset, text: p.Key + "=" + p.Value}
}

// report adds a finding at the range [start, end) of the literal's value.
func (s *settingsCheck) report(r *rules.Rule, sev rules.Severity, lit *extract.Literal, start, end int, msg, fix, text string) {
	if !s.c.enabled(r.ID) {
		return
	}
	from := lit.SourceOffset(start)
	to := from + 1
	if end > start {
		to = lit.SourceOffset(end-1) + 1
	}
	p := s.lines.Position(from)
	e := s.lines.Position(to)
	if len(text) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	s.findings = append(s.findings, Finding{
		Rule: r.ID, Severity: sev, Security: sev == rules.Critical, File: s.name,
		Line: p.Line, Column: p.Column, EndLine: e.Line, EndColumn: e.Column,
		Message: msg, Fix: fix, Statement: strings.ReplaceAll(text, extract.Placeholder, "…"),
		stmtLine: p.Line, literalLine: s.lines.Position(lit.Start).Line,
	})
}

// finish returns the findings with their source lines, passwords hidden.
func (s *settingsCheck) finish() []Finding {
	for i := range s.findings {
		f := &s.findings[i]
		f.SourceLine = s.redacted(f.Line)
	}
	return s.findings
}

// redacted returns the text of line n with every password on it replaced
// by as many '*' as it has characters, so that columns stay the same.
func (s *settingsCheck) redacted(n int) string {
	text := s.lines.LineText(n)
	start := s.lines.LineStart(n)
	if len(s.secrets) == 0 {
		return text
	}
	b := []byte(text)
	var out []byte
	for i := 0; i < len(b); {
		_, size := utf8.DecodeRune(b[i:])
		if s.secret(start + i) {
			out = append(out, '*')
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

func (s *settingsCheck) secret(off int) bool {
	for _, r := range s.secrets {
		if off >= r[0] && off < r[1] {
			return true
		}
	}
	return false
}

// literal checks the connection strings of one literal or configuration
// value.
func (s *settingsCheck) literal(lit *extract.Literal) {
	for _, cs := range extract.ConnStrings(lit.Value) {
		for _, sec := range cs.Secrets {
			s.secrets = append(s.secrets, [2]int{lit.SourceOffset(sec[0]), lit.SourceOffset(sec[1]-1) + 1})
		}
		for i := range cs.Params {
			p := connParam(lit, &cs.Params[i])
			switch cs.Form {
			case extract.ConnURL, extract.ConnKeywords:
				key := strings.ToLower(p.key)
				switch {
				case key == "options":
					s.options(p, "connstring.options")
				case extract.RuntimeParams[key]:
					s.setting(p, "connstring.param", rules.SettingUse{Value: p.value, Param: key})
				}
			case extract.ConnJDBC:
				s.jdbcParam(p)
			case extract.ConnNpgsql:
				switch extract.NpgsqlKey(p.key) {
				case "searchpath":
					s.setting(p, "Npgsql.SearchPath", rules.SettingUse{Key: p.key, Value: p.value})
				case "options":
					s.options(p, "Npgsql.Options")
				case "maxautoprepare":
					n, err := strconv.Atoi(strings.TrimSpace(p.value))
					if err != nil || n <= 0 {
						continue
					}
					s.setting(p, "Npgsql.MaxAutoPrepare", rules.SettingUse{Key: p.key, N: n})
				}
			}
		}
	}
}

// jdbcParam checks a pgjdbc connection property (from a JDBC URL or a
// data-source property).
func (s *settingsCheck) jdbcParam(p param) {
	switch p.key {
	case "currentSchema":
		s.setting(p, "pgjdbc.currentSchema", rules.SettingUse{Value: p.value})
	case "options":
		s.options(p, "pgjdbc.options")
	case "prepareThreshold":
		n, err := strconv.Atoi(strings.TrimSpace(p.value))
		if err != nil || n == 0 {
			return // 0 keeps pgjdbc on unnamed statements
		}
		setting := "pgjdbc.prepareThreshold"
		if n < 0 {
			setting += ".negative" // every statement, from its first execution
		}
		s.setting(p, setting, rules.SettingUse{N: n})
	case "readOnlyMode":
		if !strings.EqualFold(strings.TrimSpace(p.value), "always") {
			return
		}
		s.setting(p, "pgjdbc.readOnlyMode", rules.SettingUse{})
	}
}

// options checks the -c settings of a startup options value, which the
// rules list as setting.
func (s *settingsCheck) options(p param, setting string) {
	for _, o := range extract.OptionSettings(p.value) {
		q := p
		q.start, q.end = p.valueAt(o.Start), p.valueAt(o.End)
		s.setting(q, setting, rules.SettingUse{Param: o.Name, Value: o.Value, Raw: p.value[o.Start:o.End]})
	}
}

// setting reports a use u of a driver setting at p: each enabled rule
// that lists the setting (rules.DriverSetting) words and judges it.
func (s *settingsCheck) setting(p param, setting string, u rules.SettingUse) {
	for _, r := range s.c.rules() {
		if f, ok := r.CheckSetting(s.t, setting, u); ok {
			s.report(r, f.Severity, p.lit, p.start, p.end, f.Message, f.Fix, p.text)
		}
	}
}

// configValue checks one value of a configuration file: its connection
// strings, and the keys that configure a driver or a framework's
// connection setup.
func (s *settingsCheck) configValue(v *extract.ConfigValue, rails bool) {
	s.literal(&v.Literal)
	lit := &v.Literal
	p := param{lit: lit, key: v.Key, value: lit.Value, start: 0, end: len(lit.Value), valueAt: func(i int) int { return i }, text: v.Key + "=" + lit.Value}
	parts := strings.Split(v.Key, ".")
	last := parts[len(parts)-1]
	norm := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(v.Key))
	switch {
	case last == "currentSchema" || last == "prepareThreshold" || last == "readOnlyMode":
		// A pgjdbc property set on a data source (HikariCP's
		// dataSource.currentSchema, Spring's
		// ….hikari.data-source-properties.prepareThreshold).
		q := p
		q.key = last
		s.jdbcParam(q)
	case strings.HasSuffix(norm, "hikari.schema"):
		s.setting(p, "HikariCP.schema", rules.SettingUse{})
	case strings.HasSuffix(norm, "hikari.transactionisolation"):
		level, ok := isolationLevel(lit.Value, nil)
		if !ok {
			return
		}
		s.setting(p, "HikariCP.transactionIsolation", rules.SettingUse{Level: level})
	case rails && last == "schema_search_path":
		s.setting(p, "Rails.schema_search_path", rules.SettingUse{})
	case rails && len(parts) >= 2 && parts[len(parts)-2] == "variables":
		name := strings.ToLower(last)
		if strings.EqualFold(strings.TrimSpace(lit.Value), "default") || name == "" {
			return // SET … TO DEFAULT of the server's default
		}
		s.setting(p, "Rails.variables", rules.SettingUse{Key: last, Param: name})
	case rails && last == "options":
		s.options(p, "Rails.options")
	}
}

// codeSettings checks the literals of an application source file for
// connection strings and, in Java and Kotlin, the JDBC calls.
func (c *Config) codeSettings(name string, src []byte, lang extract.Language, lines *sqlparse.LineIndex, lits []extract.Literal, comments []extract.Comment) []Finding {
	s := newSettingsCheck(c, name, src, lines)
	var offline []extract.Span
	switch lang {
	case extract.Rust:
		offline = extract.RustOfflineTests(src)
	case extract.Java, extract.Kotlin:
		offline = extract.JVMOfflineTests(src, lits, comments)
	}
	var throws [][2]int
	if lang == extract.CSharp {
		throws = csharpThrowsArgs(src, lits, comments)
	}
	for i := range lits {
		lit := &lits[i]
		if notSQLCall(callee(src, lit.Start)) || notSQLMacros[lit.Macro] {
			continue // a message: log.info("connect with postgres://…")
		}
		if spanAt(offline, lit.Start) >= 0 || inRanges(throws, lit.Start) {
			continue // a test that parses the string and never connects
		}
		s.literal(lit)
	}
	if lang == extract.Java || lang == extract.Kotlin {
		s.javaCalls(lang, lits, comments)
	}
	if lang == extract.Rust {
		s.rustOptions(src, lits, offline)
	}
	if lang == extract.Go {
		s.goRuntimeParams(src, lits, comments)
	}
	if lang == extract.JavaScript {
		s.nodeNamedQueries(src, lits, comments)
	}
	if lang == extract.PHP {
		s.laravelConfig(src, lits, comments)
		s.phpPrepares(src, lits, comments)
	}
	return s.finish()
}

// AnalyzeConfig analyzes a configuration file: the connection strings in
// its values, and the keys that configure a driver or a framework's
// connection setup. Ignore directives work in its comments.
func (c *Config) AnalyzeConfig(name string, src []byte, f extract.ConfigFormat) Result {
	vals, comments := extract.ConfigValues(f, src)
	lines := sqlparse.NewLineIndex(src)
	s := newSettingsCheck(c, name, src, lines)
	rails := f == extract.YAML && railsDatabaseFile(name, vals)
	for i := range vals {
		s.configValue(&vals[i], rails)
	}
	cms := make([]comment, len(comments))
	for i, cm := range comments {
		cms[i] = comment{cm.Start, cm.End, cm.Text}
	}
	var res Result
	res.Findings, res.Suppressed = applyDirectives(c, name, src, lines, cms, s.finish())
	return res
}
