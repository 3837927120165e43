package yamlpos

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestError(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		// Parser errors: yaml/v3 names the line where the block or flow
		// began, counted from 0; the fault is elsewhere.
		{"mis-indented key under comments", "# one\n# two\nrules:\n  x: y\n z: w\n",
			"line 5 column 2: did not find expected key"},
		{"sequence item in a mapping", "a: 1\n- b\n", "line 2 column 1: did not find expected key"},
		{"unclosed flow sequence", "target: pgbouncer\nrules:\n  session-set: warning\n  foo: [a\n",
			"line 4 column 8: did not find expected ',' or ']'"},
		// Scanner errors: yaml/v3's line is right and kept.
		{"tab", "target: pgbouncer\n\tfail_on: error\n", "line 2: found a tab character that violates indentation"},
		{"mapping value", "# c\nrules:\n  x: y\n   z: w\n", "line 4: mapping values are not allowed in this context"},
		{"missing colon", "a: b\nc\nd: e\n", "line 2: could not find expected ':'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n yaml.Node
			err := yaml.Unmarshal([]byte(tc.src), &n)
			if err == nil {
				t.Fatal("yaml/v3 parsed it")
			}
			if got := Error([]byte(tc.src), err); got == nil || got.Error() != tc.want {
				t.Errorf("Error(%q) = %v, want %q (yaml/v3 said %q)", tc.src, got, tc.want, err)
			}
		})
	}
	if Error(nil, nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}
