package pgparams

import "testing"

func TestTracked(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"timezone", "TimeZone"},
		{"DATESTYLE", "DateStyle"},
		{"application_name", "application_name"},
		{"search_path", ""},
		{"", ""},
	} {
		if got := Canonical(tc.name); got != tc.want {
			t.Errorf("Canonical(%q) = %q, want %q", tc.name, got, tc.want)
		}
		if got := IsTracked(tc.name); got != (tc.want != "") {
			t.Errorf("IsTracked(%q) = %v", tc.name, got)
		}
	}
}
