package analyzer

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// facts are what one statement does to, or reads from, session state, as
// analyze follows it across a session's transactions. They depend only on
// the statement's text, so they are computed once per distinct text. The
// rules package decides whether a statement is a hazard; facts only say
// which names it touches, so that analyze can tell whether the state
// crossed a transaction boundary.
type facts struct {
	sets      []string // session-scoped parameters set (lower-case; "?" when unknown)
	resets    []string // parameters reset to their default
	resetAll  bool
	role      bool // SET ROLE / SET SESSION AUTHORIZATION / set_config('role', …, false)
	resetRole bool
	reads     []string // SHOW name, current_setting('name')

	locks     []string // advisory lock keys taken at session level
	unlocks   []string
	unlockAll bool

	listens     []string
	unlistens   []string
	unlistenAll bool

	temps    []tempMade // temporary objects created
	drops    []string   // tables, views and sequences dropped
	rels     []string   // relations referenced (unqualified or in pg_temp)
	holds    []string   // DECLARE … WITH HOLD
	cursors  []string   // FETCH, MOVE and CLOSE of a named cursor
	closeAll bool

	prepares   []string
	executes   []string
	deallocs   []string
	deallocAll bool

	nextvals []string // sequence keys (see rules.ConstKey)
	currvals []string
	lastval  bool
	insert   bool // an INSERT may call nextval() through a column default

	discardAll, discardTemp bool
	rollback                bool // ROLLBACK (not TO SAVEPOINT) or ABORT
	rollbackTo              bool // ROLLBACK TO SAVEPOINT: the transaction goes on after an error
	ends                    bool // COMMIT, ROLLBACK or PREPARE TRANSACTION (without AND CHAIN)
}

type tempMade struct {
	name       string
	commitDrop bool
}

// trafficFuncs are the functions whose calls facts looks at.
var trafficFuncs = []string{
	"set_config", "current_setting",
	"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
	"pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all",
	"nextval", "currval", "lastval",
}

// roleParams are the settings that are the role.
func roleParam(name string) bool { return name == "role" || name == "session_authorization" }

// statementFacts computes the facts of a parsed statement.
func statementFacts(st *rules.Stmt) *facts {
	f := &facts{}
	if st.Node == nil {
		return f
	}
	switch n := st.Node.Node.(type) {
	case *pg.Node_VariableSetStmt:
		setFacts(f, n.VariableSetStmt)
	case *pg.Node_VariableShowStmt:
		f.reads = append(f.reads, strings.ToLower(n.VariableShowStmt.Name))
	case *pg.Node_ListenStmt:
		f.listens = append(f.listens, n.ListenStmt.Conditionname)
	case *pg.Node_UnlistenStmt:
		if n.UnlistenStmt.Conditionname == "" {
			f.unlistenAll = true
		} else {
			f.unlistens = append(f.unlistens, n.UnlistenStmt.Conditionname)
		}
	case *pg.Node_DeclareCursorStmt:
		if n.DeclareCursorStmt.Options&0x20 != 0 { // CURSOR_OPT_HOLD
			f.holds = append(f.holds, n.DeclareCursorStmt.Portalname)
		}
	case *pg.Node_FetchStmt:
		f.cursors = append(f.cursors, n.FetchStmt.Portalname)
	case *pg.Node_ClosePortalStmt:
		if n.ClosePortalStmt.Portalname == "" {
			f.closeAll = true
		} else {
			f.cursors = append(f.cursors, n.ClosePortalStmt.Portalname)
		}
	case *pg.Node_PrepareStmt:
		f.prepares = append(f.prepares, n.PrepareStmt.Name)
	case *pg.Node_DeallocateStmt:
		if n.DeallocateStmt.Name == "" {
			f.deallocAll = true
		} else {
			f.deallocs = append(f.deallocs, n.DeallocateStmt.Name)
		}
	case *pg.Node_DiscardStmt:
		switch n.DiscardStmt.Target {
		case pg.DiscardMode_DISCARD_ALL:
			f.discardAll = true
		case pg.DiscardMode_DISCARD_TEMP:
			f.discardTemp = true
		}
	case *pg.Node_DropStmt:
		switch n.DropStmt.RemoveType {
		case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_SEQUENCE,
			pg.ObjectType_OBJECT_MATVIEW, pg.ObjectType_OBJECT_FOREIGN_TABLE:
			for _, o := range n.DropStmt.Objects {
				if name, ok := tempName(o.GetList().GetItems()); ok {
					f.drops = append(f.drops, name)
				}
			}
		}
	case *pg.Node_TransactionStmt:
		k := n.TransactionStmt.Kind
		f.rollback = k == pg.TransactionStmtKind_TRANS_STMT_ROLLBACK
		f.rollbackTo = k == pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO
		switch k {
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK, pg.TransactionStmtKind_TRANS_STMT_PREPARE:
			f.ends = !n.TransactionStmt.Chain
		}
	case *pg.Node_UpdateStmt:
		// UPDATE pg_settings SET setting = … changes a setting as
		// set_config(…, false) does.
		if rv := n.UpdateStmt.Relation; rv != nil && strings.EqualFold(rv.Relname, "pg_settings") &&
			(rv.Schemaname == "" || strings.EqualFold(rv.Schemaname, "pg_catalog")) {
			f.sets = append(f.sets, "?")
		}
	case *pg.Node_InsertStmt:
		f.insert = true
	}
	if _, name, onCommit, ok := rules.CreatedTemp(st.Node); ok {
		f.temps = append(f.temps, tempMade{name, onCommit == pg.OnCommitAction_ONCOMMIT_DROP})
	}
	rules.Walk(st.Node, func(m protoreflect.Message) bool {
		switch n := m.Interface().(type) {
		case *pg.RangeVar:
			if n.Schemaname == "" || isPgTemp(n.Schemaname) {
				f.rels = append(f.rels, n.Relname)
			}
		case *pg.ExecuteStmt:
			f.executes = append(f.executes, n.Name)
		}
		return true
	})
	for _, c := range st.CallsNamed(trafficFuncs...) {
		callFacts(f, c)
	}
	return f
}

