package effects

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// RoutineInfo is what a routine's definition shows it does to session
// state (Routine).
type RoutineInfo struct {
	// Clean: its body changes no session state (the routines it calls
	// aside).
	Clean bool
	// Opaque: what it does cannot be read from its text (another
	// language than sql and plpgsql, a PL/pgSQL body that does not
	// compile, dynamic SQL, a parameter whose name is only known at run
	// time).
	Opaque bool
	// Params are the run-time parameters it may set, lower-case.
	Params []string
	// Calls are the routines it calls that are not built in.
	Calls []string
}

// Routine tells the pooler what calling a routine can do to session
// state, from its definition (the CREATE statement pg_get_functiondef
// returns), with the PL/pgSQL and SQL-body analysis scan uses. A
// malformed definition is opaque.
func Routine(def string) RoutineInfo {
	opaque := RoutineInfo{Opaque: true}
	res, err := sqlparse.Parse(def)
	if err != nil || len(res.Stmts) != 1 {
		return opaque
	}
	f := res.Stmts[0].Stmt.GetCreateFunctionStmt()
	if f == nil {
		return opaque
	}
	lang, body := sqlparse.RoutineOptions(f.Options)
	switch strings.ToLower(lang) {
	case "sql":
	case "plpgsql":
		if _, err := pg.ParsePlPgSqlToJSON(def); err != nil {
			return opaque
		}
		if containsWord(strings.ToLower(body), "execute") {
			return opaque
		}
	default:
		return opaque
	}
	st := &sqlparse.Statement{Start: 0, End: len(def), Text: def, Node: res.Stmts[0].Stmt}
	var effs []Effect
	for _, in := range sqlparse.Bodies([]byte(def), st, nil) {
		if in.Node == nil || in.Node.GetDoStmt() != nil {
			return opaque
		}
		effs = changesAndRoutines(effs, &in, false)
	}
	info := RoutineInfo{Clean: true}
	for _, e := range effs {
		switch {
		case e.Kind == CallRoutine:
			info.Calls = append(info.Calls, e.Name)
			continue
		case e.Kind == SetParam || e.Kind == ResetParam:
			if e.Name == "" {
				info.Opaque = true
			} else {
				info.Params = append(info.Params, e.Name)
			}
		}
		info.Clean = false
	}
	return info
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

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
