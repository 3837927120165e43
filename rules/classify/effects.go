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

// callNames are the functions whose calls are effects.
var callNames = func() []string {
	names := []string{"set_config"}
	for n := range advisory {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}()

var discardKinds = map[pg.DiscardMode]Kind{
	pg.DiscardMode_DISCARD_ALL: DiscardAll, pg.DiscardMode_DISCARD_TEMP: DiscardTemp,
	pg.DiscardMode_DISCARD_PLANS: DiscardPlans, pg.DiscardMode_DISCARD_SEQUENCES: DiscardSequences,
}

// classify parses sql and collects its effects.
func classify(sql string) Result {
	res, err := sqlparse.Parse(sql)
	if err != nil {
		return Result{ParseError: true}
	}
	var out []Effect
	for _, raw := range res.Stmts {
		start := int(raw.StmtLocation)
		end := len(sql)
		if raw.StmtLen > 0 {
			end = start + int(raw.StmtLen)
		}
		st := &sqlparse.Statement{Start: start, End: end, Text: sql, Node: raw.Stmt}
		out = stmtEffects(out, st, false)
		if raw.Stmt.GetDoStmt() != nil {
			name := DOBlock
			if doOpaque(st) {
				name = OpaqueDOBlock
			}
			out = append(out, Effect{Kind: CallRoutine, Name: name})
			// A DO block runs its body now, in this session.
			for _, in := range sqlparse.Bodies(nil, st, nil) {
				if in.Node != nil {
					out = stmtEffects(out, &in, strings.Contains(in.Text, sqlparse.DynamicPlaceholder))
				}
			}
		}
	}
	r := Result{Effects: out}
	if len(out) > 0 {
		r.Fingerprint, _ = pg.FingerprintToUInt64(sql)
	}
	return r
}

// stmtEffects appends the effects of one statement. dynamic marks a
// statement rebuilt from dynamic SQL, whose placeholders stand for values
// only known at run time.
func stmtEffects(out []Effect, st *sqlparse.Statement, dynamic bool) []Effect {
	n := st.Node
	from := len(out)
	switch x := n.Node.(type) {
	case *pg.Node_VariableSetStmt:
		out = setEffects(out, x.VariableSetStmt)
	case *pg.Node_ListenStmt:
		out = append(out, Effect{Kind: Listen, Name: x.ListenStmt.Conditionname, Rule: rules.Listen.ID})
	case *pg.Node_UnlistenStmt:
		if x.UnlistenStmt.Conditionname == "" {
			out = append(out, Effect{Kind: UnlistenAll, Rule: rules.Listen.ID})
		} else {
			out = append(out, Effect{Kind: Unlisten, Name: x.UnlistenStmt.Conditionname, Rule: rules.Listen.ID})
		}
	case *pg.Node_DeclareCursorStmt:
		if d := x.DeclareCursorStmt; d.Options&rules.CursorOptHold != 0 {
			out = append(out, Effect{Kind: DeclareHold, Name: d.Portalname, Rule: rules.CursorWithHold.ID})
		}
	case *pg.Node_ClosePortalStmt:
		if x.ClosePortalStmt.Portalname == "" {
			out = append(out, Effect{Kind: CloseAll, Rule: rules.CursorWithHold.ID})
		} else {
			out = append(out, Effect{Kind: CloseCursor, Name: x.ClosePortalStmt.Portalname, Rule: rules.CursorWithHold.ID})
		}
	case *pg.Node_PrepareStmt:
		out = append(out, Effect{Kind: Prepare, Name: x.PrepareStmt.Name, Rule: rules.SQLPrepare.ID})
	case *pg.Node_DeallocateStmt:
		if x.DeallocateStmt.Name == "" {
			out = append(out, Effect{Kind: DeallocateAll, Rule: rules.SQLPrepare.ID})
		} else {
			out = append(out, Effect{Kind: Deallocate, Name: x.DeallocateStmt.Name, Rule: rules.SQLPrepare.ID})
		}
	case *pg.Node_LoadStmt:
		out = append(out, Effect{Kind: Load, Name: x.LoadStmt.Filename, Rule: rules.SessionLoad.ID})
	case *pg.Node_DiscardStmt:
		if k := discardKinds[x.DiscardStmt.Target]; k != 0 {
			out = append(out, Effect{Kind: k, Rule: rules.Discard.ID})
		}
	case *pg.Node_DropStmt:
		out = dropEffects(out, x.DropStmt)
		switch x.DropStmt.RemoveType {
		case pg.ObjectType_OBJECT_FUNCTION, pg.ObjectType_OBJECT_PROCEDURE, pg.ObjectType_OBJECT_ROUTINE,
			pg.ObjectType_OBJECT_SCHEMA, pg.ObjectType_OBJECT_EXTENSION:
			out = append(out, Effect{Kind: RoutineChange})
		}
	case *pg.Node_CreateFunctionStmt, *pg.Node_AlterFunctionStmt, *pg.Node_CreateExtensionStmt,
		*pg.Node_AlterExtensionStmt:
		out = append(out, Effect{Kind: RoutineChange})
	case *pg.Node_RenameStmt:
		if routineObject(x.RenameStmt.RenameType) {
			out = append(out, Effect{Kind: RoutineChange})
		}
	case *pg.Node_AlterObjectSchemaStmt:
		if routineObject(x.AlterObjectSchemaStmt.ObjectType) {
			out = append(out, Effect{Kind: RoutineChange})
		}
	case *pg.Node_UpdateStmt:
		if name, ok := rules.PgSettingsUpdate(n); ok {
			e := Effect{Kind: SetParam, Name: name, Dynamic: name == "", Rule: rules.SessionSet.ID}
			for _, t := range x.UpdateStmt.TargetList {
				if rt := t.GetResTarget(); rt != nil && strings.EqualFold(rt.Name, "setting") {
					if v, ok := rules.ConstString(rt.Val); ok {
						e.Value = rawValue(name, v)
					}
				}
			}
			if e.Value == "" {
				e.Dynamic = true
			}
			out = append(out, e)
		}
	}
	if kind, name, onCommit, ok := rules.CreatedTemp(n); ok {
		out = append(out, Effect{Kind: CreateTemp, Name: name, Object: kind,
			Local: onCommit == pg.OnCommitAction_ONCOMMIT_DROP, Rule: rules.TempTable.ID})
	}
	if runsCalls(n) {
		out = callEffects(out, st)
		out = routineCalls(out, n)
	}
	if dynamic {
		for i := range out[from:] {
			e := &out[from+i]
			if strings.Contains(e.Name, sqlparse.DynamicPlaceholder) {
				e.Name, e.Dynamic = "", true
			}
			if strings.Contains(e.Value, sqlparse.DynamicPlaceholder) {
				e.Value, e.Dynamic = "", true
			}
		}
	}
	return out
}

// runsCalls reports whether the function calls in n run when n runs.
// Definitions (views, routines, rules, triggers, policies, column
// defaults, prepared statements) only store them, and EXPLAIN without
// ANALYZE only plans them.
func runsCalls(n *pg.Node) bool {
	switch n.Node.(type) {
	case *pg.Node_ViewStmt, *pg.Node_CreateFunctionStmt, *pg.Node_AlterFunctionStmt,
		*pg.Node_RuleStmt, *pg.Node_PrepareStmt, *pg.Node_CreateTrigStmt,
		*pg.Node_CreatePolicyStmt, *pg.Node_AlterPolicyStmt, *pg.Node_CreateStmt,
		*pg.Node_AlterTableStmt, *pg.Node_IndexStmt, *pg.Node_CreateDomainStmt,
		*pg.Node_CommentStmt, *pg.Node_DoStmt:
		return false
	}
	return !rules.PlanOnly(n)
}

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

// routineObject reports whether an object of type t is a routine or a
// schema (whose routines a name may resolve to).
func routineObject(t pg.ObjectType) bool {
	switch t {
	case pg.ObjectType_OBJECT_FUNCTION, pg.ObjectType_OBJECT_PROCEDURE, pg.ObjectType_OBJECT_ROUTINE,
		pg.ObjectType_OBJECT_SCHEMA:
		return true
	}
	return false
}

// routineCalls appends a CallRoutine for each function or procedure
// called in n that is not built in: qualified with a schema other than
// pg_catalog, or unqualified and not the name of a function in
// pg_catalog (builtinFuncs). A user function that overloads a built-in
// name with its own argument types is taken for the built-in.
func routineCalls(out []Effect, n *pg.Node) []Effect {
	for _, c := range userCalls(n) {
		name := c.Name
		if c.Schema != "" {
			name = c.Schema + "." + name
		}
		out = append(out, Effect{Kind: CallRoutine, Name: name})
	}
	return out
}

// setEffects appends the effects of SET, RESET and their variants.
func setEffects(out []Effect, vs *pg.VariableSetStmt) []Effect {
	name := strings.ToLower(vs.Name)
	e := Effect{Name: name, Local: vs.IsLocal, Rule: rules.SessionSet.ID}
	role := name == "role" || name == "session_authorization"
	if role {
		e.Rule = rules.SessionRole.ID
	}
	switch vs.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		e.Kind = SetParam
		e.Value = argsValue(vs.Args)
		switch {
		case name == "role" && e.Value == "'none'":
			e.Kind, e.Value = ResetRole, ""
		case name == "role":
			e.Kind = SetRole
		case name == "session_authorization":
			e.Kind = SessionAuth
		}
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		e.Kind = ResetParam
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
		e.Kind, e.Name = ResetAll, ""
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
			c := rules.Constant(d.Arg)
			switch {
			case c.GetSval() != nil:
				v = quoteLiteral(c.GetSval().Sval)
			case c.GetIval() != nil:
				v = strconv.FormatBool(c.GetIval().Ival != 0)
			case c.GetBoolval() != nil:
				v = strconv.FormatBool(c.GetBoolval().Boolval)
			}
			out = append(out, Effect{Kind: SetParam, Name: "default_" + d.Defname, Value: v, Rule: rules.SessionSet.ID})
		}
		return out
	default:
		return out
	}
	return append(out, e)
}

