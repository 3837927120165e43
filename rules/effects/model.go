package effects

import (
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// advisory describes the session-level advisory lock functions. The
// transaction-level ones (pg_advisory_xact_lock…) leave nothing behind.
var advisory = map[string]Effect{
	"pg_advisory_lock":            {Kind: AdvisoryLock},
	"pg_advisory_lock_shared":     {Kind: AdvisoryLock, Shared: true},
	"pg_try_advisory_lock":        {Kind: AdvisoryLock, Try: true},
	"pg_try_advisory_lock_shared": {Kind: AdvisoryLock, Shared: true, Try: true},
	"pg_advisory_unlock":          {Kind: AdvisoryUnlock},
	"pg_advisory_unlock_shared":   {Kind: AdvisoryUnlock, Shared: true},
	"pg_advisory_unlock_all":      {Kind: AdvisoryUnlockAll},
}

// transactionParams are the parameters that SET changes for the current
// transaction only.
var transactionParams = map[string]bool{
	"transaction_isolation": true, "transaction_read_only": true, "transaction_deferrable": true,
}

// changeFuncs are the functions whose calls change session state;
// readFuncs those whose calls read it.
var (
	changeFuncs = func() []string {
		names := []string{"set_config"}
		for n := range advisory {
			names = append(names, n)
		}
		slices.Sort(names)
		return names
	}()
	readFuncs = []string{"current_setting", "currval", "lastval", "nextval", "setval",
		"pg_backend_pid", "inet_client_addr", "inet_client_port"}
)

// Funcs are the built-in functions whose calls the model looks at,
// lower-case.
var Funcs = append(slices.Clone(changeFuncs), readFuncs...)

var discardKinds = map[pg.DiscardMode]Kind{
	pg.DiscardMode_DISCARD_ALL: DiscardAll, pg.DiscardMode_DISCARD_TEMP: DiscardTemp,
	pg.DiscardMode_DISCARD_PLANS: DiscardPlans, pg.DiscardMode_DISCARD_SEQUENCES: DiscardSequences,
}

// Query returns what the query string sql (one or more statements, as a
// client sends them) does to session state: the Changes and Routines of
// each statement, and for a DO block, which runs its body at once, a
// CallRoutine named DOBlock or OpaqueDOBlock followed by the effects of
// its body. parseError is set when sql does not parse: PostgreSQL then
// runs none of it.
func Query(sql string) (out []Effect, parseError bool) {
	res, err := sqlparse.Parse(sql)
	if err != nil {
		return nil, true
	}
	for _, raw := range res.Stmts {
		start := int(raw.StmtLocation)
		end := len(sql)
		if raw.StmtLen > 0 {
			end = start + int(raw.StmtLen)
		}
		st := &sqlparse.Statement{Start: start, End: end, Text: sql, Node: raw.Stmt}
		out = changesAndRoutines(out, st, false)
		if raw.Stmt.GetDoStmt() != nil {
			name := DOBlock
			if doOpaque(st) {
				name = OpaqueDOBlock
			}
			out = append(out, Effect{Kind: CallRoutine, Name: name, Location: -1})
			for _, in := range sqlparse.Bodies(nil, st, nil) {
				if in.Node != nil {
					out = changesAndRoutines(out, &in, strings.Contains(in.Text, sqlparse.DynamicPlaceholder))
				}
			}
		}
	}
	return out, false
}

// changesAndRoutines appends the Changes and Routines of st. dynamic marks
// a statement rebuilt from dynamic SQL, whose placeholders stand for
// values only known at run time.
func changesAndRoutines(out []Effect, s *sqlparse.Statement, dynamic bool) []Effect {
	st := NewStmt(s)
	from := len(out)
	out = append(out, st.Changes()...)
	out = append(out, st.Routines()...)
	if dynamic {
		for i := range out[from:] {
			e := &out[from+i]
			if strings.Contains(e.Name, sqlparse.DynamicPlaceholder) {
				e.Name, e.Dynamic = "", true
			}
			if strings.Contains(e.Value, sqlparse.DynamicPlaceholder) {
				e.Value, e.Raw, e.Dynamic = "", "", true
			}
		}
	}
	return out
}

// Changes returns what the statement changes in session state, in the
// order it does it. Calls of routines that are not built in are
// Routines.
func (st *Stmt) Changes() []Effect {
	if st.changesDone {
		return st.changes
	}
	st.changesDone = true
	if st.Node == nil {
		return nil
	}
	var out []Effect
	n := st.Node
	switch x := n.Node.(type) {
	case *pg.Node_VariableSetStmt:
		out = setEffects(out, x.VariableSetStmt)
	case *pg.Node_ListenStmt:
		out = append(out, Effect{Kind: Listen, Name: x.ListenStmt.Conditionname, Location: -1})
	case *pg.Node_UnlistenStmt:
		out = append(out, named(Unlisten, UnlistenAll, x.UnlistenStmt.Conditionname))
	case *pg.Node_DeclareCursorStmt:
		if d := x.DeclareCursorStmt; d.Options&CursorOptHold != 0 {
			out = append(out, Effect{Kind: DeclareHold, Name: d.Portalname, Location: -1})
		}
	case *pg.Node_ClosePortalStmt:
		out = append(out, named(CloseCursor, CloseAll, x.ClosePortalStmt.Portalname))
	case *pg.Node_PrepareStmt:
		out = append(out, Effect{Kind: Prepare, Name: x.PrepareStmt.Name, Location: -1})
	case *pg.Node_DeallocateStmt:
		out = append(out, named(Deallocate, DeallocateAll, x.DeallocateStmt.Name))
	case *pg.Node_LoadStmt:
		out = append(out, Effect{Kind: Load, Name: x.LoadStmt.Filename, Location: -1})
	case *pg.Node_DiscardStmt:
		if k := discardKinds[x.DiscardStmt.Target]; k != 0 {
			out = append(out, Effect{Kind: k, Location: -1})
		}
	case *pg.Node_DropStmt:
		out = dropEffects(out, x.DropStmt)
		// Dropping a relation, type or trigger only takes code out of
		// reach; dropping a routine may make a name resolve to another.
		switch x.DropStmt.RemoveType {
		case pg.ObjectType_OBJECT_FUNCTION, pg.ObjectType_OBJECT_PROCEDURE, pg.ObjectType_OBJECT_ROUTINE,
			pg.ObjectType_OBJECT_SCHEMA, pg.ObjectType_OBJECT_EXTENSION:
			out = append(out, Effect{Kind: RoutineChange, Location: -1})
		}
	case *pg.Node_CreateFunctionStmt, *pg.Node_AlterFunctionStmt, *pg.Node_CreateExtensionStmt,
		*pg.Node_AlterExtensionStmt, *pg.Node_AlterExtensionContentsStmt,
		*pg.Node_AlterTableStmt, *pg.Node_ViewStmt, *pg.Node_RuleStmt, *pg.Node_CreateTrigStmt,
		*pg.Node_CreatePolicyStmt, *pg.Node_AlterPolicyStmt, *pg.Node_CreateDomainStmt, *pg.Node_AlterDomainStmt,
		*pg.Node_DefineStmt, *pg.Node_CreateCastStmt, *pg.Node_CreateEventTrigStmt, *pg.Node_AlterEventTrigStmt,
		*pg.Node_IndexStmt, *pg.Node_AlterOperatorStmt, *pg.Node_AlterTypeStmt, *pg.Node_CreateRangeStmt,
		*pg.Node_CreateForeignTableStmt, *pg.Node_ImportForeignSchemaStmt, *pg.Node_CreateTransformStmt,
		*pg.Node_CreateSchemaStmt, *pg.Node_AlterTableMoveAllStmt:
		out = append(out, Effect{Kind: RoutineChange, Location: -1})
	case *pg.Node_CreateStmt:
		if _, temp := createdTemp(n); codeInTable(x.CreateStmt, temp) {
			out = append(out, Effect{Kind: RoutineChange, Location: -1})
		}
	case *pg.Node_RenameStmt:
		if reachObject(x.RenameStmt.RenameType) {
			out = append(out, Effect{Kind: RoutineChange, Location: -1})
		}
	case *pg.Node_AlterObjectSchemaStmt:
		if reachObject(x.AlterObjectSchemaStmt.ObjectType) {
			out = append(out, Effect{Kind: RoutineChange, Location: -1})
		}
	case *pg.Node_UpdateStmt:
		if name, ok := PgSettingsUpdate(n); ok {
			e := Effect{Kind: SetParam, Name: name, Dynamic: name == "", Via: ViaPgSettings, Location: x.UpdateStmt.Relation.Location}
			for _, t := range x.UpdateStmt.TargetList {
				if rt := t.GetResTarget(); rt != nil && strings.EqualFold(rt.Name, "setting") {
					if v, ok := ConstString(rt.Val); ok {
						e.Value, e.Raw = rawValue(name, v), v
					}
				}
			}
			if e.Value == "" {
				e.Dynamic = true
			}
			out = append(out, e)
		}
	}
	if t, ok := createdTemp(n); ok {
		out = append(out, Effect{Kind: CreateTemp, Name: t.name, Object: t.kind,
			Local:      t.onCommit == pg.OnCommitAction_ONCOMMIT_DROP,
			DeleteRows: t.onCommit == pg.OnCommitAction_ONCOMMIT_DELETE_ROWS, Location: t.loc})
	}
	out = st.callEffects(out)
	st.changes = out
	return out
}

// named is the statement-level effect of kind k on the object name, or of
// kind all on every object of its kind when name is empty (UNLISTEN *,
// CLOSE ALL, DEALLOCATE ALL).
func named(k, all Kind, name string) Effect {
	if name == "" {
		return Effect{Kind: all, Location: -1}
	}
	return Effect{Kind: k, Name: name, Location: -1}
}

// Routines returns a CallRoutine for each function or procedure called
// when the statement runs that is not built in (as UserCalls decides),
// each name once, named as written (schema-qualified or not). A DO
// block's own CallRoutine is Query's.
func (st *Stmt) Routines() []Effect {
	if st.routinesDone {
		return st.routines
	}
	st.routinesDone = true
	if st.Node == nil || !RunsCalls(st.Node) {
		return nil
	}
	var out []Effect
	for _, c := range userCalls(st.Calls()) {
		name := c.Name
		if c.Schema != "" {
			name = c.Schema + "." + name
		}
		out = append(out, Effect{Kind: CallRoutine, Name: name, Location: c.Location})
	}
	st.routines = out
	return out
}

// RunsCalls reports whether the function calls in n run when n runs.
// Definitions (views, routines, rules, triggers, policies, column
// defaults, prepared statements) only store them, and EXPLAIN without
// ANALYZE only plans them.
func RunsCalls(n *pg.Node) bool {
	switch n.Node.(type) {
	case *pg.Node_ViewStmt, *pg.Node_CreateFunctionStmt, *pg.Node_AlterFunctionStmt,
		*pg.Node_RuleStmt, *pg.Node_PrepareStmt, *pg.Node_CreateTrigStmt,
		*pg.Node_CreatePolicyStmt, *pg.Node_AlterPolicyStmt, *pg.Node_CreateStmt,
		*pg.Node_AlterTableStmt, *pg.Node_IndexStmt, *pg.Node_CreateDomainStmt,
		*pg.Node_CommentStmt, *pg.Node_DoStmt:
		return false
	}
	return !PlanOnly(n)
}

// PlanOnly reports whether n is an EXPLAIN without ANALYZE, which plans
// the statement under it without running its functions.
func PlanOnly(n *pg.Node) bool {
	if n == nil || n.GetExplainStmt() == nil {
		return false
	}
	for _, o := range n.GetExplainStmt().Options {
		if d := o.GetDefElem(); d != nil && strings.EqualFold(d.Defname, "analyze") {
			return d.Arg != nil && !optionOn(d.Arg)
		}
	}
	return true
}

// optionOn reads the value of a boolean option (EXPLAIN (ANALYZE off)):
// true unless it is a constant that means false.
func optionOn(n *pg.Node) bool {
	switch {
	case n.GetBoolean() != nil:
		return n.GetBoolean().Boolval
	case n.GetInteger() != nil:
		return n.GetInteger().Ival != 0
	case n.GetString_() != nil:
		switch strings.ToLower(n.GetString_().Sval) {
		case "false", "off", "no", "f", "n", "0":
			return false
		}
	}
	return true
}

// CursorOptHold is CURSOR_OPT_HOLD from PostgreSQL's parsenodes.h; the bit
// masks keep their C values in pg_query's tree.
const CursorOptHold = 0x20

// doOpaque reports whether what the DO block st does cannot be read from
// its text: another language than plpgsql, a body that does not compile,
// or dynamic SQL (EXECUTE).
func doOpaque(st *sqlparse.Statement) bool {
	lang, body := sqlparse.RoutineOptions(st.Node.GetDoStmt().Args)
	if lang != "" && !strings.EqualFold(lang, "plpgsql") {
		return true
	}
	if containsWord(strings.ToLower(body), "execute") {
		return true
	}
	_, err := pg.ParsePlPgSqlToJSON(st.Text[st.Start:st.End])
	return err != nil
}

// reachObject reports whether renaming or moving an object of type t may
// change what code statements run without naming it: the
// routines themselves, and the relations, types, operators, casts,
// triggers, rules, policies, constraints and indexes that call them.
func reachObject(t pg.ObjectType) bool {
	switch t {
	case pg.ObjectType_OBJECT_FUNCTION, pg.ObjectType_OBJECT_PROCEDURE, pg.ObjectType_OBJECT_ROUTINE,
		pg.ObjectType_OBJECT_SCHEMA, pg.ObjectType_OBJECT_EXTENSION,
		pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_MATVIEW,
		pg.ObjectType_OBJECT_FOREIGN_TABLE, pg.ObjectType_OBJECT_COLUMN, pg.ObjectType_OBJECT_RULE,
		pg.ObjectType_OBJECT_TRIGGER, pg.ObjectType_OBJECT_POLICY, pg.ObjectType_OBJECT_DOMAIN,
		pg.ObjectType_OBJECT_DOMCONSTRAINT, pg.ObjectType_OBJECT_TABCONSTRAINT, pg.ObjectType_OBJECT_TYPE,
		pg.ObjectType_OBJECT_OPERATOR, pg.ObjectType_OBJECT_CAST, pg.ObjectType_OBJECT_EVENT_TRIGGER,
		pg.ObjectType_OBJECT_INDEX, pg.ObjectType_OBJECT_AGGREGATE, pg.ObjectType_OBJECT_TRANSFORM:
		return true
	}
	return false
}

// codeInTable reports whether CREATE TABLE c may make statements run code
// they do not name: a table that is not temporary (its name may already
// be read by the pooler's reach of the catalog as another table's, and
// it may inherit or be a partition), or a temporary one with column
// defaults, constraints or a parent. A plain temporary table, which many
// applications create in every transaction, changes nothing of that.
func codeInTable(c *pg.CreateStmt, temp bool) bool {
	if !temp || len(c.InhRelations) > 0 ||
		c.Partbound != nil || len(c.Constraints) > 0 || c.OfTypename != nil {
		return true
	}
	for _, e := range c.TableElts {
		cd := e.GetColumnDef()
		if cd == nil {
			return true // LIKE, a table constraint
		}
		if len(cd.Constraints) > 0 || cd.RawDefault != nil || cd.CookedDefault != nil {
			return true
		}
	}
	return false
}

// setEffects appends the effects of SET, RESET and their variants.
func setEffects(out []Effect, vs *pg.VariableSetStmt) []Effect {
	name := strings.ToLower(vs.Name)
	if transactionParams[name] && vs.Kind != pg.VariableSetKind_VAR_SET_MULTI {
		// SET transaction_read_only = on is SET TRANSACTION READ ONLY:
		// it applies to the current transaction only (outside one,
		// PostgreSQL warns and changes nothing).
		return out
	}
	e := Effect{Name: name, Local: vs.IsLocal, Location: -1}
	switch vs.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		e.Kind, e.Via = SetParam, ViaSet
		e.Value = argsValue(vs.Args)
		if len(vs.Args) == 1 {
			e.Raw, _ = ConstString(vs.Args[0])
		}
		switch {
		case name == "role" && e.Value == "'none'":
			e.Kind, e.Value, e.Raw = ResetRole, "", ""
		case name == "role":
			e.Kind = SetRole
		case name == "session_authorization":
			e.Kind = SessionAuth
		}
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		e.Kind, e.Via = ResetParam, ViaReset
		if vs.Kind == pg.VariableSetKind_VAR_SET_DEFAULT {
			e.Via = ViaSetDefault
		}
		switch name {
		case "role":
			e.Kind = ResetRole
		case "session_authorization":
			e.Kind = ResetSessionAuth
		}
	case pg.VariableSetKind_VAR_SET_CURRENT:
		// SET name FROM CURRENT: only meaningful in a routine definition.
		return out
	case pg.VariableSetKind_VAR_RESET_ALL:
		e.Kind, e.Name, e.Via = ResetAll, "", ViaReset
	case pg.VariableSetKind_VAR_SET_MULTI:
		if name != "session characteristics" {
			return out // SET TRANSACTION …: this transaction only
		}
		for _, a := range vs.Args {
			d := a.GetDefElem()
			if d == nil {
				continue
			}
			v := ""
			c := Constant(d.Arg)
			switch {
			case c.GetSval() != nil:
				v = quoteLiteral(c.GetSval().Sval)
			case c.GetIval() != nil:
				v = strconv.FormatBool(c.GetIval().Ival != 0)
			case c.GetBoolval() != nil:
				v = strconv.FormatBool(c.GetBoolval().Boolval)
			}
			out = append(out, Effect{Kind: SetParam, Name: "default_" + d.Defname, Value: v, Via: ViaCharacteristics, Location: -1})
		}
		return out
	default:
		return out
	}
	return append(out, e)
}

