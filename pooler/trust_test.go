package pooler

import "testing"

func TestParseTrust(t *testing.T) {
	tr, err := parseTrust([]string{" Similarity ", "App.Audit", "extension:PostGIS", "extension: uuid-ossp"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"similarity": true, "public.similarity": true, "app.audit": true, "audit": false,
		"other.audit": false, "st_distance": false,
	} {
		if got := tr.trusted(name); got != want {
			t.Errorf("trusted(%q) = %v, want %v", name, got, want)
		}
	}
	if !tr.extensions["postgis"] || !tr.extensions["uuid-ossp"] {
		t.Errorf("extensions %v", tr.extensions)
	}
	for _, bad := range []string{"", "extension:", ".f", "f."} {
		if _, err := parseTrust([]string{bad}); err == nil {
			t.Errorf("parseTrust(%q) accepted", bad)
		}
	}
	if _, err := New(Config{Listen: "127.0.0.1:1", Upstream: "postgres://x@localhost/db", TrustedRoutines: []string{"extension:"}}); err == nil {
		t.Error("New accepted a trusted_routines entry that names no extension")
	}
}
