package traffic

// What analyze finds in the protocol itself rather than in SQL: startup
// parameters, named and unnamed prepared statements, idle transactions.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// startup checks the startup parameters against the target.
func (s *session) startup(ev *capture.Event) {
	names := make([]string, 0, len(ev.Params))
	for name := range ev.Params {
		names = append(names, name)
	}
	slices.Sort(names)
	t := s.a.cfg.JudgedTarget()
	for _, name := range names {
		v := ev.Params[name]
		lower := strings.ToLower(name)
		switch lower {
		case "user", "database", "application_name", "replication", "password":
			continue
		}
		if rules.TrackedParams[lower] {
			continue
		}
		what := fmt.Sprintf("the client sends startup parameter %s=%s", name, rules.Clip(v, 60))
		if lower == "options" && t == rules.PgBouncer {
			// PgBouncer 1.20+ parses options and keeps the -c settings of
			// the tracked parameters.
			untracked := untrackedOptions(v)
			if len(untracked) == 0 {
				continue
			}
			what += " with settings PgBouncer does not track (" + strings.Join(untracked, ", ") + ")"
		}
		sev, why := rules.StartupHandling(t, lower)
		o := s.occurrence(rules.StartupParameter, sev, s.file, ev.Line, ev.T)
		o.key = "param:" + lower
		o.msg = what + ": " + why
		if lower == "options" {
			o.fix = "remove the -c settings from the connection's options and set them per role or database (ALTER ROLE … SET), or with SET LOCAL inside transactions"
		}
		s.a.add(o)
	}
}

// untrackedOptions returns the names of the settings in a startup options
// string (-c name=value, --name=value) that are not tracked parameters.
func untrackedOptions(v string) []string {
	var out []string
	fields := strings.Fields(v)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		var setting string
		switch {
		case f == "-c" && i+1 < len(fields):
			i++
			setting = fields[i]
		case strings.HasPrefix(f, "-c"):
			setting = f[2:]
		case strings.HasPrefix(f, "--"):
			setting = f[2:]
		default:
			out = append(out, f) // another switch: PgBouncer refuses it
			continue
		}
		name, _, _ := strings.Cut(setting, "=")
		name = strings.ToLower(strings.ReplaceAll(name, "-", "_"))
		if !rules.TrackedParams[name] {
			out = append(out, name)
		}
	}
	return out
}

// clientActive ends an idle-in-transaction gap when the client speaks.
func (s *session) clientActive(ev *capture.Event) {
	if s.idleSince < 0 {
		return
	}
	s.idleGap(ev.T-s.idleSince, "")
	s.idleSince = -1
}

// clientGone ends an idle gap at the end of the session.
func (s *session) clientGone(t int64) {
	if s.idleSince >= 0 && t >= s.idleSince {
		s.idleGap(t-s.idleSince, " until the session ended")
	}
	s.idleSince = -1
}

func (s *session) idleGap(d int64, tail string) {
	if time.Duration(d) <= s.a.opt.IdleThreshold {
		return
	}
	o := s.occurrence(rules.IdleInTransaction, rules.IdleInTransaction.Severity, s.idleFile, s.idleLine, s.idleSince)
	o.dur = time.Duration(d)
	if e := s.lastRun; e != nil {
		o.file, o.line, o.stmt, o.fp, o.key = e.file, e.line, e.p.text, e.p.fp, e.p.fp
		if o.key == "" {
			o.key = e.p.text
		}
	}
	o.msg = fmt.Sprintf("the client left its transaction open and idle for more than %s%s after this statement: the server connection stays tied to it, so a transaction-mode pooler cannot give it to other clients, and the open transaction holds its locks and snapshot", s.a.opt.IdleThreshold, tail)
	s.a.add(o)
}

