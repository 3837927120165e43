package pgtest

import "testing"

func TestOptional(t *testing.T) {
	t.Setenv("CI", "")
	var skipped bool
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Optional(t, "demo", "install demo", "not found")
	})
	optional.Lock()
	how, n := optional.groups["demo"], optional.counts["demo"]
	delete(optional.groups, "demo") // not reported at the end of this run
	optional.Unlock()
	if !skipped || how != "install demo" || n != 1 {
		t.Fatalf("skipped %v, recorded %q ×%d", skipped, how, n)
	}
}
