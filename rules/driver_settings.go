package rules

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"
)

// The driver settings the rules list (DriverSetting): those that send
// startup parameters (startup-parameter), those that make the driver
// prepare named statements on the server (protocol-prepare), and those
// that the driver or framework turns into a session-level SET on each new
// connection (session-set).

// pgBouncerLegacyOptions is why PgBouncer before 1.20 breaks every setting
// sent in startup parameter options.
const pgBouncerLegacyOptions = "PgBouncer before 1.20 does not read options: it refuses the connection (unsupported startup parameter: options) unless ignore_startup_parameters lists options, and then drops every setting in it silently"

// judgeStartupSetting judges a setting sent as a startup parameter (or in
// options) as startup-parameter judges one in captured traffic
// (startupHandling). The parameters every pooler that matters keeps per
// client are no finding; in options, PgBouncer 1.20+ keeps them too, and
// PgBouncer before 1.20 refuses options whatever they hold.
func judgeStartupSetting(t Target, s *DriverSetting, param, what string) (Severity, string, string, bool) {
	if pgparams.IsTracked(param) && (!s.Options || t != PgBouncerLegacy && t != Generic) {
		return 0, "", "", false
	}
	sev, why := startupHandling(t, param)
	listed := param
	if s.Options {
		listed = "options"
		if t == PgBouncerLegacy {
			sev, why = Error, pgBouncerLegacyOptions
		}
	}
	fix := fmt.Sprintf("set %s per role or database instead (ALTER ROLE … SET %s = …) and remove it from the connection string; listing %s in PgBouncer's ignore_startup_parameters lets the connection through but drops the setting; pgpoolcheck's pooler (--on-session-state preserve) replays it per client", param, param, listed)
	return sev, what + ": " + why, fix, true
}

// startupSettings are the settings that send startup parameters.
var startupSettings = []DriverSetting{
	{Setting: "connstring.param", Library: "libpq-style connection strings", Text: "postgres://…?PARAM=VALUE",
		When:    "a server parameter the driver passes on",
		Example: SettingUse{Param: "search_path", Value: "app"},
		Does:    "the connection string sends startup parameter {param}={value} (drivers that pass unknown parameters on, such as pgx, lib/pq and asyncpg, send it so)"},
	{Setting: "connstring.options", Library: "libpq-style connection strings", Text: "options=-c PARAM=VALUE", Options: true,
		Example: SettingUse{Param: "statement_timeout", Value: "5s", Raw: "-c statement_timeout=5s"},
		Does:    "the connection string's options set {param}={value} ({raw}), sent in startup parameter options"},
	{Setting: "pgx.RuntimeParams", Library: "pgx, Go", Text: `cfg.RuntimeParams["PARAM"] = …`,
		Example: SettingUse{Key: "search_path", Param: "search_path"},
		Does:    "RuntimeParams[{qkey}] is sent by pgx as startup parameter {param}"},
	{Setting: "sqlx.PgConnectOptions.options", Library: "sqlx, Rust", Text: `PgConnectOptions::options([("PARAM", "VALUE")])`, Options: true,
		Example: SettingUse{Param: "search_path", Value: "app"},
		Does:    "PgConnectOptions::options sets {param}={value}, which sqlx sends as -c {param}={value} in startup parameter options"},
	{Setting: "Npgsql.SearchPath", Library: "Npgsql, C#", Text: "Search Path=VALUE", Param: "search_path",
		Example: SettingUse{Key: "Search Path", Value: "app"},
		Does:    "{key}={value} makes Npgsql send startup parameter search_path={value}"},
	{Setting: "Npgsql.Options", Library: "Npgsql, C#", Text: "Options=-c PARAM=VALUE", Options: true,
		Example: SettingUse{Param: "statement_timeout", Value: "5s", Raw: "-c statement_timeout=5s"},
		Does:    "the connection string's Options set {param}={value} ({raw}), sent in startup parameter options"},
	{Setting: "pgjdbc.currentSchema", Library: "pgjdbc, Java", Text: "currentSchema=VALUE", Param: "search_path",
		When:    "in a JDBC URL or a data source's properties",
		Example: SettingUse{Value: "app"},
		Does:    "currentSchema={value} makes pgjdbc send startup parameter search_path={value}"},
	{Setting: "pgjdbc.options", Library: "pgjdbc, Java", Text: "options=-c PARAM=VALUE", Options: true,
		Example: SettingUse{Param: "statement_timeout", Value: "5s", Raw: "-c statement_timeout=5s"},
		Does:    "pgjdbc's options set {param}={value} ({raw}), sent in startup parameter options"},
	{Setting: "Rails.options", Library: "Rails, database.yml", Text: "options: -c PARAM=VALUE", Options: true,
		Example: SettingUse{Param: "statement_timeout", Value: "5s", Raw: "-c statement_timeout=5s"},
		Does:    "database.yml's options set {param}={value} ({raw}), sent in startup parameter options"},
}

