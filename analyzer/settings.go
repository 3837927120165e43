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
	"fmt"
	"path/filepath"
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

// railsDatabaseFile reports whether a YAML file is a Rails database.yml for
// PostgreSQL: named database*.yml and naming a PostgreSQL adapter or URL.
func railsDatabaseFile(name string, vals []extract.ConfigValue) bool {
	base := strings.ToLower(filepath.Base(name))
	if !strings.HasPrefix(base, "database") {
		return false
	}
	for _, v := range vals {
		val := strings.ToLower(v.Value)
		if strings.HasSuffix(v.Key, "adapter") && strings.Contains(val, "postg") ||
			strings.Contains(val, "postgres://") || strings.Contains(val, "postgresql://") {
			return true
		}
	}
	return false
}

// jdbcMethods are the JDBC methods pgjdbc turns into session-level SETs,
// and the Kotlin property that stands for one of them. Each is reported
// only on a receiver (conn.setSchema(…), never a declaration), and only
// where a false positive is unlikely:
//   - setSchema is also the name of javax.xml's Validator, Unmarshaller and
//     parser factories' setSchema(Schema): it is reported with a string
//     argument, or in a file that mentions JDBC and no XML API;
//   - setReadOnly is common in UI and file APIs (File.setReadOnly()), and
//     pgjdbc only sends a SET for it under readOnlyMode=always: it is
//     reported only in a file that sets that mode;
//   - setClientInfo sets application_name only for the property
//     "ApplicationName", so it is reported only when the first argument is
//     that literal (a Properties argument may hold it too, unseen);
//   - setTransactionIsolation is JDBC's and HikariCP's only.
var jdbcMethods = map[string]bool{
	"setSchema": true, "setTransactionIsolation": true, "setReadOnly": true, "setClientInfo": true,
	"transactionIsolation": true,
}

// javaCalls checks the JDBC calls of a Java or Kotlin file.
func (s *settingsCheck) javaCalls(lang extract.Language, lits []extract.Literal, comments []extract.Comment) {
	calls := extract.JavaCalls(s.src, lits, comments, jdbcMethods)
	if len(calls) == 0 {
		return
	}
	text := string(s.src)
	jdbcFile := strings.Contains(text, "java.sql") || strings.Contains(text, "javax.sql") || strings.Contains(text, "Connection") ||
		strings.Contains(text, "DataSource") || strings.Contains(text, "Hikari")
	xmlFile := strings.Contains(text, "javax.xml") || strings.Contains(text, "jakarta.xml") || strings.Contains(text, "org.xml.")
	readOnlyAlways := false
	for i, l := range lits {
		if strings.Contains(l.Value, "readOnlyMode=always") ||
			l.Value == "readOnlyMode" && i+1 < len(lits) && strings.EqualFold(lits[i+1].Value, "always") {
			readOnlyAlways = true
		}
	}
	for _, call := range calls {
		if call.Assign != (call.Name == "transactionIsolation") || len(call.Args) == 0 {
			continue
		}
		first := call.Args[0]
		var firstLit *extract.Literal
		if first.Lit >= 0 {
			firstLit = &lits[first.Lit]
		}
		recv := call.Name
		if call.Receiver != "" {
			recv = call.Receiver + "." + call.Name
		}
		argText := strings.TrimSpace(text[first.Start:first.End])
		stmt := recv + "(" + text[first.Start:call.End-1] + ")"
		if call.Assign {
			stmt = recv + " = " + argText
		}
		u := rules.SettingUse{Recv: recv}
		var setting string
		switch call.Name {
		case "setSchema":
			if firstLit == nil && (!jdbcFile || xmlFile) {
				continue
			}
			if t := extract.DeclaredType(lang, s.src, lits, comments, call.Receiver, call.NameStart); t != "" && !jdbcSchemaType(t) {
				continue // a model's setSchema (Table, an exporter), not JDBC's
			}
			setting = "JDBC.setSchema"
		case "setTransactionIsolation", "transactionIsolation":
			level, ok := isolationLevel(argText, firstLit)
			if !ok {
				continue // TRANSACTION_NONE: pgjdbc refuses it
			}
			setting, u.Level = "JDBC.setTransactionIsolation", level
			if call.Assign {
				setting = "Kotlin.transactionIsolation"
			}
		case "setReadOnly":
			if !readOnlyAlways {
				continue // pgjdbc's default readOnlyMode=transaction sends BEGIN READ ONLY
			}
			setting = "JDBC.setReadOnly"
		case "setClientInfo":
			if firstLit == nil || firstLit.Value != "ApplicationName" || len(call.Args) < 2 {
				continue
			}
			setting = "JDBC.setClientInfo"
		default:
			continue
		}
		lit := &extract.Literal{Start: call.NameStart, End: call.End, Segments: []extract.Segment{{Value: 0, Source: call.NameStart}}, Value: text[call.NameStart:call.End]}
		s.setting(param{lit: lit, start: 0, end: call.End - call.NameStart, text: stmt}, setting, u)
	}
}

// jdbcSchemaType reports whether a declared type may be one whose
// setSchema sets the server's search_path: a JDBC Connection (or a
// wrapper or subtype: PgConnection, HikariProxyConnection), a DataSource,
// or HikariCP's configuration. Other classes' setSchema (a table model, an
// exporter, javax.xml's validators) sets a field.
func jdbcSchemaType(t string) bool {
	for _, w := range []string{"Connection", "DataSource", "Hikari"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// isolationLevel names the level of a setTransactionIsolation argument:
// Connection.TRANSACTION_SERIALIZABLE, its value 8, or HikariCP's string
// "TRANSACTION_SERIALIZABLE". An unknown expression gives "…"; ok is
// false for TRANSACTION_NONE.
func isolationLevel(arg string, lit *extract.Literal) (string, bool) {
	if lit != nil {
		arg = lit.Value
	}
	if k := strings.LastIndexByte(arg, '.'); k >= 0 {
		arg = arg[k+1:]
	}
	switch strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(arg)), "TRANSACTION_") {
	case "NONE", "0":
		return "", false
	case "READ_UNCOMMITTED", "1":
		return "READ UNCOMMITTED", true
	case "READ_COMMITTED", "2":
		return "READ COMMITTED", true
	case "REPEATABLE_READ", "4":
		return "REPEATABLE READ", true
	case "SERIALIZABLE", "8":
		return "SERIALIZABLE", true
	}
	return "…", true
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

// rustOptions checks the (name, value) pairs given to sqlx's
// PgConnectOptions::options, which sqlx sends as -c name=value in the
// options startup parameter.
func (s *settingsCheck) rustOptions(src []byte, lits []extract.Literal, offline []extract.Span) {
	pairs := extract.RustConnectOptions(src)
	if len(pairs) == 0 {
		return
	}
	at := map[int]*extract.Literal{}
	for i := range lits {
		at[lits[i].Start] = &lits[i]
	}
	for _, pr := range pairs {
		k, v := at[pr.Key], at[pr.Value]
		if k == nil || v == nil || spanAt(offline, k.Start) >= 0 {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(k.Value))
		if name == "" || strings.Contains(name, extract.Placeholder) {
			continue
		}
		p := param{lit: k, key: name, value: v.Value, start: 0, end: len(k.Value), valueAt: func(i int) int { return i }, text: fmt.Sprintf("(%q, %q)", k.Value, v.Value)}
		s.setting(p, "sqlx.PgConnectOptions.options", rules.SettingUse{Param: name, Value: v.Value})
	}
}
