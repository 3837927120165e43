package rules

import "fmt"

// Listen flags LISTEN.
var Listen = &Rule{
	ID:       "listen",
	Title:    "LISTEN registers the server connection, not the client",
	Severity: Error,
	Fix:      "listen on a dedicated connection that bypasses the pooler (or a session-mode pool); NOTIFY and pg_notify() are safe through it",
	Check:    checkListen,
}

func checkListen(p *Pass) {
	h, note := p.Target.Handle(StateListen)
	for _, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		if l := st.Node.GetListenStmt(); l != nil {
			p.Report(st, -1, Adjust(Error, h), fmt.Sprintf("LISTEN %s registers the server connection: notifications arrive on it between this client's transactions, are lost for this client and reach whichever client holds the connection next; %s", l.Conditionname, note), "")
		}
		if u := st.Node.GetUnlistenStmt(); u != nil {
			ch := u.Conditionname
			if ch == "" {
				ch = "*"
			}
			p.Report(st, -1, Info, fmt.Sprintf("UNLISTEN %s acts on whatever server connection this transaction runs on, not the one that ran LISTEN; %s", ch, note), "")
		}
	}
}
