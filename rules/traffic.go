package rules

// The rules in this file need captured traffic: analyze finds them in a
// capture, scan cannot see them in SQL text.

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
