package rules

import "fmt"

// AdvisoryLockSession flags session-level advisory lock functions.
var AdvisoryLockSession = &Rule{
	ID:       "advisory-lock-session",
	Title:    "session-level advisory lock",
	Severity: Error,
	Fix:      "use pg_advisory_xact_lock / pg_try_advisory_xact_lock inside the transaction that needs the lock: it is released at COMMIT or ROLLBACK",
	Funcs:    append(append([]string{}, advisoryLockFuncs...), advisoryUnlockFuncs...),
	Check:    checkAdvisoryLock,
}

var advisoryLockFuncs = []string{"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared"}
var advisoryUnlockFuncs = []string{"pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all"}

// lockKey renders a call's constant key arguments; ok is false when any
// argument is not a constant.
func lockKey(c Call) (string, bool) {
	key := ""
	for _, a := range c.Args {
		k, ok := ConstKey(a)
		if !ok {
			return "", false
		}
		key += k + ","
	}
	return key, true
}

func checkAdvisoryLock(p *Pass) {
	h, note := p.Target.Handle(StateAdvisoryLock)
	type pos struct{ stmt, call int }
	var locks []pos
	released := map[pos]bool{}
	for i, st := range p.Group.Stmts {
		for j, c := range st.CallsNamed(advisoryLockFuncs...) {
			_ = c
			locks = append(locks, pos{i, j})
		}
	}
	// An unlock later in the same explicit transaction releases the locks
	// taken before it with the same key (any key when not constant).
	unlockMatched := map[[2]int]bool{}
	if p.Group.Explicit {
		for i, st := range p.Group.Stmts {
			for j, u := range st.CallsNamed(advisoryUnlockFuncs...) {
				ukey, uconst := lockKey(u)
				for _, l := range locks {
					if l.stmt > i {
						continue
					}
					lc := p.Group.Stmts[l.stmt].CallsNamed(advisoryLockFuncs...)[l.call]
					if l.stmt == i && lc.Location > u.Location {
						continue
					}
					lkey, lconst := lockKey(lc)
					if u.Name == "pg_advisory_unlock_all" || !uconst || !lconst || ukey == lkey {
						released[l] = true
						unlockMatched[[2]int{i, j}] = true
					}
				}
			}
		}
	}
	for _, l := range locks {
		st := p.Group.Stmts[l.stmt]
		c := st.CallsNamed(advisoryLockFuncs...)[l.call]
		if released[l] {
			p.Report(st, c.Location, Adjust(Warning, h), fmt.Sprintf("%s is taken and released in one transaction: it works, but an error before the unlock leaves the lock on the server connection; %s", c.Name, note), "")
			continue
		}
		p.Report(st, c.Location, Adjust(Error, h), fmt.Sprintf("%s takes a session-level lock that outlives the transaction: it stays on the server connection, so the client's own unlock may run on another connection and fail while the lock is held for clients that never asked for it; %s", c.Name, note), "")
	}
	for i, st := range p.Group.Stmts {
		for j, u := range st.CallsNamed(advisoryUnlockFuncs...) {
			if unlockMatched[[2]int{i, j}] {
				continue
			}
			p.Report(st, u.Location, Info, fmt.Sprintf("%s releases a session-level lock taken in another transaction, which may have run on another server connection: it then returns false and the lock stays held; %s", u.Name, note), "")
		}
	}
}