// dropEffects appends a DropTemp for each relation dropped by a name that
// may be a temporary one: unqualified or in pg_temp (tempName).
func dropEffects(out []Effect, d *pg.DropStmt) []Effect {
	switch d.RemoveType {
	case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_SEQUENCE,
		pg.ObjectType_OBJECT_MATVIEW, pg.ObjectType_OBJECT_FOREIGN_TABLE:
	default:
		return out
	}
	for _, o := range d.Objects {
		if name, ok := tempName(o.GetList().GetItems()); ok {
			out = append(out, Effect{Kind: DropTemp, Name: name, Rule: rules.TempTable.ID})
		}
	}
	return out
}

// isPgTemp reports whether schema is the session's temporary schema:
// pg_temp, or its real name pg_temp_N.
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

// callEffects appends the effects of set_config and advisory lock calls,
// in the order they appear in the statement.
func callEffects(out []Effect, st *sqlparse.Statement) []Effect {
	s := rules.NewStmt(st, callNames)
	calls := s.CallsNamed(callNames...)
	slices.SortStableFunc(calls, func(a, b rules.Call) int { return int(a.Location) - int(b.Location) })
	for _, c := range calls {
		if c.Name == "set_config" {
			if len(c.Args) == 3 {
				out = append(out, setConfigEffect(c))
			}
			continue
		}
		e := advisory[c.Name]
		e.Rule = rules.AdvisoryLockSession.ID
		if e.Kind != AdvisoryUnlockAll {
			e.Key, e.Pair, e.KeyKnown = lockKey(c.Args)
			e.Arg = argsKey(c.Args)
		}
		out = append(out, e)
	}
	return out
}

