package proxyconfig

import (
	"os"
	"strings"
	"testing"
)

// pgbouncerKeys are the keys of PgBouncer's pgbouncer.ini ([pgbouncer]
// section, from its documentation and sample file, 1.25 and newer).
var pgbouncerKeys = []string{
	"admin_users", "application_name_add_host", "auth_dbname", "auth_file", "auth_hba_file",
	"auth_ident_file", "auth_ldap_options", "auth_query", "auth_type", "auth_user",
	"autodb_idle_timeout", "cancel_wait_timeout", "client_encoding", "client_idle_timeout",
	"client_login_timeout", "client_tls13_ciphers", "client_tls_ca_file", "client_tls_cert_file",
	"client_tls_ciphers", "client_tls_dheparams", "client_tls_ecdhcurve", "client_tls_key_file",
	"client_tls_protocols", "client_tls_sslmode", "conffile", "connect_query", "datestyle",
	"default_pool_size", "disable_pqexec", "dns_max_ttl", "dns_nxdomain_ttl",
	"dns_zone_check_period", "idle_transaction_timeout", "ignore_startup_parameters", "job_name",
	"listen_addr", "listen_backlog", "listen_port", "load_balance_hosts", "log_connections",
	"log_disconnections", "log_pooler_errors", "log_stats", "logfile", "login_notify_message",
	"max_client_conn", "max_db_client_connections", "max_db_connections", "max_packet_size",
	"max_prepared_statements", "max_user_client_connections", "max_user_connections",
	"min_pool_size", "peer_id", "pidfile", "pkt_buf", "pool_idle_timeout", "pool_mode",
	"pool_size", "query_timeout", "query_wait_notify", "query_wait_timeout", "reserve_pool_size",
	"reserve_pool_timeout", "resolv_conf", "sbuf_loopcnt", "scram_iterations",
	"server_check_delay", "server_check_query", "server_connect_timeout", "server_fast_close",
	"server_idle_timeout", "server_lifetime", "server_login_retry", "server_reset_query",
	"server_reset_query_always", "server_round_robin", "server_tls13_ciphers",
	"server_tls_ca_file", "server_tls_cert_file", "server_tls_ciphers", "server_tls_key_file",
	"server_tls_protocols", "server_tls_sslmode", "service_name", "so_reuseport", "stats_period",
	"stats_users", "suspend_timeout", "syslog", "syslog_facility", "syslog_ident",
	"tcp_defer_accept", "tcp_keepalive", "tcp_keepcnt", "tcp_keepidle", "tcp_keepintvl",
	"tcp_socket_buffer", "tcp_user_timeout", "timezone", "track_extra_parameters",
	"transaction_timeout", "unix_socket_dir", "unix_socket_group", "unix_socket_mode", "user",
	"verbose",
}

// TestDocsKeyTable: the pgbouncer.ini table of docs/proxy.md says what
// pgpoolcheck does with every key of PgBouncer's file.
func TestDocsKeyTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "## pgbouncer.ini keys")
	if start < 0 {
		t.Fatal("docs/proxy.md has no pgbouncer.ini key table")
	}
	table := readme[start:]
	if end := strings.Index(table[3:], "\n## "); end >= 0 {
		table = table[:end+3]
	}
	for _, k := range pgbouncerKeys {
		if !strings.Contains(table, "`"+k+"`") {
			t.Errorf("docs/proxy.md's pgbouncer.ini table does not name %s", k)
		}
	}
}
