package rules

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// SQLPrepare flags SQL-level prepared statements.
var SQLPrepare = &Rule{
	ID:       "sql-prepare",
	Title:    "SQL-level PREPARE / EXECUTE / DEALLOCATE",
	Severity: Error,
	Fix:      "let the driver prepare statements over the extended protocol (which PgBouncer ≥ 1.21 and pgpoolcheck re-prepare per connection), or PREPARE and EXECUTE inside one transaction and DEALLOCATE before COMMIT",
	Check:    checkSQLPrepare,
}

func checkSQLPrepare(p *Pass) {
	h, note := p.Target.Handle(StateSQLPrepare)
	sev := Adjust(Error, h)
	for _, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		switch {
		case st.Node.GetPrepareStmt() != nil:
			name := st.Node.GetPrepareStmt().Name
			p.Report(st, -1, sev, fmt.Sprintf("PREPARE %s creates a statement on the server connection only: the client's EXECUTE in a later transaction may run on another connection (prepared statement does not exist) and the next client of this one gets \"already exists\"; %s", name, note), "")
		case st.Node.GetDeallocateStmt() != nil:
			name := st.Node.GetDeallocateStmt().Name
			if name == "" {
				p.Report(st, -1, Info, "DEALLOCATE ALL removes the prepared statements of whatever server connection it runs on, not the ones this client made; "+note, "")
				continue
			}
			p.Report(st, -1, sev, fmt.Sprintf("DEALLOCATE %s may run on a server connection that never prepared it; %s", name, note), "")
		default:
			// EXECUTE at top level, under EXPLAIN or CREATE TABLE AS.
			Walk(st.Node, func(m protoreflect.Message) bool {
				switch x := m.Interface().(type) {
				case *pg.ExecuteStmt:
					p.Report(st, -1, sev, fmt.Sprintf("EXECUTE %s needs a statement prepared earlier on the same server connection, which a transaction pooler does not guarantee; %s", x.Name, note), "")
					return false
				case *pg.SelectStmt, *pg.InsertStmt, *pg.UpdateStmt, *pg.DeleteStmt, *pg.CreateStmt:
					return false // EXECUTE cannot sit under these
				}
				return true
			})
		}
	}
}
