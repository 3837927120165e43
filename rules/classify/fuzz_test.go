package classify

import "testing"

// FuzzClassify checks that classification never panics, and that the
// pre-filter is sound: a text it turns away has no effects when parsed.
func FuzzClassify(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.sql)
	}
	for _, s := range ordinary {
		f.Add(s)
	}
	c := New(Options{CacheSize: 64})
	f.Fuzz(func(t *testing.T, sql string) {
		r := c.Classify(sql)
		if r.ParseError && len(r.Effects) > 0 {
			t.Fatalf("effects with a parse error: %q", sql)
		}
		if !MayAffect(sql) {
			if len(r.Effects) > 0 {
				t.Fatalf("effects for a text the pre-filter turns away: %q", sql)
			}
			if full := classify(sql); len(full.Effects) > 0 {
				t.Fatalf("pre-filter turns away %q, which has effects %s", sql, describeAll(full))
			}
		}
	})
}
