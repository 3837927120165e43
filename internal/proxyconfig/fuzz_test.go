package proxyconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

func addTestdata(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParsePgBouncerINI checks that no input panics the ini reader and that
// what it returns is consistent.
func FuzzParsePgBouncerINI(f *testing.F) {
	addTestdata(f, "*.ini")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ignored, err := ParsePgBouncerINI(b)
		if err != nil {
			if s != nil || ignored != nil {
				t.Fatal("settings returned with an error")
			}
			return
		}
		for _, k := range s.Set() {
			if _, ok := s.Get(k); !ok {
				t.Fatalf("key %s set but not readable", k)
			}
		}
		// Every [databases] entry, its auth settings included, is an
		// entry the pooler takes as it is (no text in between).
		if v, ok := s.Value("databases"); ok {
			dbs := v.([]pooler.DatabaseEntry)
			if err := pooler.LookupSetting("databases").Check(dbs); err != nil {
				t.Fatal(err)
			}
			for _, e := range dbs {
				if e.Name == "" || e.PoolSize < 0 || e.MaxDBConnections < 0 || e.Name == "*" && e.DBName != "" {
					t.Fatalf("databases entry %+v", e)
				}
			}
		}
	})
}

// FuzzParseYAML checks that no input panics the YAML reader.
func FuzzParseYAML(f *testing.F) {
	addTestdata(f, "*.yaml")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseYAML(b)
		if err == nil && s == nil {
			t.Fatal("nil settings without an error")
		}
	})
}