func isPgTemp(schema string) bool {
	s := strings.ToLower(schema)
	return s == "pg_temp" || strings.HasPrefix(s, "pg_temp_")
}

// tempName returns the name of a possibly qualified object when it may be
// a temporary one (unqualified or in pg_temp).
func tempName(items []*pg.Node) (string, bool) {
	switch len(items) {
	case 1:
		return items[0].GetString_().GetSval(), true
	case 2:
		if isPgTemp(items[0].GetString_().GetSval()) {
			return items[1].GetString_().GetSval(), true
		}
	}
	return "", false
}

func setFacts(f *facts, vs *pg.VariableSetStmt) {
	name := strings.ToLower(vs.Name)
	switch vs.Kind {
	case pg.VariableSetKind_VAR_RESET_ALL:
		f.resetAll = true
		return
	case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
		if roleParam(name) {
			f.resetRole = true
		} else {
			f.resets = append(f.resets, name)
		}
		return
	case pg.VariableSetKind_VAR_SET_MULTI:
		if name != "session characteristics" {
			return // SET TRANSACTION …
		}
	}
	if vs.IsLocal {
		return
	}
	if roleParam(name) {
		if isNone(vs) {
			f.resetRole = true
		} else {
			f.role = true
		}
		return
	}
	f.sets = append(f.sets, name)
}

// isNone reports SET ROLE NONE.
func isNone(vs *pg.VariableSetStmt) bool {
	if len(vs.Args) != 1 {
		return false
	}
	s, ok := rules.ConstString(vs.Args[0])
	return ok && strings.EqualFold(s, "none")
}

func callFacts(f *facts, c rules.Call) {
	switch c.Name {
	case "set_config":
		if len(c.Args) != 3 {
			return
		}
		if local, ok := rules.ConstBool(c.Args[2]); ok && local {
			return
		}
		name, ok := rules.ConstString(c.Args[0])
		name = strings.ToLower(name)
		switch {
		case !ok:
			f.sets = append(f.sets, "?")
		case roleParam(name):
			f.role = true
		default:
			f.sets = append(f.sets, name)
		}
	case "current_setting":
		if len(c.Args) > 0 {
			if name, ok := rules.ConstString(c.Args[0]); ok {
				f.reads = append(f.reads, strings.ToLower(name))
			}
		}
	case "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared":
		f.locks = append(f.locks, advisoryKey(c))
	case "pg_advisory_unlock", "pg_advisory_unlock_shared":
		f.unlocks = append(f.unlocks, advisoryKey(c))
	case "pg_advisory_unlock_all":
		f.unlockAll = true
	case "nextval":
		f.nextvals = append(f.nextvals, seqArg(c))
	case "currval":
		f.currvals = append(f.currvals, seqArg(c))
	case "lastval":
		f.lastval = true
	}
}

// argKey renders an argument for pairing: a constant, the same query
// parameter ($n), or "?" for anything else.
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

// advisoryKey renders the key of an advisory lock call; the one-bigint
// and two-int4 key spaces stay apart.
func advisoryKey(c rules.Call) string {
	keys := make([]string, len(c.Args))
	for i, a := range c.Args {
		keys[i] = argKey(a)
	}
	return strings.Join(keys, ",")
}

func seqArg(c rules.Call) string {
	if len(c.Args) != 1 {
		return "?"
	}
	k := argKey(c.Args[0])
	return strings.ToLower(k)
}
