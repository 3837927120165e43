package classify

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// Routine tells the pooler whether calling a routine can change session
// state, from its definition (the CREATE statement pg_get_functiondef
// returns). clean is true only when the body shows all it does and none
// of it is an effect: LANGUAGE sql or plpgsql, a PL/pgSQL body that
// compiles, no EXECUTE (dynamic SQL), no DO block, and no statement with
// an effect of this package. calls are the routines the body calls that
// are not built in: the routine is clean only if they are too. A routine
// in another language, or one that changes state, is not clean (what it
// did is then read from the server).
func Routine(def string) (clean bool, calls []string) {
	res, err := sqlparse.Parse(def)
	if err != nil || len(res.Stmts) != 1 {
		return false, nil
	}
	f := res.Stmts[0].Stmt.GetCreateFunctionStmt()
	if f == nil {
		return false, nil
	}
	lang, body := sqlparse.RoutineOptions(f.Options)
	switch strings.ToLower(lang) {
	case "sql":
	case "plpgsql":
		if _, err := pg.ParsePlPgSqlToJSON(def); err != nil {
			return false, nil
		}
		if containsWord(strings.ToLower(body), "execute") {
			return false, nil
		}
	default:
		return false, nil
	}
	st := &sqlparse.Statement{Start: 0, End: len(def), Text: def, Node: res.Stmts[0].Stmt}
	var effs []Effect
	for _, in := range sqlparse.Bodies([]byte(def), st, nil) {
		if in.Node == nil || in.Node.GetDoStmt() != nil {
			return false, nil
		}
		effs = stmtEffects(effs, &in, false)
	}
	for _, e := range effs {
		if e.Kind != CallRoutine {
			return false, nil
		}
		calls = append(calls, e.Name)
	}
	return true, calls
}

// containsWord reports whether lower-case text holds w as a whole word.
func containsWord(text, w string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], w)
		if k < 0 {
			return false
		}
		at := i + k
		end := at + len(w)
		if (at == 0 || !isWordByte(text[at-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		i = at + 1
	}
}