// setConfigEffect is set_config(name, value, is_local).
func setConfigEffect(c rules.Call) Effect {
	e := Effect{Kind: SetParam, Rule: rules.SessionSet.ID}
	name, nameOK := rules.ConstString(c.Args[0])
	e.Name = strings.ToLower(name)
	local, localOK := rules.ConstBool(c.Args[2])
	e.Local = localOK && local
	v, valueOK := rules.ConstString(c.Args[1])
	if valueOK {
		e.Value = rawValue(e.Name, v)
	}
	e.Dynamic = !nameOK || !localOK || !valueOK
	switch e.Name {
	case "role":
		e.Kind, e.Rule = SetRole, rules.SessionRole.ID
		if valueOK && strings.EqualFold(v, "none") {
			e.Kind, e.Value = ResetRole, ""
		}
	case "session_authorization":
		e.Kind, e.Rule = SessionAuth, rules.SessionRole.ID
	}
	return e
}

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
	c := rules.Constant(n)
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

// UserCalls returns the calls in n of functions and procedures that are
// not built in (as routineCalls decides), in tree order, each name once.
// Statements that only store calls (definitions, plans) return nil.
func UserCalls(n *pg.Node) []UserCall {
	if n == nil || !runsCalls(n) {
		return nil
	}
	return userCalls(n)
}

func userCalls(n *pg.Node) []UserCall {
	var out []UserCall
	rules.Walk(n, func(m protoreflect.Message) bool {
		fc, ok := m.Interface().(*pg.FuncCall)
		if !ok || len(fc.Funcname) == 0 {
			return true
		}
		names := fc.Funcname
		c := UserCall{Name: strings.ToLower(names[len(names)-1].GetString_().GetSval()), Location: fc.Location}
		if len(names) > 1 {
			c.Schema = strings.ToLower(names[len(names)-2].GetString_().GetSval())
		}
		if c.Schema == "pg_catalog" || c.Schema == "" && builtinFuncs[c.Name] {
			return true
		}
		for _, o := range out {
			if o.Name == c.Name && o.Schema == c.Schema {
				return true
			}
		}
		out = append(out, c)
		return true
	})
	return out
}

// Builtin reports whether name (lower-case, without schema) is the name
// of a function in pg_catalog.
func Builtin(name string) bool { return builtinFuncs[name] }