// useStatement records a Bind or Describe of a prepared statement and
// returns its query string.
func (s *session) useStatement(name string, ev *capture.Event) string {
	if name == "" {
		u := s.unnamed
		if u.ok && u.sql != "" && u.tx < s.cur.num && ev.Kind == capture.Bind {
			o := s.occurrence(rules.UnnamedStatementReuse, unnamedSeverity(s.a.cfg.JudgedTarget()), u.file, u.line, ev.T)
			o.stmt, o.fp = u.sql, s.a.fingerprint(u.sql)
			o.key = o.fp
			o.msg = "the unnamed statement is parsed, then Sync ends the round trip outside a transaction, and it is bound in the next one: " + unnamedWhat(s.a.cfg.JudgedTarget())
			s.a.add(o)
		}
		return u.sql
	}
	ps, ok := s.named[name]
	if !ok {
		return ""
	}
	if ps.tx < s.cur.num {
		sev, what := rules.ProtocolPrepareHandling(s.a.cfg.JudgedTarget())
		o := s.occurrence(rules.ProtocolPrepare, sev, ps.file, ps.line, ev.T)
		o.stmt, o.fp = ps.sql, s.a.fingerprint(ps.sql)
		o.key = o.fp
		if o.key == "" {
			o.key = ps.sql
		}
		o.msg = fmt.Sprintf("the named protocol-level statement %s (%s) is prepared in one transaction and used in later ones: %s", namePattern(name), driverOf(name), what)
		s.a.add(o)
		// Count it once per transaction of use.
		ps.tx = s.cur.num
		s.named[name] = ps
	}
	return ps.sql
}

// protocolDeallocate reports an SQL DEALLOCATE of a protocol-level
// statement (psycopg 3 with libpq before 17 evicts its statements so).
// PgBouncer 1.21+ prepares the statement on the server under a name of
// its own and passes SQL through unchanged, so the command fails there in
// any transaction; before 1.21 it fails when it reaches another server
// connection than the Parse did.
func (s *session) protocolDeallocate(name string, ps protoStmt, e *stmtRun) {
	t := s.a.cfg.JudgedTarget()
	var sev rules.Severity
	var what string
	switch t {
	case rules.PgBouncer:
		sev, what = rules.Error, "PgBouncer 1.21+ keeps it on the server under a name of its own and does not rewrite SQL, so the command fails with \"prepared statement does not exist\" (use the protocol's Close, e.g. psycopg 3 with libpq 17, or prepare_threshold=None)"
	case rules.PgPoolCheck:
		sev, what = rules.Info, "pgpoolcheck sends it with the server's name of the statement"
	case rules.RDSProxy:
		return // the session is pinned since the Parse
	default:
		if ps.tx >= s.cur.num {
			return // the same transaction: the same server connection
		}
		sev, what = rules.ProtocolPrepare.Severity, "behind a transaction-mode pooler it may reach another server connection than the Parse: \"prepared statement does not exist\""
	}
	o := s.occurrence(rules.ProtocolPrepare, sev, e.file, e.line, e.t)
	o.stmt, o.fp = e.p.text, e.p.fp
	o.key = "DEALLOCATE " + namePattern(name)
	o.msg = fmt.Sprintf("SQL DEALLOCATE of the protocol-level statement %s (%s): %s", namePattern(name), driverOf(name), what)
	s.a.add(o)
}

func unnamedSeverity(t rules.Target) rules.Severity {
	if t == rules.PgPoolCheck {
		return rules.Info
	}
	return rules.UnnamedStatementReuse.Severity
}

func unnamedWhat(t rules.Target) string {
	if t == rules.PgPoolCheck {
		return "pgpoolcheck re-parses the unnamed statement for its client, so the Bind finds it"
	}
	return "behind a transaction-mode pooler the Bind may reach another server connection, which has no such statement or someone else's (no pooler setting fixes this)"
}

// drivers names the client library from a statement-name prefix.
var drivers = []struct{ prefix, driver string }{
	{"stmtcache_", "pgx's statement cache"},
	{"lrupsc_", "pgx v4's statement cache"},
	{"S_", "the PostgreSQL JDBC driver"},
	{"_pg3_", "psycopg 3"},
	{"__asyncpg_stmt_", "asyncpg"},
	{"sqlx_s_", "sqlx"},
	{"P_", "pgbench -M prepared"},
	{"pdo_stmt_", "PHP PDO"},
	{"_p", "Npgsql"},
}

func driverOf(name string) string {
	for _, d := range drivers {
		if strings.HasPrefix(name, d.prefix) && len(name) > len(d.prefix) {
			if d.prefix == "_p" && !digits(name[2:]) {
				continue
			}
			return "named by " + d.driver
		}
	}
	if len(name) > 1 && name[0] == 'a' && digits(name[1:]) {
		return "named by Rails (ActiveRecord)"
	}
	return "named by the application"
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// namePattern shows a statement name with its varying tail elided, so
// that one finding stands for every statement of a driver's cache.
func namePattern(name string) string {
	for _, d := range drivers {
		if strings.HasPrefix(name, d.prefix) && len(name) > len(d.prefix) {
			return strconv.Quote(d.prefix + "…")
		}
	}
	return strconv.Quote(name)
}
