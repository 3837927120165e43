package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"
)

// The rules in this file need captured traffic: analyze finds them in a
// capture, scan cannot see them in SQL text (startup-parameter and
// protocol-prepare are also found by scan in the settings of a source
// tree: their Settings, driver_settings.go). Their checks look at one
// traffic event (traffic_event.go).

// ProtocolPrepare is a named extended-protocol statement used across
// transactions.
var ProtocolPrepare = &Rule{
	ID:       "protocol-prepare",
	Title:    "named protocol-level prepared statement used in a later transaction",
	Severity: Error,
	Fix:      "use a pooler that re-prepares per server connection (PgBouncer ≥ 1.21 with max_prepared_statements, pgpoolcheck), or turn the driver's statement cache off",
	Kind:     TrafficRule,
	Traffic:  checkProtocolPrepare,
	Settings: prepareSettings,

	judgeSetting: judgePrepareSetting,
}

func checkProtocolPrepare(p *TrafficPass) {
	ev := p.Event
	switch ev.Kind {
	case NamedReuse:
		sev, what := protocolPrepareHandling(p.Target)
		p.Report(sev, fmt.Sprintf("the named protocol-level statement %s (%s) is prepared in one transaction and used in later ones: %s", namePattern(ev.Name), driverOf(ev.Name), what), "", "")
	case ProtocolDeallocate:
		// PgBouncer 1.21+ prepares the statement on the server under a
		// name of its own and passes SQL through unchanged, so the
		// command fails there in any transaction; before 1.21 it fails
		// when it reaches another server connection than the Parse did.
		var sev Severity
		var what string
		switch p.Target {
		case PgBouncer:
			sev, what = Error, "PgBouncer 1.21+ keeps it on the server under a name of its own and does not rewrite SQL, so the command fails with \"prepared statement does not exist\" (use the protocol's Close, e.g. psycopg 3 with libpq 17, or prepare_threshold=None)"
		case PgPoolCheck:
			sev, what = Info, "pgpoolcheck sends it with the server's name of the statement"
		case RDSProxy:
			return // the session is pinned since the Parse
		default:
			if ev.SameTx {
				return // the same transaction: the same server connection
			}
			sev, what = p.Rule.Severity, "behind a transaction-mode pooler it may reach another server connection than the Parse: \"prepared statement does not exist\""
		}
		p.Report(sev, fmt.Sprintf("SQL DEALLOCATE of the protocol-level statement %s (%s): %s", namePattern(ev.Name), driverOf(ev.Name), what), "", "DEALLOCATE "+namePattern(ev.Name))
	}
}

