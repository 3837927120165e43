// Package proxyconfig reads the proxy's settings from files: pgpoolcheck's
// own YAML config (--config) and PgBouncer's pgbouncer.ini
// (--pgbouncer-ini), so that people can try pgpoolcheck with the
// configuration they already run.
//
// Both readers return a *Settings in which only what the file gives is set
// (nil pointers for the rest). The command line merges it with its flags,
// flags given explicitly winning over the file, in one call:
//
//	s, err := proxyconfig.LoadYAML(path)              // or:
//	s, ignored, err := proxyconfig.LoadPgBouncerINI(path)
//	for _, ig := range ignored {
//		fmt.Fprintln(stderr, "pgbouncer.ini:", ig)    // line 12: [pgbouncer] logfile: not used by pgpoolcheck
//	}
//	noFlag, err := s.Apply(cmd.Flags())              // sets every flag not Changed on the command line
//
// Call Apply inside the command's RunE, after cobra parsed the flags: it
// writes through the flags into the variables they are bound to. When both
// files are given, read the ini first and Merge the YAML over it. The
// readers have no side effects, so RELOAD and SIGHUP can simply call them
// again.
//
// Apply sets flags by their names (the key with "-" for "_": pool_size →
// --pool-size) through the flag's own parser, so a value means exactly what
// it means on the command line (max_prepared_statements: 0 turns the
// support off). It returns the keys the file set for which the command has
// no flag (pgpoolcheck proxy has one for every key today), which the CLI
// should report.
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
//	client_login_timeout: 60s
//	max_login_clients: 512
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
//	max_prepared_statements: 200   # 0 turns prepared-statement support off
//	log_level: info                # debug, info, warn or error
//	log_format: text               # text or json
//	on_session_state: preserve     # preserve, reset, reject or allow
//	trusted_routines: [extension:postgis, app.audit]  # calls not read after (see README)
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
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Settings are proxy settings read from a file. A nil field was not set.
type Settings struct {
	Listen                 *string
	UnixSocketDir          *string
	SoReusePort            *bool
	PeerID                 *int
	Peers                  *[]string
	Upstream               *string
	Mode                   *string
	PoolSize               *int
	MaxClientConn          *int
	MaxDBConnections       *int
	MaxUserConnections     *int
	Databases              *[]string
	ClientLoginTimeout     *time.Duration
	MaxLoginClients        *int
	IdleTransactionTimeout *time.Duration
	ClientIdleTimeout      *time.Duration
	QueryWaitTimeout       *time.Duration
	QueryTimeout           *time.Duration
	ServerIdleTimeout      *time.Duration
	ServerLifetime         *time.Duration
	ServerConnectTimeout   *time.Duration
	ServerLoginRetry       *time.Duration
	ShutdownTimeout        *time.Duration
	AuthType               *string
	AuthFile               *string
	AuthUser               *string
	AuthQuery              *string
	AuthDBName             *string
	InsecureTrust          *bool
	MaxMessageSize         *int
	MaxPreparedStatements  *int
	Relay                  *string
	RelayLoops             *int
	LogLevel               *string
	LogFormat              *string
	OnSessionState         *string
	TrustedRoutines        *[]string
	AdminUsers             *[]string
	StatsUsers             *[]string
	MetricsListen          *string
	Capture                *string
	CaptureMaxBytes        *int
	Redact                 *bool
	ClientTLSSSLMode       *string
	ClientTLSCertFile      *string
	ClientTLSKeyFile       *string
	ClientTLSCAFile        *string
	ClientTLSProtocols     *string
	ServerTLSSSLMode       *string
	ServerTLSCAFile        *string
	ServerTLSCertFile      *string
	ServerTLSKeyFile       *string

	// Warnings are deprecated spellings the file used, one line each.
	Warnings []string
}

// valueKind is the type of a setting.
type valueKind int

const (
	kindString valueKind = iota
	kindInt
	kindDuration
	kindBool
	kindList
)

// field describes one setting: its key, its type, the values it accepts
// (for enumerations) and where it lives in Settings.
type field struct {
	key    string
	kind   valueKind
	enum   []string
	min    int // for ints
	ptr    func(s *Settings) any
	isPath bool // resolved against the config file's directory
}

