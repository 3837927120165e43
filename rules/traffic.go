package rules

// The rules in this file need captured traffic: analyze finds them in a
// capture, scan cannot see them in SQL text (startup-parameter and
// protocol-prepare are also found by scan in the settings of a source
// tree, with StartupHandling and ProtocolPrepareHandling).

// ProtocolPrepare is a named extended-protocol statement used across
// transactions.
var ProtocolPrepare = &Rule{
	ID:       "protocol-prepare",
	Title:    "named protocol-level prepared statement used in a later transaction",
	Severity: Error,
	Fix:      "use a pooler that re-prepares per server connection (PgBouncer ≥ 1.21 with max_prepared_statements, pgpoolcheck), or turn the driver's statement cache off",
	Kind:     TrafficRule,
	Settings: true,
}

// UnnamedStatementReuse is the unnamed statement bound after a Sync.
var UnnamedStatementReuse = &Rule{
	ID:       "unnamed-statement-reuse",
	Title:    "unnamed statement parsed before a Sync and bound after it",
	Severity: Error,
	Fix:      "send Parse, Bind and Execute in one round trip (pgx QueryExecModeExec; lib/pq binary_parameters=yes) or use pgpoolcheck, which re-parses the unnamed statement per client",
	Kind:     TrafficRule,
}

// StartupParameter is a startup parameter the target pooler does not keep.
var StartupParameter = &Rule{
	ID:       "startup-parameter",
	Title:    "startup parameter the pooler refuses or does not keep per client",
	Severity: Warning,
	Fix:      "set the parameter per role or database (ALTER ROLE … SET) or with SET LOCAL inside transactions",
	Kind:     TrafficRule,
	Settings: true,
}

// IdleInTransaction is a transaction left open while the client is idle.
var IdleInTransaction = &Rule{
	ID:       "idle-in-transaction",
	Title:    "transaction left open while the client is idle",
	Severity: Warning,
	Fix:      "keep transactions short and commit before waiting on anything else; set idle_in_transaction_session_timeout",
	Kind:     TrafficRule,
}

// ProtocolPrepareHandling says what target t does with a named
// protocol-level statement used in a later transaction: the severity of
// the finding and why (rules/docs/protocol-prepare.md).
func ProtocolPrepareHandling(t Target) (Severity, string) {
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

// StartupHandling says what target t does with startup parameter name
// (lower-case) when it is not one of the tracked ones: the severity of
// the finding and why (rules/docs/startup-parameter.md).
func StartupHandling(t Target, name string) (Severity, string) {
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