// dropEffects appends a DropTemp for each object dropped by a name that
// may be a temporary one: a relation or type unqualified or in pg_temp,
// a routine or operator in pg_temp (PostgreSQL never looks routines and
// operators up in pg_temp unless told to).
func dropEffects(out []Effect, d *pg.DropStmt) []Effect {
	object := dropObjects[d.RemoveType]
	if object == "" {
		return out
	}
	for _, o := range d.Objects {
		var names []*pg.Node
		qualified := false
		switch {
		case o.GetList() != nil:
			names = o.GetList().Items
		case o.GetObjectWithArgs() != nil:
			names, qualified = o.GetObjectWithArgs().Objname, true
		case o.GetTypeName() != nil:
			names = o.GetTypeName().Names // DROP TYPE, DROP DOMAIN
		}
		if qualified && len(names) != 2 {
			continue
		}
		if name, ok := tempName(names); ok {
			out = append(out, Effect{Kind: DropTemp, Name: name, Object: object, Location: -1})
		}
	}
	return out
}

// dropObjects names the kinds of objects that may be temporary, as
// CreateTemp names them.
var dropObjects = map[pg.ObjectType]string{
	pg.ObjectType_OBJECT_TABLE: "table", pg.ObjectType_OBJECT_VIEW: "view",
	pg.ObjectType_OBJECT_SEQUENCE: "sequence", pg.ObjectType_OBJECT_MATVIEW: "materialized view",
	pg.ObjectType_OBJECT_FOREIGN_TABLE: "foreign table",
	pg.ObjectType_OBJECT_FUNCTION:      "function", pg.ObjectType_OBJECT_PROCEDURE: "procedure",
	pg.ObjectType_OBJECT_ROUTINE: "routine", pg.ObjectType_OBJECT_AGGREGATE: "aggregate",
	pg.ObjectType_OBJECT_OPERATOR: "operator", pg.ObjectType_OBJECT_TYPE: "type",
	pg.ObjectType_OBJECT_DOMAIN: "domain", pg.ObjectType_OBJECT_COLLATION: "collation",
	pg.ObjectType_OBJECT_TSCONFIGURATION: "text search configuration",
	pg.ObjectType_OBJECT_TSDICTIONARY:    "text search dictionary",
	pg.ObjectType_OBJECT_TSPARSER:        "text search parser",
	pg.ObjectType_OBJECT_TSTEMPLATE:      "text search template",
}

