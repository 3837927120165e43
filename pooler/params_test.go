package pooler

import "testing"

// TestParamSets: clients with the same tracked values share one set, a
// change makes another set and leaves the old one as it was, and sets
// beyond maxParamSets are the client's own.
func TestParamSets(t *testing.T) {
	var ps paramSets
	a := ps.intern(map[string]string{"TimeZone": "UTC", "DateStyle": "ISO, MDY"})
	b := ps.intern(map[string]string{"DateStyle": "ISO, MDY", "TimeZone": "UTC"})
	if a != b {
		t.Fatal("two clients with the same values got two sets")
	}
	if got := ps.with(a, "TimeZone", "UTC"); got != a {
		t.Fatal("setting a parameter to its value made another set")
	}
	c := ps.with(a, "TimeZone", "Europe/Paris")
	if c == a || a.m["TimeZone"] != "UTC" || c.m["TimeZone"] != "Europe/Paris" || c.m["DateStyle"] != "ISO, MDY" {
		t.Fatalf("with changed the shared set or lost a value: a=%v c=%v", a.m, c.m)
	}
	if c.sig == a.sig || c.sig != paramsSig(c.m) {
		t.Fatal("the signature does not follow the values")
	}
	if d := ps.with(a, "TimeZone", "Europe/Paris"); d != c {
		t.Fatal("the same change from the same set made a second set")
	}
	if e := ps.with(&paramSet{}, "TimeZone", "UTC"); e.m["TimeZone"] != "UTC" || len(e.m) != 1 {
		t.Fatalf("with on an empty set: %v", e.m)
	}
	ps.n.Store(maxParamSets)
	f := ps.intern(map[string]string{"TimeZone": "Asia/Tokyo"})
	if g := ps.intern(map[string]string{"TimeZone": "Asia/Tokyo"}); g == f {
		t.Fatal("a set beyond maxParamSets was shared")
	}
	if h := ps.intern(map[string]string{"TimeZone": "UTC", "DateStyle": "ISO, MDY"}); h != a {
		t.Fatal("a set kept before the bound is no longer shared")
	}
}
