package effects

import (
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// Reads returns what the statement reads of session state and how it
// ends a transaction (ReadParam and the kinds after it), except the
// relations it names (Relations).
func (st *Stmt) Reads() []Effect {
	if st.readsDone {
		return st.reads
	}
	st.readsDone = true
	if st.Node == nil {
		return nil
	}
	var out []Effect
	n := st.Node
	switch x := n.Node.(type) {
	case *pg.Node_VariableShowStmt:
		out = append(out, Effect{Kind: ReadParam, Name: strings.ToLower(x.VariableShowStmt.Name), Location: -1})
	case *pg.Node_FetchStmt:
		out = append(out, Effect{Kind: UseCursor, Name: x.FetchStmt.Portalname, Location: -1})
	case *pg.Node_InsertStmt:
		out = append(out, Effect{Kind: Insert, Location: -1})
	case *pg.Node_CopyStmt:
		if x.CopyStmt.IsFrom {
			out = append(out, Effect{Kind: Insert, Location: -1})
		}
	case *pg.Node_TransactionStmt:
		switch t := x.TransactionStmt; t.Kind {
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			out = append(out, Effect{Kind: TxRollback, Location: -1})
			if !t.Chain {
				out = append(out, Effect{Kind: TxEnd, Location: -1})
			}
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
			out = append(out, Effect{Kind: TxRollbackTo, Location: -1})
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_PREPARE:
			if !t.Chain {
				out = append(out, Effect{Kind: TxEnd, Location: -1})
			}
		}
	case *pg.Node_ExecuteStmt, *pg.Node_ExplainStmt, *pg.Node_CreateTableAsStmt:
		// EXECUTE of an SQL prepared statement stands alone, under EXPLAIN
		// or under CREATE TABLE AS (even when EXPLAIN only plans it).
		st.walk()
		out = append(out, st.executes...)
	}
	calls := st.CallsNamed(readFuncs...)
	slices.SortStableFunc(calls, func(a, b Call) int { return int(a.Location) - int(b.Location) })
	for _, c := range calls {
		e := Effect{Via: ViaCall, Func: c.Name, Location: c.Location}
		switch c.Name {
		case "current_setting":
			if len(c.Args) == 0 {
				continue
			}
			name, ok := ConstString(c.Args[0])
			if !ok {
				continue
			}
			e.Kind, e.Name = ReadParam, strings.ToLower(name)
		case "nextval", "currval", "setval":
			e.Kind = map[string]Kind{"nextval": NextVal, "currval": CurrVal, "setval": SetVal}[c.Name]
			e.Arg = "?"
			if c.Name != "setval" && len(c.Args) == 1 || c.Name == "setval" && len(c.Args) >= 2 {
				e.Arg = strings.ToLower(argKey(c.Args[0]))
				if s, ok := ConstString(c.Args[0]); ok {
					e.Raw, e.Name = s, sequenceName(s)
				}
			}
		case "lastval":
			e.Kind = LastVal
		default: // pg_backend_pid, inet_client_addr, inet_client_port
			e.Kind, e.Name = BackendIdentity, c.Name
		}
		out = append(out, e)
	}
	st.reads = out
	return out
}

// Relations returns a Relation read for each relation the statement names
// unqualified or in pg_temp (a temporary one, if the session made one of
// that name), in tree order.
func (st *Stmt) Relations() []Effect {
	st.walk()
	out := make([]Effect, len(st.rels))
	for i, rv := range st.rels {
		out[i] = Effect{Kind: Relation, Name: rv.Relname, Location: rv.Location}
	}
	return out
}

// sequenceName reduces the text a sequence function gets to the
// sequence's name, lower-case, without quotes or schema:
// 'public.orders_id_seq' and '"orders_id_seq"' name orders_id_seq.
func sequenceName(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, `"`, ""))
	if k := strings.LastIndexByte(s, '.'); k >= 0 {
		s = s[k+1:]
	}
	return s
}

// argKey renders an argument for pairing statements: a constant, the same
// query parameter ($n), or "?" for anything else.
func argKey(n *pg.Node) string {
	if k, ok := ConstKey(n); ok {
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
