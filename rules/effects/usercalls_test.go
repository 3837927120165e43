package effects

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

func TestUserCalls(t *testing.T) {
	tests := []struct {
		sql  string
		want []string // schema.name or name
	}{
		{"SELECT sneaky()", []string{"sneaky"}},
		{"CALL ops.purge(1)", []string{"ops.purge"}},
		{"SELECT set_config('a.b', 'c', false), now(), pg_catalog.f(), lower(x) FROM t", nil},
		{"SELECT a(), b(a()), a() FROM t WHERE c(1) > 0", []string{"a", "b", "c"}},
		{"INSERT INTO t SELECT x() FROM s", []string{"x"}},
		// Definitions store calls; EXPLAIN without ANALYZE only plans them.
		{"CREATE VIEW v AS SELECT f()", nil},
		{"CREATE FUNCTION g() RETURNS int LANGUAGE sql AS 'SELECT f()'", nil},
		{"EXPLAIN SELECT f()", nil},
		{"EXPLAIN ANALYZE SELECT f()", []string{"f"}},
	}
	for _, tt := range tests {
		res, err := sqlparse.Parse(tt.sql)
		if err != nil || len(res.Stmts) != 1 {
			t.Fatalf("%q: %v", tt.sql, err)
		}
		var got []string
		for _, c := range UserCalls(res.Stmts[0].Stmt) {
			if c.Location < 0 || int(c.Location) >= len(tt.sql) {
				t.Errorf("%q: call %s at %d", tt.sql, c.Name, c.Location)
			}
			if c.Schema != "" {
				got = append(got, fmt.Sprintf("%s.%s", c.Schema, c.Name))
			} else {
				got = append(got, c.Name)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.sql, got, tt.want)
		}
	}
}
