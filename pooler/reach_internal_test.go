package pooler

import (
	"slices"
	"testing"
	"time"
)

// TestReachWords: the words and operators of a text that reach routines,
// case-insensitive, anywhere in the text, identifiers cut at 63 bytes.
func TestReachWords(t *testing.T) {
	long := "t" + string(slices.Repeat([]byte("x"), 70))
	rs, err := parseReach([]string{`[["v", "s.f"], ["Mixed", "s.g"], ["===", "s.eq"], ["upper", "s.upper"], ["` + long[:63] + `", "s.long"], ["db", ""]]`}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text string
		want []string
	}{
		{"SELECT * FROM plain WHERE a = 1", nil},
		{"SELECT * FROM V", []string{"s.f"}},
		{`SELECT * FROM "v" JOIN mixed USING (a)`, []string{"s.f", "s.g"}},
		{"SELECT 1 OPERATOR(s.===) 1", []string{"s.eq"}},
		{"SELECT 1 ==== 1", []string{"s.eq"}},
		{"SELECT 1 == 1", nil},
		{"SELECT upper('x'), v2, xv, v_1", []string{"s.upper"}},
		{"SELECT 1v, 2 FROM t -- v", []string{"s.f"}},
		{"SELECT * FROM " + long, []string{"s.long"}},
		{"INSERT INTO db VALUES (1)", []string{"DO (opaque)"}},
		{"SELECT $v$ v $v$", []string{"s.f"}},
	}
	for _, tc := range cases {
		var got []string
		rs.reached(tc.text, func(r string) {
			if !slices.Contains(got, r) {
				got = append(got, r)
			}
		})
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("reached(%q) = %v, want %v", tc.text, got, want)
		}
	}
	if _, err := parseReach([]string{"not json"}, 0, time.Now()); err == nil {
		t.Error("a malformed answer was accepted")
	}
}