// IsRelationObject reports whether an Object of CreateTemp or DropTemp is
// a relation (pg_class), which a temporary schema holds under one
// namespace of names.
func IsRelationObject(object string) bool {
	switch object {
	case "table", "view", "sequence", "materialized view", "foreign table":
		return true
	}
	return false
}

// isPgTemp reports whether schema is the session's temporary schema:
// pg_temp, or its real name pg_temp_N (a schema named pg_temp_backup is
// an ordinary one).
func isPgTemp(schema string) bool {
	s := strings.ToLower(schema)
	if s == "pg_temp" {
		return true
	}
	n, ok := strings.CutPrefix(s, "pg_temp_")
	if !ok || n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
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

// callEffects appends the effects of set_config and advisory lock calls,
// in the order they appear in the statement.
func (st *Stmt) callEffects(out []Effect) []Effect {
	calls := st.CallsNamed(changeFuncs...)
	calls = append(calls, st.completedAdvisoryCalls()...)
	slices.SortStableFunc(calls, func(a, b Call) int { return int(a.Location) - int(b.Location) })
	for _, c := range calls {
		if c.Name == "set_config" {
			if len(c.Args) == 3 {
				out = append(out, setConfigEffect(c))
			}
			continue
		}
		e, ok := advisory[c.Name]
		if !ok {
			// pg_advisory_{kind}(…): the rest of the name is filled in at
			// run time; lock, the most common completion, is assumed.
			e = Effect{Kind: AdvisoryLock, Try: strings.HasPrefix(c.Name, "pg_try_"), Dynamic: true}
			c.Name = strings.TrimSuffix(c.Name, completedName(c.Name)) + "…"
		}
		e.Via, e.Func, e.Location = ViaCall, c.Name, c.Location
		if e.Kind != AdvisoryUnlockAll {
			e.Key, e.Pair, e.KeyKnown = lockKey(c.Args)
			e.Arg = argsKey(c.Args)
		}
		out = append(out, e)
	}
	return out
}

// runTimeMark starts the identifiers that stand for text only known at run
// time: the interpolations of application code (extract.Placeholder,
// pgpoolcheck_param) and the holes of dynamic SQL (DynamicPlaceholder).
const runTimeMark = "pgpoolcheck_"

// completedName returns the part of an advisory lock function's name that
// is filled in at run time (pg_advisory_ + kind), or "" when the name is
// not such a one.
func completedName(name string) string {
	for _, p := range []string{"pg_try_advisory_", "pg_advisory_"} {
		if rest, ok := strings.CutPrefix(name, p); ok && strings.HasPrefix(rest, runTimeMark) {
			return rest
		}
	}
	return ""
}

// completedAdvisoryCalls returns the calls of advisory lock functions
// whose name is completed at run time ("pg_advisory_" + kind in code), not
// schema-qualified with another schema than pg_catalog.
func (st *Stmt) completedAdvisoryCalls() []Call {
	if st.Node == nil || !strings.Contains(st.Text, "advisory_"+runTimeMark) || !RunsCalls(st.Node) {
		return nil
	}
	var out []Call
	for _, c := range st.Calls() {
		if completedName(c.Name) != "" && (c.Schema == "" || c.Schema == "pg_catalog") {
			out = append(out, c)
		}
	}
	return out
}

// setConfigEffect is set_config(name, value, is_local).
func setConfigEffect(c Call) Effect {
	e := Effect{Kind: SetParam, Via: ViaSetConfig, Func: c.Name, Location: c.Location}
	name, nameOK := ConstString(c.Args[0])
	e.Name = strings.ToLower(name)
	local, localOK := ConstBool(c.Args[2])
	e.Local = localOK && local
	e.MaybeLocal = !localOK
	v, valueOK := ConstString(c.Args[1])
	if valueOK {
		e.Value, e.Raw = rawValue(e.Name, v), v
	}
	e.Dynamic = !nameOK || !localOK || !valueOK
	switch e.Name {
	case "role":
		e.Kind = SetRole
		if valueOK && strings.EqualFold(v, "none") {
			e.Kind, e.Value, e.Raw = ResetRole, "", ""
		}
	case "session_authorization":
		e.Kind = SessionAuth
	}
	return e
}
