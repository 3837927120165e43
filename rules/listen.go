package rules

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Listen flags LISTEN.
var Listen = &Rule{
	ID:       "listen",
	Title:    "LISTEN registers the server connection, not the client",
	Severity: Error,
	Fix:      "listen on a dedicated connection that bypasses the pooler (or a session-mode pool); NOTIFY and pg_notify() are safe through it",
	Check:    checkListen,
}

// listenOp is LISTEN channel (listen true) or UNLISTEN channel ("" for
// UNLISTEN *) of statement i of a group.
type listenOp struct {
	i       int
	channel string
	listen  bool
}

func checkListen(p *Pass) {
	h, note := p.Target.Handle(StateListen)
	var ops []listenOp
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// LISTEN takes effect at COMMIT; an aborted one never does, and
			// PREPARE TRANSACTION refuses a transaction that ran LISTEN or
			// UNLISTEN (it rolls back).
			continue
		}
		for _, e := range st.Changes() {
			switch e.Kind {
			case effects.Listen:
				ops = append(ops, listenOp{i, e.Name, true})
			case effects.Unlisten, effects.UnlistenAll:
				ops = append(ops, listenOp{i, e.Name, false})
			}
		}
	}
	// In one transaction, UNLISTEN after LISTEN cancels it: neither is a
	// finding.
	paired := make([]bool, len(ops))
	if p.Group.Explicit {
		for a, l := range ops {
			for b, u := range ops[a+1:] {
				if l.listen && !u.listen && (u.channel == "" || strings.EqualFold(u.channel, l.channel)) {
					paired[a], paired[a+1+b] = true, true
				}
			}
		}
	}
	for k, o := range ops {
		if paired[k] {
			continue
		}
		st := p.Group.Stmts[o.i]
		if o.listen {
			p.Report(st, -1, Adjust(Error, h), StateMessage("LISTEN "+o.channel+" subscribes the server connection, not the client",
				"notifications arrive on it after this transaction, so this client misses them and the next client of the connection receives them", h, note), "")
			continue
		}
		ch := o.channel
		if ch == "" {
			ch = "*"
		}
		p.Report(st, -1, Info, StateMessage("UNLISTEN "+ch+" acts on whichever server connection this transaction gets, not necessarily the one that ran LISTEN",
			"that connection stays subscribed", h, note), "")
	}
}
