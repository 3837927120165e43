// Package proxyconfig reads the proxy's settings from files: pgpoolcheck's
// own YAML config (--config) and PgBouncer's pgbouncer.ini
// (--pgbouncer-ini), so that people can try pgpoolcheck with the
// configuration they already run.
//
// Every setting is an entry of the pooler's settings table
// (pooler.Settings): its name, type, default, validation and the Config
// field it reaches are written there once. Both readers return a
// *Settings holding only what the file gives, as the table's typed values
// (per-database entries as pooler.DatabaseEntry structs). The command
// line's flags fill a *Settings too (Flags), and Load builds the pooler's
// configuration from the table's defaults, the ini, the YAML, the
// environment and the command line, in that order of precedence:
//
//	cfg, err := proxyconfig.Load(proxyconfig.Sources{INI: ini, YAML: yml, CommandLine: flags, …})
//
// The readers have no side effects, so RELOAD and SIGHUP call Load again
// with the same sources (Config.Reload).
//
// The YAML file is a mapping of the keys below (snake_case, as in
// pgbouncer.ini; the flag spelling with "-" is still read, with a
// deprecation warning in Settings.Warnings). An unknown
// key, or a value of the wrong type, is an error naming the key and its
// line. Durations are Go durations ("90s", "2m30s") or numbers of seconds.
// Relative auth_file and capture paths are resolved against the config
// file's directory by the Load functions.
//
//	listen: 0.0.0.0:6432
//	unix_socket_dir: /var/run/postgresql  # also listen on .s.PGSQL.6432 there
//	so_reuseport: false            # several processes on one address (Linux)
//	peer_id: 1                     # this instance among peers (cancel forwarding)
//	peers: {1: "pooler-0.pooler:6432", 2: "pooler-1.pooler:6432"}  # every instance, this one included
//	upstream: postgres://app@db:5432/app
//	mode: transaction              # transaction, session or record
//	pool_size: 20
//	max_client_conn: 1000
//	max_db_connections: 0          # server connections per database over all users (0: no cap)
//	max_user_connections: 0        # server connections per user over all databases (0: no cap)
//	databases: [app, "reports=analytics:5:8", "*"]   # allow-list: NAME[=DBNAME][:POOL_SIZE[:MAX_DB_CONNECTIONS]][?auth_user=…&auth_dbname=…&auth_query=…]
//	# or, for any name:  databases: {app: {}, reports: {dbname: analytics, pool_size: 5, max_db_connections: 8}, "*": {auth_user: pgb}}
//	client_login_timeout: 60s
//	max_login_clients: 512
//	max_logins_per_address: 128    # of them from one client address (TCP)
//	login_failure_backoff: 5s      # longest hold-back of a failed login after 3 in a row (0: never)
//	idle_transaction_timeout: 0     # close clients idle in a transaction (0: never)
//	client_idle_timeout: 0
//	query_wait_timeout: 120s
//	query_timeout: 0               # close a client whose query runs longer (cancelled; 0: never)
//	server_idle_timeout: 600       # seconds
//	server_lifetime: 1h
//	server_connect_timeout: 15s
//	server_login_retry: 15s        # longest wait between logins while the server is down
//	shutdown_timeout: 30s
//	auth_type: scram-sha-256       # trust, md5, scram-sha-256 or cert (with client_tls_sslmode verify-ca/-full)
//	auth_file: userlist.txt
//	auth_user: pgbouncer             # looks up users not in auth_file on the server
//	auth_query: SELECT uname, phash FROM pgbouncer.user_lookup($1)  # default: PgBouncer's, on pg_authid
//	auth_dbname: authdb              # the databases entry the lookup runs in (default: the client's)
//	insecure_trust: false
//	max_message_size: 67108864
//	max_pending_output: 262144     # bytes a socket holds back unwritten before the pooler stops reading for it
//	max_owed_answers: 16384        # answers a server may owe a client before its next message waits
//	max_prepared_statements: 200   # 0 turns prepared-statement support off
//	log_level: info                # debug, info, warn or error
//	log_format: text               # text or json
//	on_session_state: preserve     # preserve, reset, reject, allow or off
//	trusted_routines: [extension:postgis, app.audit]  # calls not read after (see docs/proxy.md)
//	admin_users: [postgres, ops]
//	stats_users: [monitoring]      # the console's SHOW commands only
//	metrics_listen: 127.0.0.1:9127
//	capture: /var/tmp/app.capture
//	capture_max_bytes: 0           # start a new part before one exceeds this (0: never)
//	redact: true
//	client_tls_sslmode: require      # TLS to clients: disable … verify-full
//	client_tls_cert_file: pooler.crt
//	client_tls_key_file: pooler.key
//	client_tls_ca_file: clients-ca.pem  # verifies client certificates
//	client_tls_protocols: secure       # or a list: tlsv1.2,tlsv1.3
//	server_tls_sslmode: verify-full  # TLS to PostgreSQL, added to the upstream URL
//	server_tls_ca_file: /etc/ssl/pg-ca.pem
//	server_tls_cert_file: client.crt
//	server_tls_key_file: client.key
//
// The PgBouncer reader maps [databases] (one upstream: every entry must
// name the same host and port) and the common [pgbouncer] keys; everything
// it cannot honour is returned as Ignored with the reason. %include is an
// error.
package proxyconfig

