package rules

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// BackendPID flags calls that identify the server process or the client's
// network address.
var BackendPID = &Rule{
	ID:       "backend-pid",
	Title:    "backend identity changes between transactions",
	Severity: Info,
	Fix:      "do not keep the backend pid or client address across transactions; identify the client with application_name or an explicit id",
	Funcs:    backendIdentityFuncs,
	Check:    checkBackendPID,
}

var backendIdentityFuncs = []string{"pg_backend_pid", "inet_client_addr", "inet_client_port"}

func checkBackendPID(p *Pass) {
	_, note := p.Target.Handle(effects.BackendIdentity)
	for _, st := range p.Group.Stmts {
		var self map[int32]bool
		looked := false
		for _, e := range st.Reads() {
			if e.Kind != effects.BackendIdentity {
				continue
			}
			if e.Func == "pg_backend_pid" {
				if !looked {
					self, looked = selfExclusions(st), true
				}
				if self[e.Location] {
					// pid <> pg_backend_pid(): the statement leaves its own
					// backend out, whichever it is; nothing outlives it.
					continue
				}
			}
			msg := e.Func + "() identifies the server process of this transaction only: the client's next transaction may run in another one; " + note
			if e.Func != "pg_backend_pid" {
				msg = e.Func + "() returns the pooler's address, not the application's: the pooler is the server's client"
			}
			p.Report(st, e.Location, Info, msg, "")
		}
	}
}

// selfExclusions returns the locations of the pg_backend_pid() calls in st
// that are an operand of <> (pid <> pg_backend_pid(): every backend but
// the statement's own).
func selfExclusions(st *Stmt) map[int32]bool {
	var out map[int32]bool
	effects.Walk(st.Node, func(m protoreflect.Message) bool {
		e, ok := m.Interface().(*pg.A_Expr)
		if !ok || e.Kind != pg.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "<>" {
			return true
		}
		for _, n := range []*pg.Node{e.Lexpr, e.Rexpr} {
			for n.GetTypeCast() != nil {
				n = n.GetTypeCast().Arg
			}
			if fc := n.GetFuncCall(); fc != nil && len(fc.Args) == 0 && len(fc.Funcname) > 0 &&
				strings.EqualFold(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval(), "pg_backend_pid") {
				if out == nil {
					out = make(map[int32]bool)
				}
				out[fc.Location] = true
			}
		}
		return true
	})
	return out
}
