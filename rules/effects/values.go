package effects

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// lockKey reads an advisory lock key: one bigint, or two int4 encoded as
// int64(a)<<32 | int64(uint32(b)) with pair set.
func lockKey(args []*pg.Node) (key int64, pair, known bool) {
	switch len(args) {
	case 1:
		k, ok := constInt(args[0])
		return k, false, ok
	case 2:
		a, okA := constInt(args[0])
		b, okB := constInt(args[1])
		if !okA || !okB || a != int64(int32(a)) || b != int64(int32(b)) {
			return 0, true, false
		}
		return a<<32 | int64(uint32(b)), true, true
	}
	return 0, false, false
}

// constInt reads an integer constant (also written as a string or cast).
func constInt(n *pg.Node) (int64, bool) {
	c := Constant(n)
	var s string
	switch {
	case c.GetIval() != nil:
		return int64(c.GetIval().Ival), true
	case c.GetFval() != nil:
		s = c.GetFval().Fval
	case c.GetSval() != nil:
		s = strings.TrimSpace(c.GetSval().Sval)
	default:
		return 0, false
	}
	k, err := strconv.ParseInt(s, 10, 64)
	return k, err == nil
}

// argsValue renders SET arguments as SQL text for "SET name TO …":
// constants directly, anything else (SET TIME ZONE INTERVAL '…' HOUR TO
// MINUTE) through the deparser.
func argsValue(args []*pg.Node) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		c := a.GetAConst()
		switch {
		case c == nil:
			return deparseValue(args)
		case c.GetSval() != nil:
			parts = append(parts, quoteLiteral(c.GetSval().Sval))
		case c.GetIval() != nil:
			parts = append(parts, strconv.Itoa(int(c.GetIval().Ival)))
		case c.GetFval() != nil:
			parts = append(parts, c.GetFval().Fval)
		case c.GetBoolval() != nil:
			parts = append(parts, strconv.FormatBool(c.GetBoolval().Boolval))
		default:
			return deparseValue(args)
		}
	}
	return strings.Join(parts, ", ")
}

// deparseValue renders SET arguments with pg_query's deparser.
func deparseValue(args []*pg.Node) string {
	const name = "pgpoolcheck_value"
	tree := &pg.ParseResult{Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_VariableSetStmt{
		VariableSetStmt: &pg.VariableSetStmt{Kind: pg.VariableSetKind_VAR_SET_VALUE, Name: name, Args: args},
	}}}}}
	s, err := pg.Deparse(tree)
	prefix := "SET " + name + " TO "
	if err != nil || !strings.HasPrefix(s, prefix) {
		return ""
	}
	return s[len(prefix):]
}

// quoteLiteral quotes s as an SQL string constant (E” when it holds a
// backslash, so that it reads the same whatever
// standard_conforming_strings is).
func quoteLiteral(s string) string {
	if strings.ContainsRune(s, '\\') {
		return "E'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// listQuoted are the parameters for which SET quotes each list element as
// an identifier (GUC_LIST_QUOTE), while set_config takes the raw list.
var listQuoted = map[string]bool{
	"search_path": true, "temp_tablespaces": true,
	"session_preload_libraries": true, "local_preload_libraries": true, "shared_preload_libraries": true,
}

// rawValue renders the raw string v that set_config (or UPDATE
// pg_settings) gives parameter name as SQL text for "SET name TO …". For
// list parameters the raw text is a list of identifiers, which SET reads
// the same way when each is a plain or double-quoted identifier; other
// lists cannot be rendered exactly and give "".
func rawValue(name, v string) string {
	if !listQuoted[name] {
		return quoteLiteral(v)
	}
	if strings.TrimSpace(v) == "" {
		return "''"
	}
	for _, item := range splitList(v) {
		item = strings.TrimSpace(item)
		if !plainIdent(item) && !quotedIdent(item) {
			return ""
		}
	}
	return strings.TrimSpace(v)
}

// splitList splits a list at commas outside double quotes.
func splitList(v string) []string {
	var out []string
	quoted, from := false, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, v[from:i])
				from = i + 1
			}
		}
	}
	return append(out, v[from:])
}

func plainIdent(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return !reservedWords[strings.ToLower(s)]
}

// reservedWords are words that cannot stand for a list element in SET
// without quotes.
var reservedWords = map[string]bool{"default": true, "local": true, "from": true, "to": true, "true": true, "false": true, "on": true, "null": true, "all": true}

func quotedIdent(s string) bool {
	if len(s) < 3 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	inner := s[1 : len(s)-1]
	return strings.Count(inner, `"`)%2 == 0 && !strings.Contains(strings.ReplaceAll(inner, `""`, ""), `"`)
}

// UserCall is a call of a routine that is not built in.
type UserCall struct {
	// Name is the routine's name without schema, lower-case; Schema its
	// schema qualification, lower-case, empty when none.
	Name, Schema string
	// Location is the call's node location (relative to the statement's
	// text).
	Location int32
}
