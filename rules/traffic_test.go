package rules_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestTrafficChecks runs each traffic rule's check over single events:
// what it reports (rule:severity, or nothing), a part of the message and
// the key that groups it.
func TestTrafficChecks(t *testing.T) {
	tests := []struct {
		name   string
		target rules.Target
		ev     rules.TrafficEvent
		want   string // rule:severity, "" for no finding
		msg    string
		key    string
	}{
		{"tracked startup parameter", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "TimeZone", Value: "UTC"}, "", "", ""},
		{"user", rules.Generic, rules.TrafficEvent{Kind: rules.StartupParam, Name: "user", Value: "app"}, "", "", ""},
		{"search_path", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "search_path", Value: "app"}, "startup-parameter:error", "search_path=app: PgBouncer refuses", "param:search_path"},
		{"search_path behind pgdog", rules.PgDog, rules.TrafficEvent{Kind: rules.StartupParam, Name: "search_path", Value: "app"}, "startup-parameter:info", "PgDog treats it like SET", "param:search_path"},
		{"tracked options", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "options", Value: "-c TimeZone=UTC"}, "", "", ""},
		{"untracked options", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "options", Value: "-c statement_timeout=5s"}, "startup-parameter:error", "does not track (statement_timeout)", "param:options"},
		{"tracked options with an escaped blank", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "options", Value: `-c application_name=web\ app --TimeZone=Europe/Paris`}, "", "", ""},
		{"untracked options with an escaped blank", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "options", Value: `-c TimeZone=UTC -c search_path=app,\ public`}, "startup-parameter:error", "does not track (search_path):", "param:options"},
		{"options with another switch", rules.PgBouncer, rules.TrafficEvent{Kind: rules.StartupParam, Name: "options", Value: "-c TimeZone=UTC -B 100"}, "startup-parameter:error", "does not track (-B, 100):", "param:options"},
		{"named reuse", rules.Generic, rules.TrafficEvent{Kind: rules.NamedReuse, Name: "stmtcache_1f2e"}, "protocol-prepare:error", `"stmtcache_…" (named by pgx's statement cache)`, ""},
		{"named reuse behind pgbouncer", rules.PgBouncer, rules.TrafficEvent{Kind: rules.NamedReuse, Name: "a12"}, "protocol-prepare:info", "(named by Rails (ActiveRecord))", ""},
		{"deallocate in the same transaction", rules.Generic, rules.TrafficEvent{Kind: rules.ProtocolDeallocate, Name: "_pg3_0", SameTx: true}, "", "", ""},
		{"deallocate behind pgbouncer", rules.PgBouncer, rules.TrafficEvent{Kind: rules.ProtocolDeallocate, Name: "_pg3_0", SameTx: true}, "protocol-prepare:error", "SQL DEALLOCATE of the protocol-level statement \"_pg3_…\" (named by psycopg 3)", `DEALLOCATE "_pg3_…"`},
		{"deallocate behind rds-proxy", rules.RDSProxy, rules.TrafficEvent{Kind: rules.ProtocolDeallocate, Name: "_pg3_0"}, "", "", ""},
		{"unnamed reuse", rules.Generic, rules.TrafficEvent{Kind: rules.UnnamedReuse}, "unnamed-statement-reuse:error", "no pooler setting fixes this", ""},
		{"unnamed reuse behind pgpoolcheck", rules.PgPoolCheck, rules.TrafficEvent{Kind: rules.UnnamedReuse}, "unnamed-statement-reuse:info", "re-parses", ""},
		{"short idle", rules.Generic, rules.TrafficEvent{Kind: rules.IdleTransaction, Idle: time.Second, Threshold: time.Second}, "", "", ""},
		{"long idle", rules.Generic, rules.TrafficEvent{Kind: rules.IdleTransaction, Idle: 3 * time.Second, Threshold: time.Second, UntilEnd: true}, "idle-in-transaction:warning", "more than 1s until the session ended", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found []rules.TrafficFinding
			pass := rules.NewTrafficPass(nil, tt.target, &tt.ev, func(f rules.TrafficFinding) { found = append(found, f) })
			for _, r := range rules.All() {
				if r.Traffic != nil {
					pass.Rule = r
					pass.Run()
				}
			}
			if tt.want == "" {
				if len(found) > 0 {
					t.Fatalf("got %s:%s %q, want nothing", found[0].Rule.ID, found[0].Severity, found[0].Message)
				}
				return
			}
			if len(found) != 1 {
				t.Fatalf("got %d findings, want one %s", len(found), tt.want)
			}
			f := found[0]
			if got := f.Rule.ID + ":" + f.Severity.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !strings.Contains(f.Message, tt.msg) {
				t.Errorf("message %q does not say %q", f.Message, tt.msg)
			}
			if f.Key != tt.key {
				t.Errorf("key %q, want %q", f.Key, tt.key)
			}
			if f.Fix == "" {
				t.Error("no fix")
			}
		})
	}
}
