package analyzer

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// migratorFix is the fix of a migrator's session-level lock.
const migratorFix = "run migrations directly against PostgreSQL, not through the pooler; behind a transaction pooler turn the lock off with set_locking(false) and make sure only one process migrates at a time"

// sessionCallFindings reports the driver calls of a file that keep
// session state without SQL in the code (extract.SessionCalls: sqlx's
// PgListener, PgAdvisoryLock and migrator) as listen and
// advisory-lock-session findings.
func (c *Config) sessionCallFindings(name string, lang extract.Language, src []byte, lines *sqlparse.LineIndex) []Finding {
	listen, lock := c.enabled(rules.Listen.ID), c.enabled(rules.AdvisoryLockSession.ID)
	if !listen && !lock {
		return nil
	}
	calls := extract.SessionCalls(lang, src)
	if len(calls) == 0 {
		return nil
	}
	var fs []Finding
	for _, s := range calls {
		typ, method, _ := strings.Cut(s.API, ".")
		var (
			rule               *rules.Rule
			state              effects.Kind
			base               rules.Severity
			what, breaks, text string
			fix                string
		)
		switch typ {
		case "PgListener":
			rule, state, base, fix = rules.Listen, effects.Listen, rules.Listen.Severity, rules.Listen.Fix
			if method == "connect" || method == "connect_with" {
				text = "PgListener::" + method + "(…)"
				what = text + " makes an sqlx PgListener, which sends LISTEN on its connection and waits there for notifications"
			} else {
				text = s.Receiver + "." + method + "(…)"
				what = text + " subscribes the server connection to the channel, not the client (sqlx's PgListener sends LISTEN)"
			}
			breaks = "between transactions that connection serves other clients, so recv() misses the notifications and the connection's next client receives them"
		case "PgAdvisoryLock":
			rule, state, base, fix = rules.AdvisoryLockSession, effects.AdvisoryLock, rules.Error, rules.AdvisoryLockSession.Fix
			text = s.Receiver + "." + method + "(…)"
			what = text + " takes a session-level advisory lock (sqlx's PgAdvisoryLock runs pg_advisory_lock)"
			breaks = "the guard's release runs as a later statement that may get another server connection, where it fails, and the lock stays with this one, held for its next client"
		case "Migrator":
			rule, state, base, fix = rules.AdvisoryLockSession, effects.AdvisoryLock, rules.Warning, migratorFix
			text = s.Receiver + ".run(…)"
			what = text + " runs sqlx migrations under a session-level advisory lock (the migrator locks by default)"
			breaks = "the lock and its release may run on different server connections, so the lock stays held and the next migration run waits for it"
		default:
			continue
		}
		if !c.enabled(rule.ID) {
			continue
		}
		h, note := c.target().Handle(state)
		start, end := lines.Position(s.Start), lines.Position(s.End)
		fs = append(fs, Finding{
			Rule:     rule.ID,
			Severity: rules.Adjust(base, h),
			File:     name,
			Line:     start.Line, Column: start.Column, EndLine: end.Line, EndColumn: end.Column,
			Message:     rules.StateMessage(what, breaks, h, note),
			Fix:         fix,
			Statement:   text,
			SourceLine:  lines.LineText(start.Line),
			stmtLine:    start.Line,
			literalLine: start.Line,
		})
	}
	return fs
}
