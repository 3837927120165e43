package effects

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// Call is one function call in a statement.
type Call struct {
	// Name is the function name without schema, lower-case.
	Name string
	// Schema is the schema qualification, lower-case; empty when none.
	Schema string
	Args   []*pg.Node
	// Location is the call's node location (relative to the statement's
	// text).
	Location int32
}

// Stmt is one parsed statement whose effects are computed once, on first
// use. The tree is walked at most once, and only when an answer needs it:
// a statement whose text names none of the functions of the model is not
// walked for their calls.
type Stmt struct {
	*sqlparse.Statement
	// mentioned lists the names of Funcs that occur in the text.
	mentioned []string

	walked   bool
	calls    []Call         // every call, in tree order
	rels     []*pg.RangeVar // relations unqualified or in pg_temp
	executes []Effect       // ExecutePrepared reads

	changes, routines, reads             []Effect
	changesDone, routinesDone, readsDone bool
}

// NewStmt wraps a parsed statement.
func NewStmt(s *sqlparse.Statement) *Stmt {
	st := &Stmt{Statement: s}
	if s.Node != nil {
		st.mentioned = identifiersIn(s.Text, Funcs)
	}
	return st
}

// Mentioned returns the names of Funcs that occur in the statement's
// text as identifiers.
func (st *Stmt) Mentioned() []string { return st.mentioned }

// Mentions reports whether the statement's text names one of names, which
// must be in Funcs.
func (st *Stmt) Mentions(names ...string) bool {
	for _, m := range st.mentioned {
		for _, n := range names {
			if m == n {
				return true
			}
		}
	}
	return false
}

// Calls returns every function call in the statement: target list, WHERE,
// FROM, CTEs, sub-selects, defaults. The body of a BEGIN ATOMIC routine
// is left out: it runs when the routine is called.
func (st *Stmt) Calls() []Call {
	st.walk()
	return st.calls
}

// CallsNamed returns the calls that run when the statement runs whose
// name is in names (which must be in Funcs). Calls qualified with a
// schema other than pg_catalog are user functions and are left out.
func (st *Stmt) CallsNamed(names ...string) []Call {
	if st.Node == nil || !st.Mentions(names...) || !RunsCalls(st.Node) {
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

// walk collects the calls, the relations and the EXECUTEs of the tree.
func (st *Stmt) walk() {
	if st.walked || st.Node == nil {
		return
	}
	st.walked = true
	Walk(st.Node, func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg.CreateFunctionStmt:
			if x.SqlBody != nil {
				for _, n := range append(append([]*pg.Node{}, x.Parameters...), x.Options...) {
					Walk(n, st.collect)
				}
				return false
			}
		}
		return st.collect(m)
	})
}

func (st *Stmt) collect(m protoreflect.Message) bool {
	switch x := m.Interface().(type) {
	case *pg.FuncCall:
		c := Call{Args: x.Args, Location: x.Location}
		names := x.Funcname
		if len(names) > 0 {
			c.Name = strings.ToLower(names[len(names)-1].GetString_().GetSval())
		}
		if len(names) > 1 {
			c.Schema = strings.ToLower(names[len(names)-2].GetString_().GetSval())
		}
		st.calls = append(st.calls, c)
	case *pg.RangeVar:
		if x.Schemaname == "" || isPgTemp(x.Schemaname) {
			st.rels = append(st.rels, x)
		}
	case *pg.ExecuteStmt:
		st.executes = append(st.executes, Effect{Kind: ExecutePrepared, Name: x.Name, Location: -1})
	}
	return true
}

// identifiersIn returns the words of names (lower-case) that occur in text
// as identifiers, compared case-insensitively (quoted identifiers as
// written). It makes one pass over text and allocates only for matches.
func identifiersIn(text string, names []string) []string {
	var out []string
	var buf [64]byte
	add := func(w []byte) {
		for _, n := range names {
			if len(n) == len(w) && n == string(w) {
				for _, o := range out {
					if o == n {
						return
					}
				}
				out = append(out, n)
				return
			}
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				j++
			}
			if j-i-1 <= len(buf) {
				add([]byte(text[i+1 : j]))
			}
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			n := 0
			for j < len(text) {
				c := text[j]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				} else if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
					break
				}
				if n < len(buf) {
					buf[n] = c
				}
				n++
				j++
			}
			if n <= len(buf) {
				add(buf[:n])
			}
			i = j
		case c >= 0x80:
			// Skip the rest of a non-ASCII identifier or string content.
			for i < len(text) && text[i] >= 0x80 {
				i++
			}
		default:
			i++
		}
	}
	return out
}
