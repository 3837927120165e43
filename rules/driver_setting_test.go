package rules_test

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestDriverSettings checks that each driver setting is listed by one
// rule, which words it behind every target without a placeholder left and
// documents it in explain.
func TestDriverSettings(t *testing.T) {
	owner := map[string]string{}
	for _, r := range rules.All() {
		doc := r.ExplainSettings()
		if len(r.Settings) > 0 && !strings.HasPrefix(doc, "## Driver settings\n") {
			t.Errorf("explain %s has no driver settings section", r.ID)
		}
		for _, s := range r.Settings {
			if o, ok := owner[s.Setting]; ok {
				t.Errorf("setting %s listed by %s and %s", s.Setting, o, r.ID)
			}
			owner[s.Setting] = r.ID
			if s.Library == "" || s.Text == "" || s.Does == "" {
				t.Errorf("%s: setting %s is not fully described", r.ID, s.Setting)
			}
			if !strings.Contains(strings.Join(strings.Fields(doc), " "), "`"+s.Text+"`") {
				t.Errorf("explain %s does not show %s", r.ID, s.Setting)
			}
			for _, target := range rules.Targets {
				f, ok := r.CheckSetting(target, s.Setting, s.Example)
				if !ok || f.Rule != r || f.Message == "" || f.Fix == "" || strings.ContainsAny(f.Message+f.Fix, "{}") {
					t.Errorf("%s behind %s: setting %s reported as %+v", r.ID, target, s.Setting, f)
				}
			}
		}
	}
	if _, ok := rules.SessionSet.CheckSetting(rules.Generic, "pgx.RuntimeParams", rules.SettingUse{Param: "search_path"}); ok {
		t.Error("session-set reports a setting it does not list")
	}
}

// TestStartupSettingsTracked checks that a parameter every pooler keeps per
// client is no finding, unless it travels in options to a pooler that
// does not read them.
func TestStartupSettingsTracked(t *testing.T) {
	r := rules.StartupParameter
	tz := rules.SettingUse{Key: "TimeZone", Param: "timezone", Value: "UTC", Raw: "-c timezone=UTC"}
	if f, ok := r.CheckSetting(rules.PgBouncer, "pgx.RuntimeParams", tz); ok {
		t.Errorf("pgx's RuntimeParams timezone behind pgbouncer: %+v", f)
	}
	if f, ok := r.CheckSetting(rules.Generic, "connstring.param", tz); ok {
		t.Errorf("a connection string's timezone behind generic: %+v", f)
	}
	if f, ok := r.CheckSetting(rules.PgBouncer, "connstring.options", tz); ok {
		t.Errorf("-c timezone in options behind PgBouncer 1.20+: %+v", f)
	}
	f, ok := r.CheckSetting(rules.PgBouncerLegacy, "connstring.options", tz)
	if !ok || f.Severity != rules.Error || !strings.Contains(f.Message, "PgBouncer before 1.20 does not read options") ||
		!strings.Contains(f.Fix, "listing options in PgBouncer's ignore_startup_parameters") {
		t.Errorf("-c timezone in options behind PgBouncer before 1.20: %+v", f)
	}
	f, ok = r.CheckSetting(rules.PgBouncer, "pgjdbc.currentSchema", rules.SettingUse{Value: "app"})
	if want := "currentSchema=app makes pgjdbc send startup parameter search_path=app: PgBouncer refuses"; !ok || !strings.HasPrefix(f.Message, want) ||
		f.Severity != rules.Error || !strings.HasPrefix(f.Fix, "set search_path per role or database instead") {
		t.Errorf("pgjdbc's currentSchema: %+v, want a message starting %q", f, want)
	}
}
