package pgparams

import (
	"reflect"
	"strings"
	"testing"
)

// TestOptions reads options strings as the server would: each switch's
// setting or error, and its range in the string.
func TestOptions(t *testing.T) {
	lower := func(name string) bool { return name == strings.ToLower(name) }
	for _, tc := range []struct {
		name  string
		in    string
		valid func(string) bool
		want  []string // name=value@text, or !error@text
	}{
		{"empty", "", nil, nil},
		{"blanks", " \t\n\v\f\r", nil, nil},
		{"-c and a word", "-c a=1", nil, []string{"a=1@-c a=1"}},
		{"-c and its setting in one word", "-cb=2", nil, []string{"b=2@-cb=2"}},
		{"long switch, dashes read as underscores", "--c-d=3", nil, []string{"c_d=3@--c-d=3"}},
		{"case kept", "-c TimeZone=UTC", nil, []string{"TimeZone=UTC@-c TimeZone=UTC"}},
		{"blanks around and between", "  -cb=2\t--c-d=3 ", nil, []string{"b=2@-cb=2", "c_d=3@--c-d=3"}},
		{"escaped space", `-c search_path=a\ b`, nil, []string{`search_path=a b@-c search_path=a\ b`}},
		{"escaped backslash", `-c x=a\\b`, nil, []string{`x=a\b@-c x=a\\b`}},
		{"escaped tab and letter", "-c x=a\\\t\\b", nil, []string{"x=a\tb@-c x=a\\\t\\b"}},
		{"trailing backslash dropped", `-c x=a\`, nil, []string{`x=a@-c x=a\`}},
		{"escaped -c is still -c", `\-c x=1`, nil, []string{`x=1@\-c x=1`}},
		{"first = cuts", "-c x=a=b", nil, []string{"x=a=b@-c x=a=b"}},
		{"empty value", "-c x=", nil, []string{"x=@-c x="}},
		{"-c takes the next word whatever it is", "-c -B", nil, []string{`!invalid setting "-B"@-c -B`}},
		{"-c at the end", "-c a=1 -c", nil, []string{"a=1@-c a=1", "!-c without a setting@-c"}},
		{"another switch", "-B 100 -c a=1", nil, []string{`!only -c name=value settings are supported, not "-B"@-B`, `!only -c name=value settings are supported, not "100"@100`, "a=1@-c a=1"}},
		{"no value", "-c novalue", nil, []string{`!invalid setting "novalue"@-c novalue`}},
		{"no name", "-c =1", nil, []string{`!invalid setting "=1"@-c =1`}},
		{"a lone --", "--", nil, []string{`!invalid setting ""@--`}},
		{"a lone backslash is an empty word", `\`, nil, []string{`!only -c name=value settings are supported, not ""@\`}},
		{"name refused", "-c Ab=1 -c ab=2", lower, []string{`!invalid setting "Ab=1"@-c Ab=1`, "ab=2@-c ab=2"}},
		{"name checked with underscores", "--a-b=1", func(n string) bool { return !strings.Contains(n, "-") }, []string{"a_b=1@--a-b=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, o := range Options(tc.in, tc.valid) {
				if o.Err != nil {
					if o.Name != "" || o.Value != "" {
						t.Errorf("%+v: a setting with an error", o)
					}
					got = append(got, "!"+o.Err.Error()+"@"+tc.in[o.Start:o.End])
					continue
				}
				got = append(got, o.Name+"="+o.Value+"@"+tc.in[o.Start:o.End])
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Options(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Setting
		err  string
	}{
		{"", nil, ""},
		{"-c a=1 --b-c=2", []Setting{{"a", "1"}, {"b_c", "2"}}, ""},
		{"-c a=1 -B 100 -c", nil, `only -c name=value settings are supported, not "-B"`},
		{"-c a=1 -c", nil, "-c without a setting"},
	} {
		got, err := Settings(tc.in, nil)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Settings(%q) = %v, %q; want %v, %q", tc.in, got, msg, tc.want, tc.err)
		}
	}
}

// escape writes s so that the server reads it as one word of an options
// string.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzOptions reads untrusted options strings: ranges stay in the string,
// in order and apart; a setting has a name without dashes; and the
// settings, written back escaped, read the same.
func FuzzOptions(f *testing.F) {
	for _, s := range []string{"", "-c a=1", "-cb=2 --c-d=3", `-c search_path=a\ b`, `-c x=a\`, "-c", "-B 100", "-c =1", `\`, "--", "-c\\\t -c\\ a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		opts := Options(in, nil)
		var sets []Setting
		var back []string
		end := 0
		for _, o := range opts {
			if o.Start < end || o.Start >= o.End || o.End > len(in) {
				t.Fatalf("Options(%q): range %d-%d after %d", in, o.Start, o.End, end)
			}
			end = o.End
			if o.Err != nil {
				continue
			}
			if o.Name == "" || strings.Contains(o.Name, "-") {
				t.Fatalf("Options(%q): setting %q", in, o.Name)
			}
			sets = append(sets, Setting{o.Name, o.Value})
			back = append(back, "-c "+escape(o.Name+"="+o.Value))
		}
		got, err := Settings(strings.Join(back, " "), nil)
		if err != nil || !reflect.DeepEqual(got, sets) {
			t.Fatalf("Options(%q) = %q; written back, %q reads %q, %v", in, sets, strings.Join(back, " "), got, err)
		}
		if _, err := Settings(in, nil); (err == nil) != (len(sets) == len(opts)) {
			t.Fatalf("Settings(%q): error %v with %d of %d switches settings", in, err, len(sets), len(opts))
		}
	})
}
