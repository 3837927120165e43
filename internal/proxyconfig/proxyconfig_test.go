package proxyconfig

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/spf13/pflag"
)

// render lists the settings that are set as key=value lines.
func render(s *Settings) string {
	var b strings.Builder
	for _, k := range s.Set() {
		v, _ := s.Get(k)
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

func renderIgnored(ig []Ignored) string {
	var b strings.Builder
	for _, i := range ig {
		b.WriteString(i.String() + "\n")
	}
	return b.String()
}

func TestLoadYAML(t *testing.T) {
	s, err := LoadYAML("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := `listen=0.0.0.0:6432
unix_socket_dir=testdata/sockets
so_reuseport=true
peer_id=2
peers=1=pooler-0.pooler:6432,2=pooler-1.pooler:6432
upstream=postgres://app@db:5432/app
mode=transaction
pool_size=20
max_client_conn=1000
max_db_connections=50
max_user_connections=40
databases=app,reports=analytics:5:8,*
client_login_timeout=20s
max_login_clients=64
max_logins_per_address=16
login_failure_backoff=2s
idle_transaction_timeout=1m0s
client_idle_timeout=0s
query_wait_timeout=2m0s
query_timeout=1m30s
server_idle_timeout=10m0s
server_lifetime=1.5s
server_connect_timeout=15s
server_login_retry=5s
shutdown_timeout=30s
auth_type=scram-sha-256
auth_file=testdata/userlist.txt
auth_user=pgbouncer
auth_query=SELECT uname, phash FROM pgbouncer.user_lookup($1)
auth_dbname=app
insecure_trust=false
max_message_size=67108864
max_pending_output=65536
max_owed_answers=8192
max_prepared_statements=0
relay=bridged
event_loops=2
log_level=debug
log_format=json
on_session_state=preserve
trusted_routines=extension:postgis,app.audit
admin_users=postgres,ops
stats_users=monitor
metrics_listen=127.0.0.1:9127
capture=/var/tmp/app.capture
capture_max_bytes=1048576
redact=true
client_tls_sslmode=verify-ca
client_tls_cert_file=testdata/pooler.crt
client_tls_key_file=testdata/pooler.key
client_tls_ca_file=/etc/pg/clients.pem
client_tls_protocols=tlsv1.3
server_tls_sslmode=verify-full
server_tls_ca_file=testdata/ca.pem
server_tls_cert_file=/etc/pg/client.crt
server_tls_key_file=testdata/client.key
`
	if got := render(s); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(s.Set()) != len(Keys()) {
		t.Errorf("full.yaml sets %d of %d keys", len(s.Set()), len(Keys()))
	}
}

func TestParseYAMLErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"listen: a\npool_mode: transaction\n", `line 2: unknown key "pool_mode" (known keys: listen, unix_socket_dir, so_reuseport, peer_id, peers, upstream,`},
		{"pool_size: ten\n", `line 1: pool_size: want a whole number, not "ten"`},
		{"pool_size: 0\n", "line 1: pool_size: want a whole number from 1, not 0"},
		{"max_message_size: 10\n", "from 1024"},
		{"mode: statement\n", `line 1: mode: unknown value "statement" (want transaction, session or record)`},
		{"query_wait_timeout: soon\n", `line 1: query_wait_timeout: invalid duration "soon"`},
		{"query_wait_timeout: -5\n", "negative duration"},
		{"insecure_trust: maybe\n", `line 1: insecure_trust: want true or false, not "maybe"`},
		{"listen: [a, b]\n", "line 1: listen: want a single value"},
		{"listen: 6432\n", "line 1: listen: want a string, not 6432"},
		{"admin_users: {a: b}\n", "admin_users: want a list of names"},
		{"pool_size: 1\npool-size: 2\n", "line 2: pool-size is already set on line 1"},
		{"- a\n- b\n", "line 1: the config must be a mapping"},
		{"listen: [\n", "line 1"},
		// A syntax error names the line at fault, not the line before the
		// block it is in.
		{"# proxy\n\nlisten: 127.0.0.1:6432\ndatabases:\n  app: db\n pool_size: 5\n", "line 6 column 2: did not find expected key"},
		{"a: 1\n---\nb: 2\n", "line 2: more than one YAML document"},
	} {
		_, err := ParseYAML([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseYAML(%q) error = %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
	if _, err := LoadYAML("testdata/unknown-key.yaml"); err == nil || !strings.Contains(err.Error(), `testdata/unknown-key.yaml: line 3: unknown key "pool_mode"`) {
		t.Errorf("LoadYAML(unknown-key.yaml) error = %v", err)
	}
}

func TestParseYAMLForms(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", ""},
		{"# nothing\n", ""},
		{"pool-size: 5\nlog-level: WARN\n", "pool_size=5\nlog_level=warn\n"},
		{"admin_users: 'postgres, ops'\n", "admin_users=postgres,ops\n"},
		{"admin_users: []\n", "admin_users=\n"},
		{"server_lifetime: 3600\nshutdown_timeout: 1m30s\n", "server_lifetime=1h0m0s\nshutdown_timeout=1m30s\n"},
		{"auth_file: /etc/userlist.txt\n", "auth_file=/etc/userlist.txt\n"},
	} {
		s, err := ParseYAML([]byte(tc.text))
		if err != nil {
			t.Errorf("ParseYAML(%q): %v", tc.text, err)
			continue
		}
		if got := render(s); got != tc.want {
			t.Errorf("ParseYAML(%q) =\n%s\nwant\n%s", tc.text, got, tc.want)
		}
	}
}

func TestPgBouncerINI(t *testing.T) {
	for _, tc := range []struct {
		file, settings, ignored string
	}{
		{"seed-004-pgbouncer.ini", `listen=:6432
unix_socket_dir=/var/run/postgresql
upstream=postgres://localhost:5432
max_client_conn=500
databases=*
auth_type=md5
auth_file=/etc/pgbouncer/userlist.txt
`, `line 7: [pgbouncer] logfile: not used by pgpoolcheck
line 8: [pgbouncer] pidfile: not used by pgpoolcheck
`},
		{"seed-000-pgbouncer.ini", `listen=0.0.0.0:6432
upstream=postgres://pg-leak:5432
mode=transaction
pool_size=20
max_client_conn=1500
databases=postgres,one=postgres:1
auth_type=trust
auth_file=/etc/pgbouncer/userlist.txt
max_prepared_statements=0
admin_users=postgres
stats_users=postgres
`, `line 18: [pgbouncer] ignore_startup_parameters: not used by pgpoolcheck
`},
		{"full-pgbouncer.ini", `listen=10.0.0.5:7432
upstream=postgres://app:s3cret%20pass%27word@db.internal:6543
mode=transaction
pool_size=25
max_client_conn=2000
max_db_connections=30
max_user_connections=12
databases=app,reports=analytics:5:8
client_login_timeout=20s
query_wait_timeout=30s
query_timeout=1m30s
server_idle_timeout=500ms
server_connect_timeout=5s
auth_type=scram-sha-256
auth_file=testdata/userlist.txt
max_message_size=1048576
max_prepared_statements=100
admin_users=postgres,ops
stats_users=monitor,grafana
client_tls_sslmode=require
client_tls_cert_file=testdata/pooler.crt
client_tls_key_file=/etc/pooler.key
server_tls_sslmode=verify-ca
server_tls_ca_file=testdata/root.crt
`, `line 3: [databases] app.user: used as the upstream URL's user: PgBouncer logs every client of this database in to the server as app, pgpoolcheck logs each client in as itself and uses this password when the client is app
line 7: [pgbouncer] listen_addr: pgpoolcheck listens on one address; using 10.0.0.5
line 12: [pgbouncer] pool_mode: statement mode is not supported; using transaction mode, which runs every statement-mode client
line 17: [pgbouncer] server_lifetime: 0 (no limit) has no equivalent; pgpoolcheck's default applies
line 21: [pgbouncer] server_reset_query: not used by pgpoolcheck
`},
		{"socket.ini", `listen=127.0.0.1:6433
unix_socket_dir=/var/run/postgresql
upstream=postgres://postgres@?host=%2Fvar%2Frun%2Fpostgresql&port=5432
databases=*
`, `line 2: [databases] *.user: used as the upstream URL's user: PgBouncer logs every client of this database in to the server as postgres, pgpoolcheck logs each client in as itself and uses this password when the client is postgres
line 5: [pgbouncer] listen_port: no listen_addr (Unix sockets only in PgBouncer): pgpoolcheck listens on TCP at 127.0.0.1
`},
	} {
		s, ignored, err := LoadPgBouncerINI("testdata/" + tc.file)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got := render(s); got != tc.settings {
			t.Errorf("%s: settings\n%s\nwant\n%s", tc.file, got, tc.settings)
		}
		if got := renderIgnored(ignored); got != tc.ignored {
			t.Errorf("%s: ignored\n%s\nwant\n%s", tc.file, got, tc.ignored)
		}
		if up, ok := s.Get("upstream"); ok {
			if _, err := pgconn.ParseConfig(up); err != nil {
				t.Errorf("%s: upstream %s does not parse: %v", tc.file, up, err)
			}
		}
	}
}

func TestPgBouncerINIErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"two-hosts.ini", "[databases] names 2 servers: db1:5432 (line 2), db2:5432 (line 3); pgpoolcheck has one upstream"},
		{"include.ini", "line 3: %include is not supported"},
		{"bad-auth.ini", "line 2: auth_type: auth_type hba is not supported by pgpoolcheck (trust, md5, scram-sha-256 or cert)"},
	} {
		_, _, err := LoadPgBouncerINI("testdata/" + tc.file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("%s: error = %v, want it to contain %q", tc.file, err, tc.want)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"listen_port = 1\n", "line 1: listen_port is outside any section"},
		{"[pgbouncer]\nlisten_port\n", "line 2: want key = value"},
		{"[pgbouncer\n", "line 1: section header without ]"},
		{"[pgbouncer]\nlisten_port = http\n", `line 2: listen_port: invalid port "http"`},
		// A near miss of a key is a typo: its setting would stay at the
		// default.
		{"[pgbouncer]\nlisten_prot = 6433\n", "line 2: listen_prot: unknown key (did you mean listen_port?)"},
		{"[pgbouncer]\nlisten_port = 6433\nclient_tls_sslmod = require\n", "line 3: client_tls_sslmod: unknown key (did you mean client_tls_sslmode?)"},
		{"[pgbouncer]\nmax_client_con = 10\n", "did you mean max_client_conn?"},
		{"[pgbouncer]\ndefault_pool_size = 0\n", "line 2: default_pool_size: must be at least 1"},
		{"[pgbouncer]\nmax_client_conn = lots\n", `invalid number "lots"`},
		{"[pgbouncer]\nquery_wait_timeout = -1\n", "negative duration"},
		{"[pgbouncer]\npool_mode = fast\n", `unknown pool_mode "fast"`},
		{"[databases]\na = host=x port=5432 password='open\n", "line 2: database a: unterminated quoted value of password"},
		{"[databases]\na = host\n", "line 2: database a: want key=value"},
		{"[databases]\na = host=x,y\n", "several hosts (x,y)"},
		{"[databases]\na = host=x port=99999\n", `invalid port "99999"`},
		{"[databases]\na = host=x\nb = host=x port=5433\n", "names 2 servers"},
		// Settings that protect something are honoured or refused.
		{"[users]\napp = pool_mode=session\n", "line 2: [users] app: per-user settings"},
		{"[pgbouncer]\nclient_tls_sslmode = always\n", `line 2: client_tls_sslmode: unknown value "always"`},
		{"[pgbouncer]\nclient_tls_ciphers = HIGH\n", `line 2: client_tls_ciphers: "HIGH" is not supported`},
		{"[pgbouncer]\nclient_tls_dheparams = legacy\n", `client_tls_dheparams: "legacy" is not supported`},
		{"[pgbouncer]\nauth_ident_file = ident.map\n", "line 2: auth_ident_file: not supported by pgpoolcheck"},
		{"[pgbouncer]\nauth_type = hba\n", "line 2: auth_type: auth_type hba is not supported"},
		{"[pgbouncer]\nauth_hba_file = hba.conf\n", "line 2: auth_hba_file: not supported"},
		{"[pgbouncer]\ntransaction_timeout = 10\n", "line 2: transaction_timeout: this limit is not supported"},
		{"[pgbouncer]\nmax_db_client_connections = 100\n", "max_db_client_connections: this limit is not supported"},
		{"[pgbouncer]\nclient_tls13_ciphers = TLS_AES_128_GCM_SHA256\n", `client_tls13_ciphers: "TLS_AES_128_GCM_SHA256" is not supported`},
		{"[pgbouncer]\nunix_socket_mode = 0700\n", `line 2: unix_socket_mode: "0700" is not supported by pgpoolcheck (only PgBouncer's default "0777")`},
		{"[pgbouncer]\nunix_socket_group = pgb\n", `unix_socket_group: "pgb" is not supported`},
		{"[pgbouncer]\ndisable_pqexec = 1\n", `disable_pqexec: "1" is not supported`},
		{"[pgbouncer]\nscram_iterations = 100000\n", `scram_iterations: "100000" is not supported`},
		{"[pgbouncer]\nmax_db_connections = -1\n", `line 2: max_db_connections: invalid number "-1"`},
		{"[pgbouncer]\nmax_user_connections = many\n", `max_user_connections: invalid number "many"`},
		{"[pgbouncer]\nquery_timeout = soon\n", `query_timeout: invalid duration "soon"`},
		{"[databases]\napp = host=db max_db_connections=x\n", `database app: max_db_connections "x" is not a whole number from 0`},
		{"[pgbouncer]\nidle_transaction_timeout = soon\n", `idle_transaction_timeout: invalid duration "soon"`},
		{"[pgbouncer]\nserver_tls_protocols = all\n", `line 2: server_tls_protocols: "all" is not supported`},
		{"[pgbouncer]\nserver_tls_ciphers = HIGH:!aNULL\n", `server_tls_ciphers: "HIGH:!aNULL" is not supported`},
		{"[pgbouncer]\nserver_tls_sslmode = sometimes\n", `server_tls_sslmode: unknown value "sometimes"`},
		{"[pgbouncer]\nclient_login_timeout = 0\n", "client_login_timeout: 0 (no limit) is not supported"},
		{"[databases]\na = host=x pool_mode=session\n", "line 2: database a: pool_mode is not supported by pgpoolcheck per database"},
		{"[databases]\na = host=x pool_size=0\n", `database a: pool_size "0" is not a whole number from 1`},
		{"[databases]\n* = host=x dbname=y\n", "database *: dbname=y would send every client to one database"},
	} {
		_, _, err := ParsePgBouncerINI([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePgBouncerINI(%q) error = %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
}

// TestPgBouncerDatabaseNames: [databases] entries reach the pooler as
// entries, not as text read back, so a name or dbname may hold any of
// , = : and ?.
func TestPgBouncerDatabaseNames(t *testing.T) {
	s, _, err := ParsePgBouncerINI([]byte("[databases]\n\"a,b:c\" = host=x pool_size=3 dbname=x:y\n\"q?\" = host=x max_db_connections=2\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Value("databases")
	want := []pooler.DatabaseEntry{
		{Name: "a,b:c", Database: pooler.Database{DBName: "x:y", PoolSize: 3}},
		{Name: "q?", Database: pooler.Database{MaxDBConnections: 2}},
	}
	if got := v.([]pooler.DatabaseEntry); !slices.Equal(got, want) {
		t.Errorf("databases %+v, want %+v", got, want)
	}
	y, err := ParseYAML([]byte("databases:\n  \"a,b:c\": {dbname: \"x:y\", pool_size: 3}\n  app:\n  \"*\": {auth_user: pgb}\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ = y.Value("databases")
	want = []pooler.DatabaseEntry{
		{Name: "a,b:c", Database: pooler.Database{DBName: "x:y", PoolSize: 3}},
		{Name: "app"},
		{Name: "*", Database: pooler.Database{AuthUser: "pgb"}},
	}
	if got := v.([]pooler.DatabaseEntry); !slices.Equal(got, want) {
		t.Errorf("YAML databases %+v, want %+v", got, want)
	}
	for _, text := range []string{"databases: {app: {pool: 3}}\n", "databases: {a: {pool_size: -1}}\n", "databases: {\"*\": {dbname: x}}\n", "databases: {a: {}, a: {}}\n"} {
		if _, err := ParseYAML([]byte(text)); err == nil {
			t.Errorf("ParseYAML(%q): no error", text)
		}
	}
}

// TestPgBouncerProtectiveDefaults: keys that protect something and that
// pgpoolcheck does not implement are accepted at PgBouncer's defaults, which
// are what pgpoolcheck does, without a warning.
func TestPgBouncerProtectiveDefaults(t *testing.T) {
	_, ignored, err := ParsePgBouncerINI([]byte("[pgbouncer]\nunix_socket_mode = 0777\nunix_socket_group =\ndisable_pqexec = 0\nscram_iterations = 4096\n"))
	if err != nil || len(ignored) != 0 {
		t.Fatal(err, ignored)
	}
}

// TestPgBouncerAuthQuery: the global auth_user, auth_query and
// auth_dbname become settings, the per-database ones part of the entry's
// allow-list spec.
func TestPgBouncerAuthQuery(t *testing.T) {
	s, ignored, err := ParsePgBouncerINI([]byte(`[databases]
app = host=db auth_user=pgb auth_dbname=authdb auth_query='SELECT u, p FROM lookup($1)'
authdb = host=db dbname=postgres
[pgbouncer]
auth_type = scram-sha-256
auth_user = pooler
auth_query = SELECT usename, passwd FROM pg_shadow WHERE usename=$1
auth_dbname = authdb
`))
	if err != nil || len(ignored) != 0 {
		t.Fatal(err, ignored)
	}
	for key, want := range map[string]string{
		"auth_user":   "pooler",
		"auth_query":  "SELECT usename, passwd FROM pg_shadow WHERE usename=$1",
		"auth_dbname": "authdb",
		"databases":   "app?auth_dbname=authdb&auth_query=SELECT+u%2C+p+FROM+lookup%28%241%29&auth_user=pgb,authdb=postgres",
	} {
		if got, _ := s.Get(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	y, err := ParseYAML([]byte("auth_user: pooler\nauth_query: SELECT 1\nauth_dbname: authdb\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := y.Get("auth_query"); got != "SELECT 1" {
		t.Errorf("YAML auth_query = %q", got)
	}
}

func TestConnString(t *testing.T) {
	got, err := parseConnString(`host=db  port = 5432 password='a b\'c''d' user=x\ y dbname=`)
	if err != nil {
		t.Fatal(err)
	}
	want := []connParam{{"host", "db"}, {"port", "5432"}, {"password", "a b'c'd"}, {"user", "x y"}, {"dbname", ""}}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("param %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestConnStringErrorsHideThePassword: a malformed [databases] entry is
// reported without the password, whether the error is before it, at a
// word right after it, or at a word that is the password itself.
func TestConnStringErrorsHideThePassword(t *testing.T) {
	for _, s := range []string{
		"host=db oops password=s3cr3t user=u",
		"host=db password=s3cr3t oops",
		"host=db password= s3cr3t x",
		"host=db password s3cr3t",
		"host=db password='s3cr3t",
	} {
		_, err := parseConnString(s)
		if err == nil {
			t.Errorf("%q parsed", s)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: error shows the password: %v", s, err)
		}
	}
}

// proxyFlagSet is the flags pgpoolcheck proxy had before the settings
// table defined them.
func proxyFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
	fs.String("listen", "127.0.0.1:6432", "")
	fs.String("unix-socket-dir", "", "")
	fs.Bool("so-reuseport", false, "")
	fs.Int("peer-id", 0, "")
	fs.StringSlice("peers", nil, "")
	fs.String("upstream", "", "")
	fs.String("mode", "transaction", "")
	fs.Int("pool-size", 20, "")
	fs.Int("max-client-conn", 1000, "")
	fs.Int("max-db-connections", 0, "")
	fs.Int("max-user-connections", 0, "")
	fs.StringSlice("databases", nil, "")
	fs.Duration("query-timeout", 0, "")
	fs.StringSlice("stats-users", nil, "")
	fs.Duration("client-login-timeout", 60*time.Second, "")
	fs.Int("max-login-clients", 512, "")
	fs.Duration("idle-transaction-timeout", 0, "")
	fs.Duration("client-idle-timeout", 0, "")
	fs.Duration("query-wait-timeout", 120*time.Second, "")
	fs.Duration("server-idle-timeout", 600*time.Second, "")
	fs.Duration("server-lifetime", 3600*time.Second, "")
	fs.Duration("server-connect-timeout", 15*time.Second, "")
	fs.Duration("server-login-retry", 15*time.Second, "")
	fs.Duration("shutdown-timeout", 30*time.Second, "")
	fs.String("auth-type", "trust", "")
	fs.String("auth-file", "", "")
	fs.String("auth-user", "", "")
	fs.String("auth-query", "", "") // pooler.DefaultAuthQuery
	fs.String("auth-dbname", "", "")
	fs.Bool("insecure-trust", false, "")
	fs.Int("max-message-size", 64<<20, "")
	fs.Int("max-prepared-statements", 200, "")
	fs.String("relay", "loop", "")
	fs.Int("event-loops", 1, "")
	fs.String("log-level", "info", "")
	fs.String("log-format", "text", "")
	fs.StringSlice("admin-users", nil, "")
	fs.StringSlice("trusted-routines", nil, "")
	fs.String("on-session-state", "preserve", "")
	fs.String("metrics-listen", "", "")
	fs.String("capture", "", "")
	fs.Int64("capture-max-bytes", 0, "")
	fs.Bool("redact", false, "")
	fs.String("client-tls-sslmode", "disable", "")
	fs.String("client-tls-cert-file", "", "")
	fs.String("client-tls-key-file", "", "")
	fs.String("client-tls-ca-file", "", "")
	fs.String("client-tls-protocols", "secure", "")
	fs.String("server-tls-sslmode", "", "")
	fs.String("server-tls-ca-file", "", "")
	fs.String("server-tls-cert-file", "", "")
	fs.String("server-tls-key-file", "", "")
	return fs
}

// TestApply: a file's settings reach the configuration, except those
// given on the command line, which win.
func TestApply(t *testing.T) {
	s, err := LoadYAML("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmdline := &Settings{}
	for k, v := range map[string]string{"pool_size": "7", "log_level": "warn"} {
		if err := cmdline.Parse(k, v); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Defaults()
	s.ApplyTo(&cfg)
	cmdline.ApplyTo(&cfg)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"pool_size", cfg.PoolSize, 7},      // given on the command line
		{"log_level", cfg.LogLevel, "warn"}, // given on the command line
		{"shutdown_timeout", cfg.ShutdownTimeout, 30 * time.Second},
		{"listen", cfg.Listen, "0.0.0.0:6432"},
		{"query_wait_timeout", cfg.QueryWaitTimeout, 2 * time.Minute},
		{"server_lifetime", cfg.ServerLifetime, 1500 * time.Millisecond},
		{"max_prepared_statements", cfg.MaxPreparedStatements, -1}, // 0 turns it off
		{"insecure_trust", cfg.InsecureTrust, false},
		{"admin_users", strings.Join(cfg.AdminUsers, ","), "postgres,ops"},
		{"trusted_routines", strings.Join(cfg.TrustedRoutines, ","), "extension:postgis,app.audit"},
		{"auth_file", cfg.AuthFile, "testdata/userlist.txt"},
		{"databases", len(cfg.Databases), 3},
		{"databases reports", cfg.Databases["reports"], pooler.Database{DBName: "analytics", PoolSize: 5, MaxDBConnections: 8}},
		{"max_db_connections", cfg.MaxDBConnections, 50},
		{"query_timeout", cfg.QueryTimeout, 90 * time.Second},
		{"stats_users", strings.Join(cfg.StatsUsers, ","), "monitor"},
		{"server_tls_ca_file", cfg.ServerTLSCAFile, "testdata/ca.pem"},
		{"peers", cfg.Peers[2], "pooler-1.pooler:6432"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestApplyInvalid: a value a setting does not take is an error naming
// the key, whichever way it comes.
func TestApplyInvalid(t *testing.T) {
	s := &Settings{}
	if err := s.Put("pool_size", 0); err == nil || !strings.Contains(err.Error(), "pool_size:") {
		t.Errorf("Put: error = %v", err)
	}
	if err := s.Parse("max_message_size", "10"); err == nil || !strings.Contains(err.Error(), "max_message_size:") {
		t.Errorf("Parse: error = %v", err)
	}
	if err := s.Parse("databases", "a,a=b"); err == nil || !strings.Contains(err.Error(), "databases: a is listed twice") {
		t.Errorf("Parse: error = %v", err)
	}
	if len(s.Set()) != 0 {
		t.Errorf("invalid values were set: %v", s.Set())
	}
}

func TestMerge(t *testing.T) {
	ini, _, err := LoadPgBouncerINI("testdata/seed-004-pgbouncer.ini")
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML([]byte("max_client_conn: 42\non_session_state: reject\n"))
	if err != nil {
		t.Fatal(err)
	}
	ini.Merge(y)
	want := "listen=:6432\nunix_socket_dir=/var/run/postgresql\nupstream=postgres://localhost:5432\nmax_client_conn=42\ndatabases=*\nauth_type=md5\nauth_file=/etc/pgbouncer/userlist.txt\non_session_state=reject\n"
	if got := render(ini); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestFlagNames: every key has its flag, and the flags the table defines
// are those the command had, with the same defaults.
func TestFlagNames(t *testing.T) {
	fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
	Flags(fs)
	for _, k := range Keys() {
		if fs.Lookup(FlagName(k)) == nil {
			t.Errorf("key %s has no flag --%s", k, FlagName(k))
		}
	}
	proxyFlagSet().VisitAll(func(old *pflag.Flag) {
		fl := fs.Lookup(old.Name)
		switch {
		case fl == nil:
			t.Errorf("no flag --%s", old.Name)
		case old.Value.Type() == "stringSlice" || old.DefValue == "":
			// The mirror leaves out long defaults (auth_query's).
		case old.DefValue == "0" || old.DefValue == "0s" || old.DefValue == "false":
			if fl.DefValue != "" {
				t.Errorf("--%s: default %q, want none shown", old.Name, fl.DefValue)
			}
		case fl.DefValue != old.DefValue:
			t.Errorf("--%s: default %q, want %q", old.Name, fl.DefValue, old.DefValue)
		}
	})
}

func TestPgBouncerPeers(t *testing.T) {
	s, ignored, err := ParsePgBouncerINI([]byte(`[databases]
app = host=db port=5432
[pgbouncer]
peer_id = 2
[peers]
1 = host=pooler-0.pooler port=6432
2 = host=/var/run/pgpoolcheck port=6433
3 = host=10.0.0.3
`))
	if err != nil || len(ignored) != 0 {
		t.Fatal(err, ignored)
	}
	if got, _ := s.Get("peer_id"); got != "2" {
		t.Errorf("peer_id %q", got)
	}
	if got, _ := s.Get("peers"); got != "1=pooler-0.pooler:6432,2=/var/run/pgpoolcheck/.s.PGSQL.6433,3=10.0.0.3:6432" {
		t.Errorf("peers %q", got)
	}
	for _, tc := range []struct{ ini, want string }{
		{"[pgbouncer]\npeer_id = 20000\n", "peer id from 1 to 16383"},
		{"[peers]\nx = host=a\n", "want a peer id"},
		{"[peers]\n1 = port=6432\n", "no host"},
		{"[peers]\n1 = host=a dbname=b\n", `unknown key "dbname"`},
	} {
		if _, _, err := ParsePgBouncerINI([]byte(tc.ini)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.ini, err, tc.want)
		}
	}
}

func TestYAMLDeprecatedSpelling(t *testing.T) {
	s, err := ParseYAML([]byte("pool-size: 5\nmax_client_conn: 9\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("pool_size"); v != "5" {
		t.Fatalf("pool-size read as %q", v)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "line 1: pool-size is deprecated: write pool_size") {
		t.Fatalf("warnings %q", s.Warnings)
	}
}

// TestPgBouncerUnknownKeys: a key of PgBouncer's that pgpoolcheck does not
// use, and a key far from every known one (a newer PgBouncer's, say), are
// ignored with a warning that tells them apart; a near miss is an error
// (TestPgBouncerINIErrors).
func TestPgBouncerUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[pgbouncer]\nlogfile = /var/log/pgbouncer.log\n", "pgbouncer logfile: not used by pgpoolcheck"},
		{"[pgbouncer]\nfrobnicate_everything = 1\n", "pgbouncer frobnicate_everything: unknown key, not a PgBouncer setting pgpoolcheck knows; ignored"},
	} {
		_, ignored, err := ParsePgBouncerINI([]byte(tc.text))
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if len(ignored) != 1 {
			t.Errorf("%q: ignored %v, want one line", tc.text, ignored)
			continue
		}
		if got := ignored[0].Section + " " + ignored[0].Key + ": " + ignored[0].Reason; got != tc.want {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
}
