package pooler

import (
	"strings"
	"testing"
)

func TestParseUserlist(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Userlist
		wantErr string
	}{
		{"empty", "", Userlist{}, ""},
		{"plain and hashes", `"alice" "secret"
"bob" "md5ab5a8b3c7e8b3b0a2f5e2a0d3b3c1f4e" extra stuff
; comment
# comment

"carol" "SCRAM-SHA-256$4096:c2FsdA==$a2V5:a2V5"
`, Userlist{"alice": "secret", "bob": "md5ab5a8b3c7e8b3b0a2f5e2a0d3b3c1f4e", "carol": "SCRAM-SHA-256$4096:c2FsdA==$a2V5:a2V5"}, ""},
		{"doubled quotes", `"a""b" "p""w"`, Userlist{`a"b`: `p"w`}, ""},
		{"tabs and spaces", "  \"u\"\t \"p\"  ", Userlist{"u": "p"}, ""},
		{"empty password", `"u" ""`, Userlist{"u": ""}, ""},
		{"unquoted name", `alice "x"`, nil, "line 1"},
		{"missing password", `"alice"`, nil, "line 1"},
		{"unterminated password", "\"a\" \"b\"\n\"c\" \"secret", nil, "line 2"},
		{"empty name", `"" "x"`, nil, "empty user name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUserlist(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%q: got %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func FuzzParseUserlist(f *testing.F) {
	f.Add(`"alice" "secret"`)
	f.Add("\"a\"\"b\" \"md5abc\" x\n; c\n\"x\" \"SCRAM-SHA-256$1:AA==$AA==:AA==\"")
	f.Add(`"unterminated`)
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUserlist(strings.NewReader(s))
		if err == nil {
			for name := range u {
				if name == "" {
					t.Fatal("empty user name accepted")
				}
			}
		}
	})
}