// protocolPrepareHandling says what target t does with a named
// protocol-level statement used in a later transaction: the severity of
// the finding and why (rules/docs/protocol-prepare.md).
func protocolPrepareHandling(t Target) (Severity, string) {
	switch t {
	case PgBouncer:
		return Info, "PgBouncer 1.21+ with max_prepared_statements set re-prepares it on whichever server connection the client gets (check that setting is on)"
	case PgPoolCheck:
		return Info, "pgpoolcheck re-prepares it on whichever server connection the client gets"
	case PgDog:
		return Info, "PgDog re-prepares it on whichever server connection the client gets"
	case RDSProxy:
		return Warning, "RDS Proxy pins the session: multiplexing is lost for this client"
	case PgBouncerLegacy:
		return Error, "PgBouncer before 1.21 sends the later Bind to any server connection: \"prepared statement does not exist\", or another client's statement of the same name"
	}
	return Error, "a transaction-mode pooler sends the later Bind to any server connection: \"prepared statement does not exist\", or another client's statement of the same name"
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

// UnnamedStatementReuse is the unnamed statement bound after a Sync.
var UnnamedStatementReuse = &Rule{
	ID:       "unnamed-statement-reuse",
	Title:    "unnamed statement parsed before a Sync and bound after it",
	Severity: Error,
	Fix:      "send Parse, Bind and Execute in one round trip (pgx QueryExecModeExec; lib/pq binary_parameters=yes) or use pgpoolcheck, which re-parses the unnamed statement per client",
	Kind:     TrafficRule,
	Traffic:  checkUnnamedReuse,
}

func checkUnnamedReuse(p *TrafficPass) {
	if p.Event.Kind != UnnamedReuse {
		return
	}
	sev, what := p.Rule.Severity, "behind a transaction-mode pooler the Bind may reach another server connection, which has no such statement or someone else's (no pooler setting fixes this)"
	if p.Target == PgPoolCheck {
		sev, what = Info, "pgpoolcheck re-parses the unnamed statement for its client, so the Bind finds it"
	}
	p.Report(sev, "the unnamed statement is parsed, then Sync ends the round trip outside a transaction, and it is bound in the next one: "+what, "", "")
}

// StartupParameter is a startup parameter the target pooler does not keep.
var StartupParameter = &Rule{
	ID:       "startup-parameter",
	Title:    "startup parameter the pooler refuses or does not keep per client",
	Severity: Warning,
	Fix:      "set the parameter per role or database (ALTER ROLE … SET) or with SET LOCAL inside transactions",
	Kind:     TrafficRule,
	Traffic:  checkStartupParameter,
	Settings: startupSettings,

	judgeSetting: judgeStartupSetting,
}

func checkStartupParameter(p *TrafficPass) {
	ev := p.Event
	if ev.Kind != StartupParam {
		return
	}
	lower := strings.ToLower(ev.Name)
	switch lower {
	case "user", "database", "application_name", "replication", "password":
		return
	}
	if pgparams.IsTracked(lower) {
		return
	}
	what := fmt.Sprintf("the client sends startup parameter %s=%s", ev.Name, Clip(ev.Value, 60))
	if lower == "options" && p.Target == PgBouncer {
		// PgBouncer 1.20+ parses options and keeps the -c settings of
		// the tracked parameters.
		untracked := untrackedOptions(ev.Value)
		if len(untracked) == 0 {
			return
		}
		what += " with settings PgBouncer does not track (" + strings.Join(untracked, ", ") + ")"
	}
	sev, why := startupHandling(p.Target, lower)
	fix := ""
	if lower == "options" {
		fix = "remove the -c settings from the connection's options and set them per role or database (ALTER ROLE … SET), or with SET LOCAL inside transactions"
	}
	p.Report(sev, what+": "+why, fix, "param:"+lower)
}

// untrackedOptions returns what of a startup options string PgBouncer
// does not track, read as the server reads it (pgparams.Options): the
// names (lower-case) of its settings that are not tracked parameters, and
// its other switches as written, which PgBouncer refuses.
func untrackedOptions(v string) []string {
	var out []string
	for _, o := range pgparams.Options(v, nil) {
		switch {
		case o.Err != nil:
			out = append(out, v[o.Start:o.End])
		case !pgparams.IsTracked(o.Name):
			out = append(out, strings.ToLower(o.Name))
		}
	}
	return out
}

// startupHandling says what target t does with startup parameter name
// (lower-case) when it is not one of the tracked ones: the severity of
// the finding and why (rules/docs/startup-parameter.md).
func startupHandling(t Target, name string) (Severity, string) {
	switch t {
	case PgBouncer, PgBouncerLegacy:
		if name == "extra_float_digits" {
			return Warning, "PgBouncer refuses the connection (unsupported startup parameter) unless ignore_startup_parameters lists it, and then drops it (harmless for this one)"
		}
		return Error, "PgBouncer refuses the connection (unsupported startup parameter) unless ignore_startup_parameters lists it, and then drops it silently: the client runs with the server's default"
	case PgDog:
		return Info, "PgDog treats it like SET and replays it on the server connections the client gets"
	case RDSProxy:
		return Warning, "RDS Proxy pins sessions whose startup parameters it does not track: multiplexing is lost for this client"
	case PgPoolCheck:
		return Info, "pgpoolcheck (--on-session-state preserve) replays it on each server connection the client gets, like its SETs"
	}
	return Warning, "a transaction-mode pooler may run the client's transactions on server connections opened without it"
}

// Clip shortens a value quoted in a finding's message to at most n bytes,
// at a character boundary, marking the cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// IdleInTransaction is a transaction left open while the client is idle.
var IdleInTransaction = &Rule{
	ID:       "idle-in-transaction",
	Title:    "transaction left open while the client is idle",
	Severity: Warning,
	Fix:      "keep transactions short and commit before waiting on anything else; set idle_in_transaction_session_timeout",
	Kind:     TrafficRule,
	Traffic:  checkIdleInTransaction,
}

func checkIdleInTransaction(p *TrafficPass) {
	ev := p.Event
	if ev.Kind != IdleTransaction || ev.Idle <= ev.Threshold {
		return
	}
	tail := ""
	if ev.UntilEnd {
		tail = " until the session ended"
	}
	p.Report(p.Rule.Severity, fmt.Sprintf("the client left its transaction open and idle for more than %s%s after this statement: the server connection stays tied to it, so a transaction-mode pooler cannot give it to other clients, and the open transaction holds its locks and snapshot", ev.Threshold, tail), "", "")
}