// fields lists every setting, in the order of the flags.
var fields = []field{
	{key: "listen", ptr: func(s *Settings) any { return &s.Listen }},
	{key: "unix_socket_dir", isPath: true, ptr: func(s *Settings) any { return &s.UnixSocketDir }},
	{key: "so_reuseport", kind: kindBool, ptr: func(s *Settings) any { return &s.SoReusePort }},
	{key: "peer_id", kind: kindInt, ptr: func(s *Settings) any { return &s.PeerID }},
	{key: "peers", kind: kindList, ptr: func(s *Settings) any { return &s.Peers }},
	{key: "upstream", ptr: func(s *Settings) any { return &s.Upstream }},
	{key: "mode", enum: []string{"transaction", "session", "record"}, ptr: func(s *Settings) any { return &s.Mode }},
	{key: "pool_size", kind: kindInt, min: 1, ptr: func(s *Settings) any { return &s.PoolSize }},
	{key: "max_client_conn", kind: kindInt, min: 1, ptr: func(s *Settings) any { return &s.MaxClientConn }},
	{key: "max_db_connections", kind: kindInt, ptr: func(s *Settings) any { return &s.MaxDBConnections }},
	{key: "max_user_connections", kind: kindInt, ptr: func(s *Settings) any { return &s.MaxUserConnections }},
	{key: "databases", kind: kindList, ptr: func(s *Settings) any { return &s.Databases }},
	{key: "client_login_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.ClientLoginTimeout }},
	{key: "max_login_clients", kind: kindInt, min: 1, ptr: func(s *Settings) any { return &s.MaxLoginClients }},
	{key: "idle_transaction_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.IdleTransactionTimeout }},
	{key: "client_idle_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.ClientIdleTimeout }},
	{key: "query_wait_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.QueryWaitTimeout }},
	{key: "query_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.QueryTimeout }},
	{key: "server_idle_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.ServerIdleTimeout }},
	{key: "server_lifetime", kind: kindDuration, ptr: func(s *Settings) any { return &s.ServerLifetime }},
	{key: "server_connect_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.ServerConnectTimeout }},
	{key: "server_login_retry", kind: kindDuration, ptr: func(s *Settings) any { return &s.ServerLoginRetry }},
	{key: "shutdown_timeout", kind: kindDuration, ptr: func(s *Settings) any { return &s.ShutdownTimeout }},
	{key: "auth_type", enum: []string{"trust", "md5", "scram-sha-256", "cert"}, ptr: func(s *Settings) any { return &s.AuthType }},
	{key: "auth_file", isPath: true, ptr: func(s *Settings) any { return &s.AuthFile }},
	{key: "auth_user", ptr: func(s *Settings) any { return &s.AuthUser }},
	{key: "auth_query", ptr: func(s *Settings) any { return &s.AuthQuery }},
	{key: "auth_dbname", ptr: func(s *Settings) any { return &s.AuthDBName }},
	{key: "insecure_trust", kind: kindBool, ptr: func(s *Settings) any { return &s.InsecureTrust }},
	{key: "max_message_size", kind: kindInt, min: 1024, ptr: func(s *Settings) any { return &s.MaxMessageSize }},
	{key: "max_prepared_statements", kind: kindInt, ptr: func(s *Settings) any { return &s.MaxPreparedStatements }},
	{key: "relay", enum: []string{"loop", "goroutine"}, ptr: func(s *Settings) any { return &s.Relay }},
	{key: "relay_loops", kind: kindInt, min: 1, ptr: func(s *Settings) any { return &s.RelayLoops }},
	{key: "log_level", enum: []string{"debug", "info", "warn", "error"}, ptr: func(s *Settings) any { return &s.LogLevel }},
	{key: "log_format", enum: []string{"text", "json"}, ptr: func(s *Settings) any { return &s.LogFormat }},
	{key: "on_session_state", enum: []string{"preserve", "reset", "reject", "allow"}, ptr: func(s *Settings) any { return &s.OnSessionState }},
	{key: "trusted_routines", kind: kindList, ptr: func(s *Settings) any { return &s.TrustedRoutines }},
	{key: "admin_users", kind: kindList, ptr: func(s *Settings) any { return &s.AdminUsers }},
	{key: "stats_users", kind: kindList, ptr: func(s *Settings) any { return &s.StatsUsers }},
	{key: "metrics_listen", ptr: func(s *Settings) any { return &s.MetricsListen }},
	{key: "capture", isPath: true, ptr: func(s *Settings) any { return &s.Capture }},
	{key: "capture_max_bytes", kind: kindInt, ptr: func(s *Settings) any { return &s.CaptureMaxBytes }},
	{key: "redact", kind: kindBool, ptr: func(s *Settings) any { return &s.Redact }},
	{key: "client_tls_sslmode", enum: sslModes, ptr: func(s *Settings) any { return &s.ClientTLSSSLMode }},
	{key: "client_tls_cert_file", isPath: true, ptr: func(s *Settings) any { return &s.ClientTLSCertFile }},
	{key: "client_tls_key_file", isPath: true, ptr: func(s *Settings) any { return &s.ClientTLSKeyFile }},
	{key: "client_tls_ca_file", isPath: true, ptr: func(s *Settings) any { return &s.ClientTLSCAFile }},
	{key: "client_tls_protocols", ptr: func(s *Settings) any { return &s.ClientTLSProtocols }},
	{key: "server_tls_sslmode", enum: sslModes, ptr: func(s *Settings) any { return &s.ServerTLSSSLMode }},
	{key: "server_tls_ca_file", isPath: true, ptr: func(s *Settings) any { return &s.ServerTLSCAFile }},
	{key: "server_tls_cert_file", isPath: true, ptr: func(s *Settings) any { return &s.ServerTLSCertFile }},
	{key: "server_tls_key_file", isPath: true, ptr: func(s *Settings) any { return &s.ServerTLSKeyFile }},
}

// sslModes are libpq's sslmode values, which PgBouncer's *_tls_sslmode take.
var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// Keys returns every key a config file may set, in the order of the flags.
func Keys() []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.key
	}
	return out
}

// FlagName returns the command-line flag of a key: pool_size → pool-size.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

func lookupField(key string) (field, bool) {
	key = strings.ReplaceAll(strings.ToLower(key), "-", "_")
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

// Get returns the value of key as command-line text ("" and false when it
// is not set): durations as Go durations, lists joined with commas.
func (s *Settings) Get(key string) (string, bool) {
	f, ok := lookupField(key)
	if !ok {
		return "", false
	}
	switch p := f.ptr(s).(type) {
	case **string:
		if *p != nil {
			return **p, true
		}
	case **int:
		if *p != nil {
			return strconv.Itoa(**p), true
		}
	case **time.Duration:
		if *p != nil {
			return (**p).String(), true
		}
	case **bool:
		if *p != nil {
			return strconv.FormatBool(**p), true
		}
	case **[]string:
		if *p != nil {
			return strings.Join(**p, ","), true
		}
	}
	return "", false
}

// Set returns the keys that are set, in the order of the flags.
func (s *Settings) Set() []string {
	var out []string
	for _, f := range fields {
		if _, ok := s.Get(f.key); ok {
			out = append(out, f.key)
		}
	}
	return out
}

// Merge copies into s every setting that o sets (o wins).
func (s *Settings) Merge(o *Settings) {
	for _, f := range fields {
		switch dst := f.ptr(s).(type) {
		case **string:
			if src := *f.ptr(o).(**string); src != nil {
				*dst = src
			}
		case **int:
			if src := *f.ptr(o).(**int); src != nil {
				*dst = src
			}
		case **time.Duration:
			if src := *f.ptr(o).(**time.Duration); src != nil {
				*dst = src
			}
		case **bool:
			if src := *f.ptr(o).(**bool); src != nil {
				*dst = src
			}
		case **[]string:
			if src := *f.ptr(o).(**[]string); src != nil {
				*dst = src
			}
		}
	}
}

// Apply sets each flag of fs that s gives a value for, unless the flag was
// given on the command line (fs.Changed). Values go through the flag's own
// parser, so an invalid one is an error naming the key. It returns the
// keys s sets that fs has no flag for.
func (s *Settings) Apply(fs *pflag.FlagSet) (noFlag []string, err error) {
	for _, key := range s.Set() {
		name := FlagName(key)
		if fs.Lookup(name) == nil {
			noFlag = append(noFlag, key)
			continue
		}
		if fs.Changed(name) {
			continue
		}
		v, _ := s.Get(key)
		if err := fs.Set(name, v); err != nil {
			return noFlag, fmt.Errorf("%s: %w", key, err)
		}
	}
	return noFlag, nil
}

// parseDuration reads a duration: a Go duration ("90s", "1m30s"), or a
// number of seconds ("90", "0.5"), which is what PgBouncer writes.
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("negative duration %q", v)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want a Go duration such as 90s or 2m, or a number of seconds)", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", v)
	}
	return d, nil
}

// checkEnum checks v against the values of f.
func (f field) checkEnum(v string) error {
	if len(f.enum) == 0 {
		return nil
	}
	for _, e := range f.enum {
		if strings.EqualFold(v, e) {
			return nil
		}
	}
	return fmt.Errorf("unknown value %q (want %s)", v, orList(f.enum))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func ptrTo[T any](v T) *T { return &v }
