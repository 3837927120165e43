package rules

import "github.com/pgpoolcheck/pgpoolcheck/rules/effects"

// SQLPrepare flags SQL-level prepared statements.
var SQLPrepare = &Rule{
	ID:       "sql-prepare",
	Title:    "PREPARE / EXECUTE / DEALLOCATE at the SQL level",
	Severity: Error,
	Fix:      "let the driver prepare statements over the extended protocol (which PgBouncer ≥ 1.21 and pgpoolcheck re-prepare per connection), or PREPARE and EXECUTE inside one transaction and DEALLOCATE before COMMIT",
	Check:    checkSQLPrepare,
}

// prepOp is one SQL-level prepared-statement operation of a group.
type prepOp struct {
	st   *Stmt
	kind string // "PREPARE", "EXECUTE", "DEALLOCATE"
	name string // empty for DEALLOCATE ALL
}

// prepOps lists the PREPARE, EXECUTE (also under EXPLAIN and CREATE TABLE
// AS) and DEALLOCATE statements of stmts, in order.
func prepOps(stmts []*Stmt) []prepOp {
	var ops []prepOp
	for _, st := range stmts {
		for _, e := range st.Changes() {
			switch e.Kind {
			case effects.Prepare:
				ops = append(ops, prepOp{st, "PREPARE", e.Name})
			case effects.Deallocate, effects.DeallocateAll:
				ops = append(ops, prepOp{st, "DEALLOCATE", e.Name})
			}
		}
		for _, e := range st.Reads() {
			if e.Kind == effects.ExecutePrepared {
				ops = append(ops, prepOp{st, "EXECUTE", e.Name})
			}
		}
	}
	return ops
}

func checkSQLPrepare(p *Pass) {
	h, note := p.Target.Handle(StateSQLPrepare)
	sev := Adjust(Error, h)
	ops := prepOps(p.Group.Stmts)
	// preparedBefore reports whether the group prepares name (any name
	// when empty) before op i; deallocatedAfter whether it deallocates
	// name after op i. Only one transaction keeps one server connection.
	preparedBefore := func(i int, name string) bool {
		for _, o := range ops[:i] {
			if p.Group.Explicit && o.kind == "PREPARE" && (name == "" || o.name == name) {
				return true
			}
		}
		return false
	}
	deallocatedAfter := func(i int, name string) bool {
		for _, o := range ops[i+1:] {
			if p.Group.Explicit && o.kind == "DEALLOCATE" && (o.name == "" || o.name == name) {
				return true
			}
		}
		return false
	}
	for i, o := range ops {
		switch {
		case o.kind == "PREPARE":
			if deallocatedAfter(i, o.name) {
				continue // prepared, used and deallocated in one transaction
			}
			p.Report(o.st, -1, sev, StateMessage("PREPARE "+o.name+" creates the statement on the server connection, not for the client",
				"the client's EXECUTE in a later transaction may run on a connection without it, and the next client of this one gets \"already exists\" when it prepares the same name", h, note), "")
		case preparedBefore(i, o.name):
			continue // runs on the connection that prepared it
		case o.kind == "EXECUTE":
			p.Report(o.st, -1, sev, StateMessage("EXECUTE "+o.name+" needs a statement prepared earlier on the same server connection",
				"in a transaction of its own it may run on a connection where it does not exist, or where another client prepared a different statement under that name", h, note), "")
		case o.name == "":
			p.Report(o.st, -1, Info, StateMessage("DEALLOCATE ALL acts on whichever server connection this transaction gets, not necessarily the ones this client prepared statements on",
				"those keep their statements", h, note), "")
		default:
			p.Report(o.st, -1, sev, StateMessage("DEALLOCATE "+o.name+" may run on a server connection that never prepared it",
				"it then fails, and the connection that did keeps the statement", h, note), "")
		}
	}
}
