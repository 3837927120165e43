package classify

import (
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// readNames are the functions whose calls read session state.
var readNames = []string{"current_setting", "currval", "lastval", "nextval"}

// Statement returns everything one parsed statement does to session state
// and reads of it: the effects Classify reports (with Local ones, and
// without the body of a DO block) and the read and transaction kinds
// (ReadParam and the kinds after it).
func Statement(st *sqlparse.Statement) []Effect {
	if st.Node == nil {
		return nil
	}
	out := stmtEffects(nil, st, false)
	return readEffects(out, st)
}

// readEffects appends what st reads of session state and how it ends a
// transaction.
func readEffects(out []Effect, st *sqlparse.Statement) []Effect {
	n := st.Node
	switch x := n.Node.(type) {
	case *pg.Node_VariableShowStmt:
		out = append(out, Effect{Kind: ReadParam, Name: strings.ToLower(x.VariableShowStmt.Name)})
	case *pg.Node_FetchStmt:
		out = append(out, Effect{Kind: UseCursor, Name: x.FetchStmt.Portalname})
	case *pg.Node_InsertStmt:
		out = append(out, Effect{Kind: Insert})
	case *pg.Node_TransactionStmt:
		switch t := x.TransactionStmt; t.Kind {
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			out = append(out, Effect{Kind: TxRollback})
			if !t.Chain {
				out = append(out, Effect{Kind: TxEnd})
			}
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
			out = append(out, Effect{Kind: TxRollbackTo})
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_PREPARE:
			if !t.Chain {
				out = append(out, Effect{Kind: TxEnd})
			}
		}
	}
	rules.Walk(n, func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg.RangeVar:
			if x.Schemaname == "" || isPgTemp(x.Schemaname) {
				out = append(out, Effect{Kind: Relation, Name: x.Relname})
			}
		case *pg.ExecuteStmt:
			out = append(out, Effect{Kind: ExecutePrepared, Name: x.Name})
		}
		return true
	})
	if !runsCalls(n) {
		return out
	}
	calls := rules.NewStmt(st, readNames).CallsNamed(readNames...)
	slices.SortStableFunc(calls, func(a, b rules.Call) int { return int(a.Location) - int(b.Location) })
	for _, c := range calls {
		switch c.Name {
		case "current_setting":
			if len(c.Args) > 0 {
				if name, ok := rules.ConstString(c.Args[0]); ok {
					out = append(out, Effect{Kind: ReadParam, Name: strings.ToLower(name)})
				}
			}
		case "nextval", "currval":
			k := NextVal
			if c.Name == "currval" {
				k = CurrVal
			}
			arg := "?"
			if len(c.Args) == 1 {
				arg = strings.ToLower(argKey(c.Args[0]))
			}
			out = append(out, Effect{Kind: k, Arg: arg})
		case "lastval":
			out = append(out, Effect{Kind: LastVal})
		}
	}
	return out
}

// argKey renders an argument for pairing statements: a constant, the same
// query parameter ($n), or "?" for anything else.
func argKey(n *pg.Node) string {
	if k, ok := rules.ConstKey(n); ok {
		return k
	}
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	if p := n.GetParamRef(); p != nil {
		return "$" + strconv.Itoa(int(p.Number))
	}
	return "?"
}

// argsKey renders the arguments of an advisory lock call (its key); the
// one-bigint and two-int4 key spaces stay apart.
func argsKey(args []*pg.Node) string {
	keys := make([]string, len(args))
	for i, a := range args {
		keys[i] = argKey(a)
	}
	return strings.Join(keys, ",")
}
