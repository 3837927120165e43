package rules_test

import (
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// TestHandle covers what targets do about kinds of state, named by the
// effect kind that makes them, and about tracked and other parameters.
func TestHandle(t *testing.T) {
	tests := []struct {
		target rules.Target
		kind   effects.Kind
		param  string // HandleParam when set
		want   rules.Handling
	}{
		{rules.PgBouncer, 0, "timezone", rules.Repairs},
		{rules.PgBouncer, 0, "work_mem", rules.Breaks},
		{rules.PgBouncer, effects.AdvisoryLock, "", rules.Breaks},
		{rules.PgDog, 0, "work_mem", rules.Repairs},
		{rules.PgDog, effects.AdvisoryLock, "", rules.Pins},
		{rules.PgDog, effects.Listen, "", rules.Repairs},
		{rules.PgDog, effects.CreateTemp, "", rules.Breaks},
		{rules.RDSProxy, effects.DeclareHold, "", rules.Pins},
		{rules.RDSProxy, effects.BackendIdentity, "", rules.Breaks},
		{rules.PgPoolCheck, effects.SetRole, "", rules.Repairs},
		{rules.PgPoolCheck, effects.Prepare, "", rules.Pins},
		{rules.PgPoolCheck, effects.Load, "", rules.Pins},
		{rules.PgPoolCheck, effects.DiscardAll, "", rules.Repairs},
		{rules.PgPoolCheck, effects.CurrVal, "", rules.Breaks},
		{rules.Generic, 0, "timezone", rules.Breaks},
	}
	for _, tt := range tests {
		var got rules.Handling
		var note string
		if tt.param != "" {
			got, note = tt.target.HandleParam(tt.param)
		} else {
			got, note = tt.target.Handle(tt.kind)
		}
		if got != tt.want || note == "" {
			t.Errorf("%s %v %q: got %v %q, want %v", tt.target, tt.kind, tt.param, got, note, tt.want)
		}
	}
}
