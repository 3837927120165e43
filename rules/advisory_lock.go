package rules

import (
	"slices"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// AdvisoryLockSession flags session-level advisory lock functions.
var AdvisoryLockSession = &Rule{
	ID:       "advisory-lock-session",
	Title:    "session-level advisory lock",
	Severity: Error,
	Fix:      "use pg_advisory_xact_lock / pg_try_advisory_xact_lock inside the transaction that needs the lock: it is released at COMMIT or ROLLBACK",
	Funcs:    advisoryFuncs,
	Check:    checkAdvisoryLock,
}

var advisoryLockFuncs = []string{"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared"}
var advisoryUnlockFuncs = []string{"pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all"}
var advisoryFuncs = append(slices.Clone(advisoryLockFuncs), advisoryUnlockFuncs...)

// lockKey returns the key of an advisory lock effect when every argument
// is a constant.
func lockKey(e effects.Effect) (string, bool) {
	for _, k := range strings.Split(e.Arg, ",") {
		if k == "" || k[0] == '$' || k[0] == '?' {
			return "", false
		}
	}
	return e.Arg, true
}

// callLabel renders a call for a message: pg_advisory_lock(42) when the
// arguments are numeric constants, pg_advisory_lock(…) otherwise.
func callLabel(e effects.Effect) string {
	if e.Arg == "" {
		return e.Func + "()"
	}
	var args []string
	for _, k := range strings.Split(e.Arg, ",") {
		if k == "" || k[0] != 'i' && k[0] != 'f' {
			return e.Func + "(…)"
		}
		args = append(args, k[1:])
	}
	return e.Func + "(" + strings.Join(args, ", ") + ")"
}

func checkAdvisoryLock(p *Pass) {
	h, note := p.Target.Handle(StateAdvisoryLock)
	type lock struct {
		st       *Stmt
		e        effects.Effect
		key      string // constant key arguments; "" when not constant
		released bool
		// crossed: a COMMIT or ROLLBACK of the procedure sits between
		// the lock and its unlock.
		crossed bool
	}
	var locks []*lock
	for i, st := range p.Group.Stmts {
		if bodyTxEnd(p.Group, i) {
			for _, l := range locks {
				l.crossed = l.crossed || !l.released
			}
			continue
		}
		for _, e := range st.Changes() {
			switch e.Kind {
			case effects.AdvisoryLock:
				key, _ := lockKey(e)
				locks = append(locks, &lock{st: st, e: e, key: key})
				continue
			case effects.AdvisoryUnlock, effects.AdvisoryUnlockAll:
			default:
				continue
			}
			key, _ := lockKey(e)
			// In one transaction an unlock releases the locks taken before
			// it with the same key; pg_advisory_unlock_all, or a key that is
			// not a constant on either side, may release any of them. On
			// its own an unlock may run on a connection that holds nothing.
			matched := false
			for _, l := range locks {
				if p.Group.Explicit && (e.Kind == effects.AdvisoryUnlockAll || key == "" || l.key == "" || key == l.key) {
					l.released, matched = true, true
				}
			}
			if !matched {
				p.Report(st, e.Location, Info, StateMessage(callLabel(e)+" releases a lock taken in an earlier transaction, which may have run on another server connection",
					"there it returns false and the lock stays held", h, note), "")
			}
		}
	}
	for _, l := range locks {
		if l.released && l.crossed {
			// The CALL keeps its server connection, so the unlock
			// normally lands; what differs from one transaction is that
			// the lock spans several, and an error in any of them ends
			// the call before the unlock.
			p.Report(l.st, l.e.Location, Adjust(Warning, h), StateMessage(callLabel(l.e)+" takes a session-level lock and holds it across a COMMIT of the procedure until the unlock after it",
				"an error in any later transaction of the call ends it before the unlock (an exception handler cannot wrap a COMMIT), and the lock stays with the server connection, held for its next client while the next run elsewhere finds it taken", h, note), "")
			continue
		}
		if l.released {
			p.Report(l.st, l.e.Location, Adjust(Warning, h), StateMessage(callLabel(l.e)+" takes a session-level lock and releases it in the same transaction",
				"an error before the unlock leaves the lock on the server connection, held for its next client", h, note), "")
			continue
		}
		p.Report(l.st, l.e.Location, Adjust(Error, h), StateMessage(callLabel(l.e)+" takes a session-level lock that COMMIT does not release",
			"it stays with the server connection, so that connection's next client holds it too, and the client's own unlock may run on another connection and fail", h, note), "")
	}
}
