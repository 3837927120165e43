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
	Crossed:  crossedLock,
	APIs:     advisoryAPIs,
}

// advisoryAPIs are the driver APIs that take or release a session-level
// advisory lock.
var advisoryAPIs = append([]DriverAPI{
	sqlxAdvisoryLock("acquire"),
	sqlxAdvisoryLock("try_acquire"),
	{
		API: "Migrator.run", Library: "sqlx, Rust", When: "unless the file calls set_locking(false)", Severity: Warning, State: effects.AdvisoryLock,
		Text:   "{recv}.run(…)",
		Does:   "runs sqlx migrations under a session-level advisory lock (the migrator locks by default)",
		Breaks: "the lock and its release may run on different server connections, so the lock stays held and the next migration run waits for it",
		Fix:    "run migrations directly against PostgreSQL, not through the pooler; behind a transaction pooler turn the lock off with set_locking(false) and make sure only one process migrates at a time",
	},
}, sequelAdvisory()...)

// sqlxAdvisoryLock is a method of sqlx's PgAdvisoryLock that takes the
// lock.
func sqlxAdvisoryLock(method string) DriverAPI {
	text := "{recv}." + method + "(…)"
	return DriverAPI{API: "PgAdvisoryLock." + method, Library: "sqlx, Rust", Severity: Error, State: effects.AdvisoryLock,
		Text:   text,
		Does:   "takes a session-level advisory lock (sqlx's PgAdvisoryLock runs pg_advisory_lock)",
		Breaks: "the guard's release runs as a later statement that may get another server connection, where it fails, and the lock stays with this one, held for its next client"}
}

// sequelAdvisory are the advisory lock functions called in a Sequel
// virtual row block (ds.get{pg_advisory_lock(id)}), which Sequel sends as
// SQL: a lock is a finding as it is in SQL text, an unlock alone is info.
func sequelAdvisory() []DriverAPI {
	var out []DriverAPI
	for _, fn := range advisoryFuncs {
		a := DriverAPI{API: "Sequel." + fn, Library: "Sequel, Ruby", When: "in a virtual row block", Severity: Error, State: effects.AdvisoryLock,
			Text:    "SELECT " + fn + "(…)",
			Subject: fn + "(…) in a Sequel virtual row",
			Does:    "takes a session-level lock that COMMIT does not release",
			Breaks:  "it stays with the server connection, so that connection's next client holds it too, and the unlock may run on another connection and fail"}
		if slices.Contains(advisoryUnlockFuncs, fn) {
			a.Severity = Info
			a.Does = "releases a session-level lock on whichever server connection this statement gets"
			a.Breaks = "not necessarily the one that took it"
		}
		out = append(out, a)
	}
	return out
}

var advisoryLockFuncs = []string{"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared"}
var advisoryUnlockFuncs = []string{"pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all"}
var advisoryFuncs = append(slices.Clone(advisoryLockFuncs), advisoryUnlockFuncs...)

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
	h, note := p.Target.Handle(effects.AdvisoryLock)
	pairs := p.Group.pairing()
	type lock struct {
		st *Stmt
		i  int
		e  effects.Effect
		h  *effects.Held
	}
	var locks []lock
	for i, st := range p.Group.Stmts {
		if st.Node == nil {
			continue
		}
		for j, e := range st.Changes() {
			step := pairs.stepOf(i, j)
			switch e.Kind {
			case effects.AdvisoryLock:
				locks = append(locks, lock{st, i, e, step.Held})
			case effects.AdvisoryUnlock, effects.AdvisoryUnlockAll:
				// In one transaction an unlock pairs with a lock taken before
				// it that it may release (in a routine body, each branch may
				// unlock the same lock). On its own it may run on a
				// connection that holds nothing.
				if !p.Group.Explicit || !slices.ContainsFunc(locks, func(l lock) bool { return effects.Releases(e, l.e) }) {
					p.Report(st, e.Location, Info, StateMessage(callLabel(e)+" releases a lock taken in an earlier transaction, which may have run on another server connection",
						"there it returns false and the lock stays held", h, note), "")
				}
			}
		}
	}
	for _, l := range locks {
		end, released := pairs.endedAfter(l.h, l.i)
		if !released {
			end = len(p.Group.Stmts)
		}
		if released && bodyCommitBetween(p.Group, l.i, end) {
			// The CALL keeps its server connection, so the unlock
			// normally lands; what differs from one transaction is that
			// the lock spans several, and an error in any of them ends
			// the call before the unlock.
			p.Report(l.st, l.e.Location, Adjust(Warning, h), StateMessage(callLabel(l.e)+" takes a session-level lock and holds it across a COMMIT of the procedure until the unlock after it",
				"an error in any later transaction of the call ends it before the unlock (an exception handler cannot wrap a COMMIT), and the lock stays with the server connection, held for its next client while the next run elsewhere finds it taken", h, note), "")
			continue
		}
		if released {
			p.Report(l.st, l.e.Location, Adjust(Warning, h), StateMessage(callLabel(l.e)+" takes a session-level lock and releases it in the same transaction",
				"an error before the unlock leaves the lock on the server connection, held for its next client", h, note), "")
			continue
		}
		p.Report(l.st, l.e.Location, Adjust(Error, h), StateMessage(callLabel(l.e)+" takes a session-level lock that COMMIT does not release",
			"it stays with the server connection, so that connection's next client holds it too, and the client's own unlock may run on another connection and fail", h, note), "")
	}
}
