package effects

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