// judgePrepareSetting judges a setting that makes the driver keep named
// server-side prepared statements, as protocol-prepare judges their reuse
// in captured traffic (protocolPrepareHandling).
func judgePrepareSetting(t Target, s *DriverSetting, param, what string) (Severity, string, string, bool) {
	sev, why := protocolPrepareHandling(t)
	return sev, what + ": " + why, "", true
}

// reprepare is the part of protocol-prepare's fixes that names the poolers
// that re-prepare.
const reprepare = "use a pooler that re-prepares per server connection (PgBouncer ≥ 1.21 with max_prepared_statements > 0, pgpoolcheck)"

// pdoPrepares is what pdo_pgsql does with ATTR_EMULATE_PREPARES off.
const pdoPrepares = "as a named server-side statement (pdo_stmt_…) prepared on its first execute and used by its later executes, possibly in other transactions"

// pdoPrepareFix is the fix of pdo_pgsql's named statements.
const pdoPrepareFix = "set PDO::ATTR_EMULATE_PREPARES => true (or PDO::PGSQL_ATTR_DISABLE_PREPARES => true, which sends each statement unnamed) in the connection's options, or " + reprepare

// prepareSettings are the settings that make the driver prepare named
// statements on the server connection.
var prepareSettings = []DriverSetting{
	{Setting: "Npgsql.MaxAutoPrepare", Library: "Npgsql, C#", Text: "Max Auto Prepare=N", When: "N > 0",
		Example: SettingUse{Key: "Max Auto Prepare", N: 20},
		Does:    "{key}={n} makes Npgsql prepare the statements it runs often as named server-side statements (_p1, _p2, …) and reuse them in later transactions",
		Fix:     "leave Max Auto Prepare at 0 (Npgsql's default), or " + reprepare},
	{Setting: "pgjdbc.prepareThreshold", Library: "pgjdbc, Java", Text: "prepareThreshold=N", When: "N > 0",
		Example: SettingUse{N: 5},
		Does:    "prepareThreshold={n} makes pgjdbc switch a PreparedStatement to a named server-side statement (S_1, S_2, …) after {n} executions and reuse it in later transactions (pgjdbc's default is 5)",
		Fix:     "set prepareThreshold=0, which keeps pgjdbc on unnamed statements, or " + reprepare},
	{Setting: "pgjdbc.prepareThreshold.negative", Library: "pgjdbc, Java", Text: "prepareThreshold=N", When: "N < 0",
		Example: SettingUse{N: -1},
		Does:    "prepareThreshold={n} makes pgjdbc prepare every PreparedStatement as a named server-side statement (S_1, S_2, …) from its first execution and reuse it in later transactions",
		Fix:     "set prepareThreshold=0, which keeps pgjdbc on unnamed statements, or " + reprepare},
	{Setting: "node-postgres.name", Library: "node-postgres, JavaScript", Text: "client.query({ name: NAME, text: … })", When: "a name that is not empty",
		Example: SettingUse{Value: "fetch-user"},
		Does:    "a node-postgres query named {qvalue} is prepared as a named statement on the server connection and reused by name",
		Fix:     "drop the name (node-postgres then uses the unnamed statement), or run PgBouncer 1.21+ with max_prepared_statements"},
	{Setting: "PHP.pg_prepare", Library: "pgsql extension, PHP", Text: "pg_prepare($conn, NAME, …), pg_send_prepare($conn, NAME, …)", When: "a name that is not \"\"",
		Example: SettingUse{Key: "pg_prepare", Value: "my_query"},
		Does:    "{key}(…, {qshort}, …) makes a named server-side prepared statement that pg_execute runs later, possibly in another transaction",
		Fix:     "pass \"\" as the statement name (the unnamed statement, prepared again before each pg_execute), use pg_query_params, or " + reprepare},
	{Setting: "PDO.ATTR_EMULATE_PREPARES", Library: "pdo_pgsql, PHP", Text: "PDO::ATTR_EMULATE_PREPARES => false",
		When:    "in a file that names pgsql and turns neither attribute on",
		Example: SettingUse{Key: "PDO::ATTR_EMULATE_PREPARES"},
		Does:    "{key} => false makes pdo_pgsql run each PDO::prepare() and PDO::query() " + pdoPrepares,
		Fix:     pdoPrepareFix},
	{Setting: "PDO.dsn", Library: "pdo_pgsql, PHP", Text: `new PDO("pgsql:…")`,
		When: "in a file that turns neither PDO::ATTR_EMULATE_PREPARES nor PDO::PGSQL_ATTR_DISABLE_PREPARES on",
		Does: "this pdo_pgsql connection keeps PDO's default, ATTR_EMULATE_PREPARES off, so each PDO::prepare() and PDO::query() runs " + pdoPrepares,
		Fix:  pdoPrepareFix},
	{Setting: "Laravel.pgsql", Library: "Laravel, PHP", Text: "'driver' => 'pgsql'",
		When: "a connection of config/database.php that is not declared pooled, in a file that turns neither attribute on",
		Does: "this Laravel pgsql connection keeps PDO's default, ATTR_EMULATE_PREPARES off, so each query runs " + pdoPrepares,
		Fix:  pdoPrepareFix},
}

