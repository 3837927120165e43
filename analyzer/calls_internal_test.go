package analyzer

import (
	"slices"
	"strings"
	"testing"
)

func TestCallNames(t *testing.T) {
	tests := []struct {
		src           string
		calls, define []string
	}{
		{"SELECT sneaky();", []string{"sneaky"}, nil},
		{"CALL Public.Lock_It (1)", []string{"lock_it"}, nil},
		{"SELECT \"Quoted\"(1)", []string{"quoted"}, nil},
		{"CREATE OR REPLACE FUNCTION app.sneaky() RETURNS void AS $$ BEGIN PERFORM inner_fn(); END $$",
			[]string{"inner_fn"}, []string{"sneaky"}},
		{"create procedure p\n(a int) language sql as 'select 1'", nil, []string{"p"}},
		{"DROP FUNCTION sneaky(); GRANT EXECUTE ON FUNCTION x.y(int) TO app", nil, []string{"sneaky", "y"}},
		// A word between FUNCTION and the name is something else.
		{"SELECT function_count(), f(x)", []string{"function_count", "f"}, nil},
		{`db.Exec("SELECT sneaky()")`, []string{"exec", "sneaky"}, nil},
		{"SELECT 1 + (2)", nil, nil},
		{"SELECT " + strings.Repeat("a", 80) + "()", nil, nil},
	}
	for _, tt := range tests {
		var calls, define []string
		callNames([]byte(tt.src), func(name []byte, def bool) {
			if def {
				define = append(define, string(name))
			} else {
				calls = append(calls, string(name))
			}
		})
		if !slices.Equal(calls, tt.calls) || !slices.Equal(define, tt.define) {
			t.Errorf("%q: calls %q defines %q, want %q and %q", tt.src, calls, define, tt.calls, tt.define)
		}
	}
	if got := definedName([]byte("CREATE FUNCTION s.Sneaky (x int)")); got != "sneaky" {
		t.Errorf("definedName: %q", got)
	}
}

// FuzzCallNames checks that any bytes are tokenized without a panic and
// that every name reported is a lower-case identifier found in the input.
func FuzzCallNames(f *testing.F) {
	f.Add([]byte("CREATE FUNCTION a.b() AS $$ SELECT c(1) $$; SELECT \"D\"(2)"))
	f.Add([]byte("x(\xff(\"("))
	f.Fuzz(func(t *testing.T, src []byte) {
		lower := asciiLower(src)
		callNames(src, func(name []byte, def bool) {
			if len(name) == 0 || string(asciiLower(name)) != string(name) {
				t.Fatalf("name %q is not a lower-case identifier", name)
			}
			if !strings.Contains(string(lower), string(name)) {
				t.Fatalf("name %q not in %q", name, src)
			}
		})
	})
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
