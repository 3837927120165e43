package rules

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Walk calls fn for every message in the tree under m, parents first. When
// fn returns false the children of that message are skipped.
func Walk(m proto.Message, fn func(protoreflect.Message) bool) {
	if m == nil {
		return
	}
	walk(m.ProtoReflect(), fn)
}

func walk(m protoreflect.Message, fn func(protoreflect.Message) bool) {
	if !m.IsValid() || !fn(m) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			if fd.Kind() == protoreflect.MessageKind {
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message(), fn)
				}
			}
		case fd.IsMap():
		case fd.Kind() == protoreflect.MessageKind:
			walk(v.Message(), fn)
		}
		return true
	})
}

// Call is one function call in a statement.
type Call struct {
	// Name is the function name without schema, lower-case.
	Name string
	// Schema is the schema qualification, lower-case; empty when none.
	Schema string
	Args   []*pg.Node
	// Location is the call's node location (relative to Stmt.Text).
	Location int32
}

// Calls returns every function call in the statement: target list, WHERE,
// FROM, CTEs, sub-selects, defaults, BEGIN ATOMIC bodies. Statements whose
// text mentions no function any rule looks for return nil without a walk.
func (st *Stmt) Calls() []Call {
	if st.callsDone {
		return st.calls
	}
	st.callsDone = true
	if len(st.mentioned) == 0 {
		return nil
	}
	Walk(st.Node, func(m protoreflect.Message) bool {
		if f, ok := m.Interface().(*pg.CreateFunctionStmt); ok && f.SqlBody != nil {
			// A BEGIN ATOMIC body runs when the routine is called: the
			// analyzer checks it as a body of its own.
			for _, n := range append(append([]*pg.Node{}, f.Parameters...), f.Options...) {
				Walk(n, st.collect)
			}
			return false
		}
		return st.collect(m)
	})
	return st.calls
}

// collect records m when it is a function call.
func (st *Stmt) collect(m protoreflect.Message) bool {
	fc, ok := m.Interface().(*pg.FuncCall)
	if !ok {
		return true
	}
	c := Call{Args: fc.Args, Location: fc.Location}
	names := fc.Funcname
	if len(names) > 0 {
		c.Name = strings.ToLower(names[len(names)-1].GetString_().GetSval())
	}
	if len(names) > 1 {
		c.Schema = strings.ToLower(names[len(names)-2].GetString_().GetSval())
	}
	st.calls = append(st.calls, c)
	return true
}

// CallsNamed returns the calls whose name is in names. Calls qualified with
// a schema other than pg_catalog are user functions and are left out.
func (st *Stmt) CallsNamed(names ...string) []Call {
	if !st.mentions(names) || st.planOnly() {
		return nil
	}
	var out []Call
	for _, c := range st.Calls() {
		if c.Schema != "" && c.Schema != "pg_catalog" {
			continue
		}
		for _, n := range names {
			if c.Name == n {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// Constant returns the constant n stands for, looking through casts
// ('x'::text, CAST('x' AS regclass)); nil when n is not a constant.
func Constant(n *pg.Node) *pg.A_Const {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	return n.GetAConst()
}

// ConstString returns the value of a string constant, looking through
// casts.
func ConstString(n *pg.Node) (string, bool) {
	if s := Constant(n).GetSval(); s != nil {
		return s.Sval, true
	}
	return "", false
}

// ConstBool returns the value of a boolean argument given as a constant:
// true/false, a string such as 'off' or 'f', a number, or a cast of any of
// these. ok is false when the value is only known at run time.
func ConstBool(n *pg.Node) (value, ok bool) {
	c := Constant(n)
	switch {
	case c.GetBoolval() != nil:
		return c.GetBoolval().Boolval, true
	case c.GetSval() != nil:
		switch strings.ToLower(strings.TrimSpace(c.GetSval().Sval)) {
		case "t", "true", "on", "yes", "y", "1":
			return true, true
		case "f", "false", "off", "no", "n", "0":
			return false, true
		}
	case c.GetIval() != nil:
		return c.GetIval().Ival != 0, true
	}
	return false, false
}

// ConstKey renders a constant argument (number or string) for comparing
// advisory lock keys and sequence names; ok is false for non-constants.
func ConstKey(n *pg.Node) (string, bool) {
	c := Constant(n)
	switch {
	case c.GetIval() != nil:
		return "i" + strconv.Itoa(int(c.GetIval().Ival)), true
	case c.GetFval() != nil:
		return "f" + c.GetFval().Fval, true
	case c.GetSval() != nil:
		return "s" + c.GetSval().Sval, true
	}
	return "", false
}