// judgeSessionSetting judges a setting that the driver turns into a
// session-level SET, as session-set judges a SET (sessionParamChange).
func judgeSessionSetting(t Target, s *DriverSetting, param, what string) (Severity, string, string, bool) {
	sev, msg := sessionParamChange(t, param, what)
	return sev, msg, "", true
}

// readOnlyFix is the fix of pgjdbc's readOnlyMode=always.
const readOnlyFix = "keep pgjdbc's default readOnlyMode=transaction, which sends BEGIN READ ONLY inside the transaction instead"

// isolationFix is the fix of pgjdbc's setTransactionIsolation.
const isolationFix = "start each transaction that needs the level with SET TRANSACTION ISOLATION LEVEL … (or BEGIN ISOLATION LEVEL …), or set default_transaction_isolation per role or database (ALTER ROLE … SET)"

// laravelFix is the fix of the keys of a Laravel pgsql connection.
const laravelFix = "set {param} per role or database (ALTER ROLE … SET {param} = …) and remove '{key}' from the connection's configuration"

// laravelDoes is what a key of a Laravel pgsql connection does; %s is the
// statement Laravel runs.
const laravelDoes = "'{key}' => '{value}' in a pgsql connection makes Laravel run %s on each new connection"

// sessionSettings are the settings and calls that the driver or framework
// turns into a session-level SET on each new connection.
var sessionSettings = []DriverSetting{
	{Setting: "pgjdbc.readOnlyMode", Library: "pgjdbc, Java", Text: "readOnlyMode=always", Param: "default_transaction_read_only",
		Does: "readOnlyMode=always makes pgjdbc run SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY (and READ WRITE) when setReadOnly is called in autocommit mode, as Spring's read-only transactions do before they turn autocommit off",
		Fix:  readOnlyFix},
	{Setting: "JDBC.setSchema", Library: "pgjdbc, Java and Kotlin", Text: "conn.setSchema(…)", Param: "search_path",
		When:    "on a Connection, DataSource or HikariCP configuration",
		Example: SettingUse{Recv: "conn.setSchema"},
		Does:    "{recv}(…) makes pgjdbc run SET SESSION search_path",
		Fix:     "set search_path per role or database (ALTER ROLE … SET search_path = …) or schema-qualify names; where it differs per request, run SET LOCAL search_path inside each transaction"},
	{Setting: "JDBC.setTransactionIsolation", Library: "pgjdbc, Java and Kotlin", Text: "conn.setTransactionIsolation(…)", Param: "default_transaction_isolation",
		When:    "any level but TRANSACTION_NONE",
		Example: SettingUse{Recv: "conn.setTransactionIsolation", Level: "SERIALIZABLE"},
		Does:    "{recv}(…) makes pgjdbc run SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level} (outside a transaction: pgjdbc refuses it inside one), which sets the level of every later transaction of the session",
		Fix:     isolationFix},
	{Setting: "Kotlin.transactionIsolation", Library: "pgjdbc, Kotlin", Text: "conn.transactionIsolation = …", Param: "default_transaction_isolation",
		When:    "any level but TRANSACTION_NONE",
		Example: SettingUse{Recv: "conn.transactionIsolation", Level: "SERIALIZABLE"},
		Does:    "setting {recv} makes pgjdbc run SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level} (outside a transaction: pgjdbc refuses it inside one), which sets the level of every later transaction of the session",
		Fix:     isolationFix},
	{Setting: "JDBC.setReadOnly", Library: "pgjdbc, Java and Kotlin", Text: "conn.setReadOnly(…)", Param: "default_transaction_read_only",
		When:    "in a file that sets readOnlyMode=always",
		Example: SettingUse{Recv: "conn.setReadOnly"},
		Does:    "{recv}(…) with readOnlyMode=always makes pgjdbc run SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY (or READ WRITE) in autocommit mode",
		Fix:     readOnlyFix},
	{Setting: "JDBC.setClientInfo", Library: "pgjdbc, Java and Kotlin", Text: `conn.setClientInfo("ApplicationName", …)`, Param: "application_name",
		Example: SettingUse{Recv: "conn.setClientInfo"},
		Does:    `{recv}("ApplicationName", …) makes pgjdbc run SET application_name`,
		Fix:     "set ApplicationName in the connection URL (a startup parameter poolers keep per client), or SET LOCAL application_name inside the transaction"},
	{Setting: "HikariCP.schema", Library: "HikariCP, Java", Text: "hikari.schema=VALUE", Param: "search_path",
		Does: "HikariCP's schema setting makes the pool call setSchema on each new connection, which pgjdbc runs as SET SESSION search_path",
		Fix:  "set search_path per role or database (ALTER ROLE … SET search_path = …) and remove the pool's schema setting"},
	{Setting: "HikariCP.transactionIsolation", Library: "HikariCP, Java", Text: "hikari.transaction-isolation=LEVEL", Param: "default_transaction_isolation",
		When:    "any level but TRANSACTION_NONE",
		Example: SettingUse{Level: "SERIALIZABLE"},
		Does:    "HikariCP's transaction isolation setting makes the pool call setTransactionIsolation on each new connection, which pgjdbc runs as SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level}",
		Fix:     "set default_transaction_isolation per role or database (ALTER ROLE … SET) and remove the pool's setting, or start the transactions that need it with SET TRANSACTION ISOLATION LEVEL …"},
	{Setting: "Rails.schema_search_path", Library: "Rails, database.yml", Text: "schema_search_path: VALUE", Param: "search_path",
		Does: "schema_search_path makes Rails run SET search_path on each new connection",
		Fix:  "set search_path per role or database (ALTER ROLE … SET search_path = …) and remove schema_search_path"},
	{Setting: "Rails.variables", Library: "Rails, database.yml", Text: "variables: { PARAM: VALUE }", When: "a value other than default",
		Example: SettingUse{Key: "statement_timeout", Param: "statement_timeout"},
		Does:    "variables: {key} makes Rails run SET SESSION {param} on each new connection",
		Fix:     "set {param} per role or database (ALTER ROLE … SET {param} = …) and remove it from variables"},
	{Setting: "Laravel.search_path", Library: "Laravel, PHP", Text: "'search_path' => VALUE", Param: "search_path", When: "in a pgsql connection",
		Example: SettingUse{Key: "search_path", Value: "app"},
		Does:    fmt.Sprintf(laravelDoes, "set search_path to …"), Fix: laravelFix},
	{Setting: "Laravel.schema", Library: "Laravel, PHP", Text: "'schema' => VALUE", Param: "search_path", When: "in a pgsql connection without search_path",
		Example: SettingUse{Key: "schema", Value: "app"},
		Does:    fmt.Sprintf(laravelDoes, "set search_path to …"), Fix: laravelFix},
	{Setting: "Laravel.isolation_level", Library: "Laravel, PHP", Text: "'isolation_level' => VALUE", Param: "default_transaction_isolation", When: "in a pgsql connection",
		Example: SettingUse{Key: "isolation_level", Value: "serializable"},
		Does:    fmt.Sprintf(laravelDoes, "set session characteristics as transaction isolation level …"), Fix: laravelFix},
	{Setting: "Laravel.timezone", Library: "Laravel, PHP", Text: "'timezone' => VALUE", Param: "TimeZone", When: "in a pgsql connection",
		Example: SettingUse{Key: "timezone", Value: "UTC"},
		Does:    fmt.Sprintf(laravelDoes, "set time zone '…'"), Fix: laravelFix},
	{Setting: "Laravel.synchronous_commit", Library: "Laravel, PHP", Text: "'synchronous_commit' => VALUE", Param: "synchronous_commit", When: "in a pgsql connection",
		Example: SettingUse{Key: "synchronous_commit", Value: "off"},
		Does:    fmt.Sprintf(laravelDoes, "set synchronous_commit to '…'"), Fix: laravelFix},
}
