package sqlparse

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// bodyKinds returns, for every statement in the routine bodies of src, its
// node type and the body line it is reported on.
func bodyKinds(t *testing.T, src string) []string {
	t.Helper()
	b := []byte(src)
	lines := NewLineIndex(b)
	var out []string
	for _, c := range Split(b).Chunks {
		for _, s := range ParseChunk(b, c) {
			if s.Err != nil {
				t.Fatalf("%q: %v", s.Source(b), s.Err)
			}
			for _, st := range Bodies(b, &s, nil) {
				kind := strings.TrimPrefix(fmt.Sprintf("%T", st.Node.Node), "*pg_query.Node_")
				line := lines.Position(st.Start).Line
				out = append(out, fmt.Sprintf("%d:%s", line, kind))
			}
		}
	}
	return out
}

func TestBodiesDynamicExecute(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"compiled, several statements",
			"CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  EXECUTE 'SET search_path = x; LISTEN ch';\nEND;\n$$;",
			[]string{"3:VariableSetStmt", "3:ListenStmt"}},
		{"fallback, several statements",
			"CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  EXECUTE 'SET search_path = x; LISTEN ch';\n  v := 1;\nEND;\n$$;",
			[]string{"3:VariableSetStmt", "3:ListenStmt", "4:SelectStmt"}},
		{"fallback, INTO and USING are not SQL text",
			"DO $$\nBEGIN\n  EXECUTE 'LISTEN a' || quote_ident(v) INTO w USING 'LISTEN b';\nEND\n$$;",
			[]string{"3:ListenStmt"}},
		{"fallback, EXECUTE inside a loop header piece",
			"DO $$\nBEGIN\n  FOR r IN SELECT 1 LOOP EXECUTE 'UNLISTEN *'; END LOOP;\nEND\n$$;",
			[]string{"3:UnlistenStmt"}},
		{"fallback, FOR IN EXECUTE",
			"DO $$\nBEGIN\n  FOR r IN EXECUTE 'SELECT pg_advisory_lock(1)' LOOP\n  END LOOP;\n  v := 1;\nEND\n$$;",
			[]string{"3:SelectStmt", "5:SelectStmt"}},
		{"fallback, run-time text only",
			"DO $$\nBEGIN\n  EXECUTE v_sql;\nEND\n$$;",
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bodyKinds(t, tt.src); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
