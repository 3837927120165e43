package effects

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// UserCalls returns the calls in n of functions and procedures that are
// not built in (as userCalls decides), in tree order, each name once.
// Statements that only store calls (definitions, plans) return nil.
func UserCalls(n *pg.Node) []UserCall {
	if n == nil || !RunsCalls(n) {
		return nil
	}
	st := &Stmt{Statement: &sqlparse.Statement{Node: n}}
	return userCalls(st.Calls())
}

// userCalls keeps the calls of routines that are not built in: qualified
// with a schema other than pg_catalog, or unqualified and not the name of
// a function in pg_catalog (builtinFuncs). A user function that overloads
// a built-in name with its own argument types is taken for the built-in.
func userCalls(calls []Call) []UserCall {
	var out []UserCall
	for _, c := range calls {
		if c.Name == "" || c.Schema == "pg_catalog" || c.Schema == "" && builtinFuncs[c.Name] {
			continue
		}
		if slices.ContainsFunc(out, func(o UserCall) bool { return o.Name == c.Name && o.Schema == c.Schema }) {
			continue
		}
		out = append(out, UserCall{Name: c.Name, Schema: c.Schema, Location: c.Location})
	}
	return out
}

// Builtin reports whether name (lower-case, without schema) is the name
// of a function in pg_catalog.
func Builtin(name string) bool { return builtinFuncs[name] }

// BuiltinName reports whether the lower-case bytes b are the name of a
// function in pg_catalog, without allocating.
func BuiltinName(b []byte) bool { return builtinFuncs[string(b)] }
