package engine

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

func TestJudge(t *testing.T) {
	set := []StateEffect{{Kind: effects.SetParam, Name: "work_mem", Rule: "session-set", Fix: "use SET LOCAL"}}
	tests := []struct {
		policy   Policy
		typ      byte
		effs     []StateEffect
		attached bool
		want     Verdict
	}{
		{PolicyReject, 'Q', set, false, RefuseNow},
		{PolicyReject, 'Q', set, true, RaiseOnServer},
		{PolicyReject, 'P', set, false, RefuseParse},
		{PolicyReject, 'P', set, true, RefuseParse},
		{PolicyReject, 'Q', nil, false, Pass},
		{PolicyPreserve, 'Q', set, false, Pass},
		{PolicyReset, 'Q', set, true, Pass},
		{PolicyAllow, 'P', set, false, Pass},
	}
	for _, tt := range tests {
		if got := judge(tt.policy, tt.typ, tt.effs, tt.attached); got != tt.want {
			t.Errorf("judge(%s, %q, %d effects, attached %v) = %d, want %d", tt.policy, tt.typ, len(tt.effs), tt.attached, got, tt.want)
		}
	}
}

func TestApplyEffects(t *testing.T) {
	listen := []StateEffect{{Kind: effects.Listen, Name: "ch"}}
	unlisten := []StateEffect{{Kind: effects.UnlistenAll}}
	var c Client
	c.policy = PolicyPreserve
	if pinned, ok := c.applyEffects(listen); !ok || !pinned {
		t.Fatalf("preserve, LISTEN: pinned %v, kept %v", pinned, ok)
	}
	if pinned, ok := c.applyEffects(unlisten); !ok || pinned {
		t.Fatalf("preserve, UNLISTEN *: pinned %v, kept %v", pinned, ok)
	}
	r := Client{policy: PolicyReset}
	if pinned, ok := r.applyEffects(listen); ok || pinned || !r.Session.Dirty() {
		t.Fatalf("reset, LISTEN: pinned %v, kept %v, dirty %v", pinned, ok, r.Session.Dirty())
	}
	a := Client{policy: PolicyAllow}
	if _, ok := a.applyEffects(listen); ok || a.Session.Dirty() {
		t.Fatal("allow records state")
	}
}

func TestRefusal(t *testing.T) {
	effs := []StateEffect{{Kind: effects.SetParam, Rule: "session-set", Fix: "use SET LOCAL, or it's a leak"}}
	var e pgproto3.ErrorResponse
	b := Refusal(effs)
	if err := e.Decode(b[HeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if e.Code != "0A000" || e.Severity != "ERROR" || !strings.Contains(e.Message, "rule session-set") || e.Hint != effs[0].Fix {
		t.Fatalf("%+v", e)
	}
	q := RaiseQuery(effs)
	if !strings.HasPrefix(q, "DO $pgpoolcheck$BEGIN RAISE EXCEPTION USING ERRCODE = '0A000'") || !strings.Contains(q, "HINT = 'use SET LOCAL, or it''s a leak'") {
		t.Fatal(q)
	}
	effs[0].Fix = ""
	if err := e.Decode(Refusal(effs)[HeaderLen:]); err != nil || e.Hint != "" {
		t.Fatalf("no fix: %+v %v", e, err)
	}
}

// Undoing statements are never refused: DROP TABLE IF EXISTS of a plain
// table (pgbench -i) is classified as a temporary table's drop, which
// makes no state.
func TestJudgeUndoingPasses(t *testing.T) {
	drop := []StateEffect{{Kind: effects.DropTemp, Name: "pgbench_accounts", Rule: "temp-table"}}
	if v := judge(PolicyReject, 'Q', drop, false); v != Pass {
		t.Errorf("DROP under reject: %v, want Pass", v)
	}
	mixed := append(drop, StateEffect{Kind: effects.SetParam, Name: "search_path", Rule: "session-set"})
	if v := judge(PolicyReject, 'Q', mixed, false); v != RefuseNow {
		t.Errorf("DROP and SET under reject: %v, want RefuseNow", v)
	}
	if r := string(Refusal(mixed)); !strings.Contains(r, "session-set") {
		t.Errorf("the refusal names %q, want the SET's rule", r)
	}
	// Which kinds make state, for every kind: TestKinds.
}
