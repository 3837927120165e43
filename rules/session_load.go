package rules

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// SessionLoad flags LOAD.
var SessionLoad = &Rule{
	ID:       "session-load",
	Title:    "LOAD of a shared library for the session",
	Severity: Warning,
	Fix:      "load the library for every session with session_preload_libraries or shared_preload_libraries (or ALTER ROLE … SET session_preload_libraries)",
	Check:    checkSessionLoad,
}

func checkSessionLoad(p *Pass) {
	h, note := p.Target.Handle(effects.Load)
	for _, st := range p.Group.Stmts {
		for _, e := range st.Changes() {
			if e.Kind == effects.Load {
				p.Report(st, -1, Adjust(Warning, h), StateMessage(fmt.Sprintf("LOAD '%s' loads the library into this server process only", e.Name),
					"the client's later transactions may run without it, and the next client of this connection gets it unasked", h, note), "")
			}
		}
	}
}
