package rules_test

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestDriverAPIs checks that each driver API is listed by one rule, which
// reports a call of it behind every target and documents it in explain.
func TestDriverAPIs(t *testing.T) {
	owner := map[string]string{}
	for _, r := range rules.All() {
		doc := r.ExplainAPIs()
		for _, a := range r.APIs {
			if o, ok := owner[a.API]; ok {
				t.Errorf("API %s listed by %s and %s", a.API, o, r.ID)
			}
			owner[a.API] = r.ID
			if a.Library == "" || a.Text == "" || a.Does == "" || a.Breaks == "" {
				t.Errorf("%s: API %s is not fully described", r.ID, a.API)
			}
			typ, _, _ := strings.Cut(a.API, ".")
			if !strings.Contains(doc, "`"+strings.ReplaceAll(a.Text, "{recv}", typ)+"`") {
				t.Errorf("explain %s does not show %s", r.ID, a.API)
			}
			for _, target := range rules.Targets {
				f, ok := r.CheckCall(target, a.API, "conn")
				if !ok || f.Rule != r || f.Message == "" || f.Fix == "" || strings.Contains(f.Message+f.Text, "{recv}") {
					t.Errorf("%s behind %s: call of %s reported as %+v", r.ID, target, a.API, f)
				}
				if f.Severity > a.Severity {
					t.Errorf("%s behind %s: %s raised to %s", r.ID, target, a.API, f.Severity)
				}
			}
		}
	}
	if _, ok := rules.Listen.CheckCall(rules.Generic, "PgAdvisoryLock.acquire", "lock"); ok {
		t.Error("listen reports an API it does not list")
	}
	f, _ := rules.Listen.CheckCall(rules.Generic, "NpgsqlConnection.Wait", "_conn")
	if want := "_conn.Wait() waits for notifications on the server connection that ran LISTEN: outside a transaction"; !strings.HasPrefix(f.Message, want) || f.Text != "_conn.Wait(…)" || f.Severity != rules.Error {
		t.Errorf("got %+v, want a message starting %q", f, want)
	}
}
