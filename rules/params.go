package rules

import "strings"

// laterParams are run-time parameters of PostgreSQL releases newer than
// the one params_gen.go was generated from, and parameters that
// pg_settings does not list but SET accepts.
var laterParams = map[string]bool{
	// Not listed by pg_settings.
	"role": true, "session_authorization": true, "transaction_isolation": true,
	"transaction_read_only": true, "transaction_deferrable": true, "seed": true,
	"is_superuser": true, "server_version": true, "server_encoding": true,
	// PostgreSQL 16.
	"createrole_self_grant": true, "debug_io_direct": true, "icu_validation_level": true,
	"scram_iterations": true, "vacuum_buffer_usage_limit": true, "send_abort_for_crash": true,
	"send_abort_for_kill": true, "reserved_connections": true, "logical_replication_mode": true,
	"debug_logical_replication_streaming": true, "require_auth": true,
	// PostgreSQL 17.
	"transaction_timeout": true, "io_combine_limit": true, "summarize_wal": true,
	"wal_summary_keep_time": true, "allow_alter_system": true, "event_triggers": true,
	"max_notify_queue_pages": true, "restrict_nonsystem_relation_kind": true,
	"commit_timestamp_buffers": true, "multixact_member_buffers": true, "multixact_offset_buffers": true,
	"notify_buffers": true, "serializable_buffers": true, "subtransaction_buffers": true,
	"transaction_buffers": true, "trace_connection_negotiation": true, "sync_replication_slots": true,
	"synchronized_standby_slots": true, "huge_pages_status": true, "enable_group_by_reordering": true,
	// PostgreSQL 18.
	"io_method": true, "io_workers": true, "io_max_concurrency": true, "file_copy_method": true,
	"idle_replication_slot_timeout": true, "log_lock_failures": true, "max_active_replication_origins": true,
	"track_cost_delay_timing": true, "vacuum_truncate": true, "vacuum_max_eager_freeze_failure_rate": true,
	"autovacuum_worker_slots": true, "autovacuum_vacuum_max_threshold": true, "enable_self_join_elimination": true,
	"enable_distinct_reordering": true, "ssl_groups": true, "ssl_tls13_ciphers": true, "md5_password_warnings": true,
	"oauth_validator_libraries": true, "extension_control_path": true, "max_wal_senders": true,
}

// KnownParameter reports whether SET or RESET of name can succeed on
// PostgreSQL: a parameter of the server, or a custom one (a dotted name,
// app.tenant_id, which any client may set). A SET of any other name is an
// error on the server, so it makes no session state; in application code
// it is usually English text that parses as SQL ("Reset Password").
func KnownParameter(name string) bool {
	name = strings.ToLower(name)
	return settingsParams[name] || laterParams[name] || strings.Contains(name, ".")
}