import (
	"fmt"
	"path/filepath"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// Settings are proxy settings from one source (a file, the command
// line): the table's typed values of the settings it sets, by name.
type Settings struct {
	values map[string]any

	// Warnings are deprecated spellings the file used, one line each.
	Warnings []string
}

// Keys returns every key a config file may set, in the order of the flags.
func Keys() []string { return pooler.SettingNames() }

// FlagName returns the command-line flag of a key: pool_size → pool-size.
func FlagName(key string) string {
	if s := pooler.LookupSetting(key); s != nil {
		return s.FlagName()
	}
	return key
}

// Value returns the typed value of key (the table's type) and whether it
// is set.
func (s *Settings) Value(key string) (any, bool) {
	st := pooler.LookupSetting(key)
	if st == nil || s.values == nil {
		return nil, false
	}
	v, ok := s.values[st.Name]
	return v, ok
}

// Get returns the value of key as command-line text ("" and false when it
// is not set): durations as Go durations, lists joined with commas.
func (s *Settings) Get(key string) (string, bool) {
	v, ok := s.Value(key)
	if !ok {
		return "", false
	}
	return pooler.LookupSetting(key).Format(v), true
}

// Put sets key to v, of the table's type for the key (checked).
func (s *Settings) Put(key string, v any) error {
	st := pooler.LookupSetting(key)
	if st == nil {
		return fmt.Errorf("unknown setting %q", key)
	}
	if err := st.Check(v); err != nil {
		return fmt.Errorf("%s: %w", st.Name, err)
	}
	s.put(st, v)
	return nil
}

func (s *Settings) put(st *pooler.Setting, v any) {
	if s.values == nil {
		s.values = map[string]any{}
	}
	s.values[st.Name] = v
}

// Parse sets key from text, as the command line writes it; an invalid
// value is an error naming the key.
func (s *Settings) Parse(key, text string) error {
	st := pooler.LookupSetting(key)
	if st == nil {
		return fmt.Errorf("unknown setting %q", key)
	}
	v, err := st.Parse(text)
	if err != nil {
		return fmt.Errorf("%s: %w", st.Name, err)
	}
	s.put(st, v)
	return nil
}

// Set returns the keys that are set, in the order of the flags.
func (s *Settings) Set() []string {
	var out []string
	for _, st := range pooler.Settings() {
		if _, ok := s.values[st.Name]; ok {
			out = append(out, st.Name)
		}
	}
	return out
}

// Merge copies into s every setting that o sets (o wins).
func (s *Settings) Merge(o *Settings) {
	if o == nil {
		return
	}
	for k, v := range o.values {
		if s.values == nil {
			s.values = map[string]any{}
		}
		s.values[k] = v
	}
}

// ApplyTo puts every setting s sets into c, through the table.
func (s *Settings) ApplyTo(c *pooler.Config) {
	for _, st := range pooler.Settings() {
		if v, ok := s.values[st.Name]; ok {
			st.Put(c, v)
		}
	}
}

// resolvePaths makes relative file paths relative to dir.
func (s *Settings) resolvePaths(dir string) {
	for _, st := range pooler.Settings() {
		if !st.Path {
			continue
		}
		if p, ok := s.values[st.Name].(string); ok && p != "" && !filepath.IsAbs(p) {
			s.values[st.Name] = filepath.Join(dir, p)
		}
	}
}

// Defaults returns a configuration with every setting at the table's
// default.
func Defaults() pooler.Config {
	var c pooler.Config
	for _, st := range pooler.Settings() {
		if st.Default != nil {
			st.Put(&c, st.Default)
		}
	}
	return c
}
