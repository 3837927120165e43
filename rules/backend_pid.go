package rules

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
	_, note := p.Target.Handle(StateBackendIdentity)
	for _, st := range p.Group.Stmts {
		for _, c := range st.CallsNamed(backendIdentityFuncs...) {
			msg := c.Name + "() identifies the server process of this transaction only: the client's next transaction may run in another one; " + note
			if c.Name != "pg_backend_pid" {
				msg = c.Name + "() returns the pooler's address, not the application's: the pooler is the server's client"
			}
			p.Report(st, c.Location, Info, msg, "")
		}
	}
}
