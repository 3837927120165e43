package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"fail-on", "target", "rules", "include", "exclude", "languages"}
	for _, tc := range []struct {
		word, want string
		ok         bool
	}{
		{"fail_on", "fail-on", true},
		{"FailOn", "fail-on", true},
		{"targt", "target", true},
		{"rule", "rules", true},
		{"exclud", "exclude", true},
		{"languages", "languages", true},
		{"xyz", "", false},
		{"", "", false},
		{"ab", "", false},
	} {
		got, ok := Closest(tc.word, keys)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tc.word, got, ok, tc.want, tc.ok)
		}
	}
	if h := Hint("pool_sise", []string{"pool_size", "pool_mode"}); h != " (did you mean pool_size?)" {
		t.Errorf("Hint = %q", h)
	}
}
