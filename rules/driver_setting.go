package rules

import (
	"strconv"
	"strings"
)

// DriverSetting is a connection setting, a configuration key or a call of
// a driver's API that makes the driver or framework keep session state on
// the server connection without SQL in the code: a startup parameter it
// sends, statements it prepares under names, a SET it runs on each new
// connection. The scan finds the setting in connection strings,
// configuration files and application code (package analyzer names each
// by Setting and gives its values, SettingUse); the rule that lists it in
// its Settings reports it, in these words (CheckSetting), and explain
// documents it.
type DriverSetting struct {
	// Setting is the analyzer's name of the setting: driver and key
	// ("pgjdbc.prepareThreshold", "Npgsql.MaxAutoPrepare") or call
	// ("JDBC.setSchema").
	Setting string
	// Library is the driver or framework, with its language.
	Library string
	// Text is how explain shows the setting.
	Text string
	// When says, for explain, when it counts (empty: always).
	When string
	// Does is the finding's message: what the setting makes the driver
	// do. The rule adds what that means behind the target. In Does and
	// Fix, {key} stands for the key or name as written ({qkey} quoted),
	// {value} for its value ({qvalue} quoted, {qshort} quoted and cut
	// shorter), {param} for the parameter it sets, {raw} for the setting
	// as written in an options string, {n} for a count, {recv} for the
	// receiver of a call and {level} for an isolation level.
	Does string
	// Example is a use of the setting, which explain and the tests fill
	// Does with (empty when Does has no placeholders).
	Example SettingUse
	// Param is the parameter the setting sets, when it is always the
	// same one; otherwise the use names it (SettingUse.Param).
	Param string
	// Options is set when the setting travels in startup parameter
	// options (-c name=value).
	Options bool
	// Fix replaces the fix the rule gives when set.
	Fix string
}

// SettingUse is one use of a driver setting the scan found: the values
// the finding's wording quotes.
type SettingUse struct {
	// Key is the key or name as written; Value its value.
	Key, Value string
	// Param is the parameter it sets (lower-case), when the setting does
	// not say (DriverSetting.Param).
	Param string
	// Raw is the setting as written in an options string (-c name=value).
	Raw string
	// N is a count (a prepare threshold).
	N int
	// Recv is the receiver of a call as written (conn.setSchema).
	Recv string
	// Level is an isolation level (SERIALIZABLE).
	Level string
}

// settingJudge is how a rule judges a driver setting that sets param
// behind target t: the severity, the message (starting with what the
// setting does), a fix when the setting gives none, and ok false when
// the target keeps the state per client and nothing is to report.
type settingJudge func(t Target, s *DriverSetting, param, what string) (sev Severity, msg, fix string, ok bool)

// CheckSetting reports what rule r finds in a use u of driver setting
// setting behind target t; ok is false when r does not list the setting,
// or the target keeps what it sets per client.
func (r *Rule) CheckSetting(t Target, setting string, u SettingUse) (f CallFinding, ok bool) {
	for i := range r.Settings {
		s := &r.Settings[i]
		if s.Setting != setting {
			continue
		}
		param := s.Param
		if param == "" {
			param = u.Param
		}
		fill := u.replacer(param).Replace
		sev, msg, fix, ok := r.judgeSetting(t, s, param, fill(s.Does))
		if !ok {
			return CallFinding{}, false
		}
		if s.Fix != "" {
			fix = fill(s.Fix)
		}
		if fix == "" {
			fix = r.Fix
		}
		return CallFinding{Rule: r, Severity: sev, Message: msg, Fix: fix}, true
	}
	return CallFinding{}, false
}

// replacer fills the placeholders of DriverSetting.Does and Fix.
func (u SettingUse) replacer(param string) *strings.Replacer {
	return strings.NewReplacer(
		"{key}", u.Key, "{qkey}", strconv.Quote(u.Key),
		"{value}", Clip(u.Value, 60), "{qvalue}", strconv.Quote(u.Value), "{qshort}", strconv.Quote(Clip(u.Value, 40)),
		"{param}", param, "{raw}", Clip(u.Raw, 80), "{n}", strconv.Itoa(u.N),
		"{recv}", u.Recv, "{level}", u.Level,
	)
}

// ExplainSettings renders the driver settings of r for explain
// (Markdown), or "" when it lists none.
func (r *Rule) ExplainSettings() string {
	if len(r.Settings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(wrap("In connection strings, configuration files and application code the scan also reports these settings and calls, which make the driver keep the state without SQL in the code; each finding says what the setting does, as in the example given, then what that means behind the target:", "") + "\n\n")
	for _, s := range r.Settings {
		item := "`" + s.Text + "` (" + s.Library
		if s.When != "" {
			item += ", " + s.When
		}
		param := s.Param
		if param == "" {
			param = s.Example.Param
		}
		item += "): " + s.Example.replacer(param).Replace(s.Does) + "."
		b.WriteString(wrap("- "+item, "  ") + "\n")
	}
	return "## Driver settings\n\n" + b.String()
}
