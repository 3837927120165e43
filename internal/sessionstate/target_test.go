package sessionstate_test

import (
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// TestPgPoolCheckTarget ties what scan says pgpoolcheck does about each
// kind of state (rules.PgPoolCheck) to what the pooler does under its
// default policy, preserve: for every kind that makes state
// (engine.Makes), state the pooler replays is what the target repairs,
// state that pins the client (engine.Pins) is what it pins. Handle names
// roles and session authorizations by SetRole.
func TestPgPoolCheckTarget(t *testing.T) {
	named := func(k effects.Kind) effects.Kind {
		switch k {
		case effects.ResetRole, effects.SessionAuth, effects.ResetSessionAuth:
			return effects.SetRole
		}
		return k
	}
	made := 0
	for k := effects.Kind(1); !strings.HasPrefix(k.String(), "kind("); k++ {
		if !engine.Makes(k) {
			continue
		}
		made++
		want, action := rules.Repairs, "replays"
		if engine.Pins(k) {
			want, action = rules.Pins, "pins"
		}
		if got, note := rules.PgPoolCheck.Handle(named(k)); got != want {
			t.Errorf("%v: the pooler %s it, the pgpoolcheck target says %q", k, action, note)
		}
	}
	if made == 0 {
		t.Fatal("no kind makes state")
	}
}
