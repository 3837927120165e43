package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"maps"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxyconfig"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/spf13/pflag"
)

// proxyConfigFor parses args as the proxy command's flags and returns the
// pooler configuration they give, with what was written to stderr; nothing
// is started.
func proxyConfigFor(t *testing.T, environ map[string]string, args ...string) (pooler.Config, string, error) {
	t.Helper()
	var f proxyFlags
	fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
		getenv: func(k string) string { return environ[k] }}
	cfg, err := proxyConfig(e, &f)
	return cfg, stderr.String(), err
}

func writeProxyFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProxyFlagWinsOverFiles checks the precedence: flags given on the
// command line, then PGPOOLCHECK_UPSTREAM for the upstream URL, then
// --config, then --pgbouncer-ini, then the flags' defaults.
func TestProxyFlagWinsOverFiles(t *testing.T) {
	dir := t.TempDir()
	ini := writeProxyFile(t, dir, "pgbouncer.ini", `[databases]
app = host=db.example port=5433 dbname=app

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 7000
pool_mode = session
default_pool_size = 15
max_client_conn = 300
query_wait_timeout = 30
`)
	yml := writeProxyFile(t, dir, "proxy.yaml", `pool_size: 25
max_client_conn: 400
server_lifetime: 10m
max_prepared_statements: 0
auth_type: md5
auth_file: users.txt
`)
	writeProxyFile(t, dir, "users.txt", `"app" "secret"`+"\n")

	cfg, stderr, err := proxyConfigFor(t, nil, "--pgbouncer-ini", ini, "--config", yml, "--pool-size", "5")
	if err != nil {
		t.Fatal(err)
	}
	if stderr != "" {
		t.Errorf("unexpected warnings: %s", stderr)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"PoolSize (flag over both files)", cfg.PoolSize, 5},
		{"MaxClientConn (YAML over ini)", cfg.MaxClientConn, 400},
		{"Mode (ini)", cfg.Mode, pooler.Mode("session")},
		{"Listen (ini)", cfg.Listen, "127.0.0.1:7000"},
		{"Upstream (ini)", cfg.Upstream, "postgres://db.example:5433/app"},
		{"QueryWaitTimeout (ini)", cfg.QueryWaitTimeout, 30 * time.Second},
		{"ServerLifetime (YAML)", cfg.ServerLifetime, 10 * time.Minute},
		{"ServerIdleTimeout (default)", cfg.ServerIdleTimeout, 600 * time.Second},
		{"MaxPreparedStatements (YAML 0 is off)", cfg.MaxPreparedStatements, -1},
		{"AuthType (YAML)", cfg.AuthType, pooler.AuthType("md5")},
		{"Users (auth_file relative to the YAML file)", len(cfg.Users), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}

	// Without the flag, the YAML's pool_size wins over the ini's.
	cfg, _, err = proxyConfigFor(t, nil, "--pgbouncer-ini", ini, "--config", yml)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PoolSize != 25 {
		t.Errorf("PoolSize without the flag: got %d, want 25 from the YAML", cfg.PoolSize)
	}

	// A flag given explicitly with its default value still wins.
	cfg, _, err = proxyConfigFor(t, nil, "--pgbouncer-ini", ini, "--mode", "transaction")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "transaction" {
		t.Errorf("Mode with --mode transaction: got %s", cfg.Mode)
	}

	// The upstream URL: PGPOOLCHECK_UPSTREAM over the files, --upstream
	// over both.
	env := map[string]string{"PGPOOLCHECK_UPSTREAM": "postgres://env@envhost/app"}
	cfg, _, err = proxyConfigFor(t, env, "--pgbouncer-ini", ini)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream != env["PGPOOLCHECK_UPSTREAM"] {
		t.Errorf("Upstream with PGPOOLCHECK_UPSTREAM: got %s", cfg.Upstream)
	}
	cfg, _, err = proxyConfigFor(t, env, "--pgbouncer-ini", ini, "--upstream", "postgres://flag@flaghost/app")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream != "postgres://flag@flaghost/app" {
		t.Errorf("Upstream with --upstream: got %s", cfg.Upstream)
	}
}

// TestProxyConfigWarnings checks that ignored pgbouncer.ini keys and
// settings without a flag are reported, one line each, naming the file
// that set them.
func TestProxyConfigWarnings(t *testing.T) {
	dir := t.TempDir()
	ini := writeProxyFile(t, dir, "pgbouncer.ini", `[databases]
* = host=db.example

[pgbouncer]
logfile = /var/log/pgbouncer.log
admin_users = postgres
stats_period = 60
`)
	yml := writeProxyFile(t, dir, "proxy.yaml", "capture: out.capture\nredact: true\nmetrics_listen: 127.0.0.1:9187\n")
	_, stderr, err := proxyConfigFor(t, nil, "--pgbouncer-ini", ini, "--config", yml)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pgpoolcheck: warning: " + ini + ": line 5: [pgbouncer] logfile: not used by pgpoolcheck",
		"pgpoolcheck: warning: " + ini + ": line 7: [pgbouncer] stats_period: not used by pgpoolcheck",
	}
	if got := strings.Split(strings.TrimRight(stderr, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", stderr, strings.Join(want, "\n"))
	}
}

// TestProxyConfigFileErrors checks that a bad file is a usage error naming
// the flag, the file and the line, and that the command stops before
// listening.
func TestProxyConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	badType := writeProxyFile(t, dir, "bad-type.yaml", "listen: 127.0.0.1:0\npool_size: many\n")
	twoHosts := writeProxyFile(t, dir, "two.ini", "[databases]\na = host=h1\nb = host=h2\n")
	badINI := writeProxyFile(t, dir, "bad.ini", "[pgbouncer]\ndefault_pool_size = lots\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--config", badType}, "--config: " + badType + ": line 2: pool_size: want a whole number"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--pgbouncer-ini", badINI}, "--pgbouncer-ini: " + badINI + ": line 2: default_pool_size: invalid number"},
		{[]string{"proxy", "--pgbouncer-ini", twoHosts}, "--pgbouncer-ini: " + twoHosts + ": [databases] names 2 servers"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--config", filepath.Join(dir, "missing.yaml")}, "--config: open " + filepath.Join(dir, "missing.yaml")},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", tt.args...)
		if code != ExitError || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "Run 'pgpoolcheck proxy --help'") {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestProxyAdminUsersAndReload checks --admin-users and admin_users from
// a file, and that the RELOAD hook reads the file again while flags given
// on the command line still win.
func TestProxyAdminUsersAndReload(t *testing.T) {
	cfg, stderr, err := proxyConfigFor(t, nil, "--upstream", "postgres://x@h/d", "--admin-users", "postgres, ops")
	if err != nil || stderr != "" {
		t.Fatal(err, stderr)
	}
	if strings.Join(cfg.AdminUsers, ",") != "postgres,ops" || cfg.Reload != nil {
		t.Errorf("--admin-users: %q, reload hook %v", cfg.AdminUsers, cfg.Reload != nil)
	}
	dir := t.TempDir()
	yml := writeProxyFile(t, dir, "proxy.yaml", "upstream: postgres://x@h/d\npool_size: 4\nadmin_users: [alice]\n")
	cfg, stderr, err = proxyConfigFor(t, nil, "--config", yml, "--max-client-conn", "77")
	if err != nil || stderr != "" {
		t.Fatal(err, stderr)
	}
	if strings.Join(cfg.AdminUsers, ",") != "alice" || cfg.PoolSize != 4 || cfg.Reload == nil {
		t.Fatalf("from the file: admin users %q, pool size %d", cfg.AdminUsers, cfg.PoolSize)
	}
	writeProxyFile(t, dir, "proxy.yaml", "upstream: postgres://x@h/d\npool_size: 9\nadmin_users: [alice, bob]\nmax_client_conn: 5\n"+
		"stats_users: [mon]\nmax_db_connections: 6\nmax_user_connections: 4\nquery_timeout: 45\n")
	next := cfg
	if err := cfg.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if next.PoolSize != 9 || strings.Join(next.AdminUsers, ",") != "alice,bob" || next.MaxClientConn != 77 {
		t.Errorf("after reload: pool size %d, admin users %q, max client conn %d", next.PoolSize, next.AdminUsers, next.MaxClientConn)
	}
	if strings.Join(next.StatsUsers, ",") != "mon" || next.MaxDBConnections != 6 || next.MaxUserConnections != 4 || next.QueryTimeout != 45*time.Second {
		t.Errorf("after reload: stats users %q, caps %d/%d, query timeout %s", next.StatsUsers, next.MaxDBConnections, next.MaxUserConnections, next.QueryTimeout)
	}
	// A flag given on the command line wins at reload too.
	cfg, _, err = proxyConfigFor(t, nil, "--config", yml, "--pool-size", "3")
	if err != nil {
		t.Fatal(err)
	}
	next = cfg
	writeProxyFile(t, dir, "proxy.yaml", "upstream: postgres://x@h/d\npool_size: 11\n")
	if err := cfg.Reload(&next); err != nil || next.PoolSize != 3 {
		t.Errorf("reload with --pool-size 3: %d, %v", next.PoolSize, err)
	}
	writeProxyFile(t, dir, "proxy.yaml", "pool_size: many\n")
	if err := cfg.Reload(&next); err == nil {
		t.Error("reload of a bad file: no error")
	}
}

// TestProxyServerTLS checks that the server TLS settings reach the
// upstream URL or DSN whichever gives it (the ini's keys are not lost when
// --upstream comes from the command line), and that a contradiction stops
// the start.
func TestProxyServerTLS(t *testing.T) {
	dir := t.TempDir()
	ini := writeProxyFile(t, dir, "pgbouncer.ini", `[databases]
app = host=db.example port=5433

[pgbouncer]
server_tls_sslmode = verify-full
server_tls_ca_file = ca.pem
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pgbouncer-ini", ini}, "postgres://db.example:5433/app?sslmode=verify-full&sslrootcert=" + url.QueryEscape(filepath.Join(dir, "ca.pem"))},
		{[]string{"--pgbouncer-ini", ini, "--upstream", "postgres://u@other/db"}, "postgres://u@other/db?sslmode=verify-full&sslrootcert=" + url.QueryEscape(filepath.Join(dir, "ca.pem"))},
		{[]string{"--upstream", "host=h dbname=d", "--server-tls-sslmode", "require", "--server-tls-cert-file", "/c/it's.crt"}, `host=h dbname=d sslmode='require' sslcert='/c/it\'s.crt'`},
		{[]string{"--upstream", "postgres://u@h/d?sslmode=require", "--server-tls-sslmode", "require"}, "postgres://u@h/d?sslmode=require"},
	} {
		cfg, _, err := proxyConfigFor(t, nil, tc.args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if cfg.Upstream != tc.want {
			t.Errorf("%v: upstream %s, want %s", tc.args, cfg.Upstream, tc.want)
		}
	}
	for _, args := range [][]string{
		{"proxy", "--upstream", "postgres://u@h/d?sslmode=disable", "--server-tls-sslmode", "verify-full"},
		{"proxy", "--upstream", "host=h sslmode=prefer", "--server-tls-sslmode", "require"},
	} {
		_, stderr, code := runCLI(t, "", args...)
		if code != ExitError || !strings.Contains(stderr, "the upstream sets sslmode=") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the contradiction", args, code, stderr)
		}
	}
}

// TestProxyRefusesUnhonouredSecurity checks that pgbouncer.ini keys that
// protect something and that pgpoolcheck does not implement stop the start
// with exit 2 naming the key, before anything listens.
func TestProxyRefusesUnhonouredSecurity(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"[pgbouncer]\nclient_tls_sslmode = require\nclient_tls_cert_file = s.crt\n", "--client-tls-sslmode require needs --client-tls-cert-file and --client-tls-key-file"},
		{"[pgbouncer]\nclient_tls_sslmode = require\nclient_tls_cert_file = s.crt\nclient_tls_key_file = s.key\n", "s.crt: no such file"},
		{"[pgbouncer]\nclient_tls_ciphers = HIGH:MEDIUM\n", `client_tls_ciphers: "HIGH:MEDIUM" is not supported`},
		{"[pgbouncer]\nauth_hba_file = hba.conf\n", "auth_hba_file: not supported by pgpoolcheck"},
		{"[pgbouncer]\nauth_type = hba\n", "auth_type hba is not supported"},
		{"[pgbouncer]\nauth_user = pgbouncer\n", "an auth user (auth_query) needs auth type md5 or scram-sha-256, not trust"},
		{"[pgbouncer]\ntransaction_timeout = 5\n", "transaction_timeout: this limit is not supported"},
		{"[users]\nalice = max_user_connections=2\n", "[users] alice: per-user settings"},
	} {
		ini := writeProxyFile(t, dir, "pgbouncer.ini", "[databases]\n* = host=127.0.0.1\n"+tc.text)
		_, stderr, code := runCLI(t, "", "proxy", "--pgbouncer-ini", ini, "--listen", "127.0.0.1:1")
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.text, code, stderr, tc.want)
		}
	}
	// The reject policy cannot refuse a Parse without the tracking.
	_, stderr, code := runCLI(t, "", "proxy", "--upstream", "postgres://u@h/d", "--listen", "256.0.0.1:1",
		"--mode", "transaction", "--on-session-state", "reject", "--max-prepared-statements", "0")
	if want := "on_session_state reject needs max_prepared_statements above 0"; code != ExitError || !strings.Contains(stderr, want) {
		t.Errorf("reject without tracking: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// TestProxyDatabases checks --databases and the ini's [databases] as the
// allow-list.
func TestProxyDatabases(t *testing.T) {
	cfg, _, err := proxyConfigFor(t, nil, "--upstream", "postgres://u@h/d", "--databases", "app,reports=analytics:5,big:0:9")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]pooler.Database{"app": {}, "reports": {DBName: "analytics", PoolSize: 5}, "big": {MaxDBConnections: 9}}
	if !maps.Equal(cfg.Databases, want) {
		t.Errorf("Databases = %v, want %v", cfg.Databases, want)
	}
	if cfg, _, err := proxyConfigFor(t, nil, "--upstream", "postgres://u@h/d"); err != nil || cfg.Databases != nil {
		t.Errorf("no --databases: %v, %v; want no allow-list", cfg.Databases, err)
	}
	for _, args := range [][]string{
		{"proxy", "--upstream", "postgres://u@h/d", "--databases", "app:0"},
		{"proxy", "--upstream", "postgres://u@h/d", "--databases", "app,app=x"},
	} {
		_, stderr, code := runCLI(t, "", args...)
		if code != ExitError || !strings.Contains(stderr, "--databases:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key to
// dir and returns their paths.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pooler"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = writeProxyFile(t, dir, "pooler.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	keyFile = writeProxyFile(t, dir, "pooler.key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	return certFile, keyFile
}

// TestProxyClientTLS checks that the ini's client_tls_* keys and the
// flags give the pooler its TLS configuration, and that what cannot be
// honoured stops the start.
func TestProxyClientTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	ini := writeProxyFile(t, dir, "pgbouncer.ini", `[databases]
* = host=127.0.0.1

[pgbouncer]
client_tls_sslmode = verify-ca
client_tls_cert_file = pooler.crt
client_tls_key_file = pooler.key
client_tls_ca_file = pooler.crt
client_tls_protocols = tlsv1.3
`)
	cfg, stderr, err := proxyConfigFor(t, nil, "--pgbouncer-ini", ini)
	if err != nil || stderr != "" {
		t.Fatal(err, stderr)
	}
	if cfg.ClientTLSMode != pooler.TLSVerifyCA || cfg.ClientTLS == nil || len(cfg.ClientTLS.Certificates) != 1 ||
		cfg.ClientTLS.ClientCAs == nil || cfg.ClientTLS.MinVersion != tls.VersionTLS13 {
		t.Fatalf("client TLS from the ini: mode %s, config %+v", cfg.ClientTLSMode, cfg.ClientTLS)
	}
	if _, err := pooler.New(cfg); err != nil {
		t.Fatalf("the pooler refuses the configuration: %v", err)
	}
	cfg, _, err = proxyConfigFor(t, nil, "--upstream", "postgres://u@h/d")
	if err != nil || cfg.ClientTLSMode != pooler.TLSDisable || cfg.ClientTLS != nil {
		t.Fatalf("default: mode %s, config %v, %v", cfg.ClientTLSMode, cfg.ClientTLS, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--client-tls-sslmode", "verify-full", "--client-tls-cert-file", certFile, "--client-tls-key-file", keyFile}, "needs --client-tls-ca-file"},
		{[]string{"--client-tls-sslmode", "require", "--client-tls-cert-file", certFile, "--client-tls-key-file", keyFile, "--client-tls-protocols", "tlsv1.0,tlsv1.3"}, "--client-tls-protocols: the versions must be a contiguous range"},
		{[]string{"--client-tls-sslmode", "require", "--client-tls-cert-file", certFile, "--client-tls-key-file", keyFile, "--client-tls-ca-file", ini}, "holds no PEM certificate"},
		{[]string{"--client-tls-sslmode", "on"}, `unknown value "on"`},
	} {
		args := append([]string{"proxy", "--upstream", "postgres://u@h/d"}, tc.args...)
		_, stderr, code := runCLI(t, "", args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestProxyINIArgument: pgpoolcheck proxy pgbouncer.ini reads the file as
// --pgbouncer-ini does; both at once is a usage error.
func TestProxyINIArgument(t *testing.T) {
	dir := t.TempDir()
	ini := writeProxyFile(t, dir, "pgbouncer.ini", "[databases]\n* = host=127.0.0.1 port=1\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = 1\nauth_type = bogus\n")
	_, stderr, code := runCLI(t, "", "proxy", ini)
	if code != ExitError || !strings.Contains(stderr, "auth_type bogus is not supported") {
		t.Errorf("proxy %s: exit %d, %q; want the ini read (its auth_type refused)", ini, code, stderr)
	}
	_, stderr, code = runCLI(t, "", "proxy", ini, "--pgbouncer-ini", ini)
	if code != ExitError || !strings.Contains(stderr, "give the pgbouncer.ini once") {
		t.Errorf("both: exit %d, %q", code, stderr)
	}
}

// TestAnalyzeCaptureParts: analyze FILE reads the parts a restarted
// recorder wrote next to it, skips a corrupt line with a warning, and
// fails on it with --strict.
func TestAnalyzeCaptureParts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "staging.jsonl")
	for _, sql := range []string{"SET search_path = a", "SELECT pg_advisory_lock(1)"} {
		w, err := capture.Create(path, capture.Header{Mode: "record"}, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := w.StartSession(capture.SessionInfo{User: "u"})
		for _, q := range []string{sql, "SELECT 1", "SELECT 2"} {
			s.Frontend('Q', append([]byte(q), 0), len(q)+1)
			s.Backend('C', []byte("SELECT 1\x00"))
			s.Backend('Z', []byte{'I'})
		}
		s.End("done")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := runCLI(t, "", "analyze", "--format", "json", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, rule := range []string{"session-set", "advisory-lock-session"} {
		if !strings.Contains(stdout, rule) {
			t.Errorf("analyze %s: no %s finding (was the second part read?)\n%s", path, rule, stdout)
		}
	}
	// The restarted recorder is one proxy instance with two recordings.
	var doc struct {
		Summary struct{ Instances, Captures, CaptureFiles int } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Summary; s.Instances != 1 || s.Captures != 2 {
		t.Errorf("summary %+v, want 1 instance and 2 captures", s)
	}
	text, _, _ := runCLI(t, "", "analyze", "--fail-on", "never", path)
	if want := "traffic from 1 proxy instance (2 recordings, 2 capture files)"; !strings.Contains(text, want) {
		t.Errorf("text summary lacks %q:\n%s", want, text)
	}
	// A second recorder at another path is another instance.
	other := filepath.Join(dir, "other.jsonl")
	w, err := capture.Create(other, capture.Header{Mode: "record"}, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.StartSession(capture.SessionInfo{User: "u"}).End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	text, _, _ = runCLI(t, "", "analyze", "--fail-on", "never", path, other)
	if want := "traffic from 2 proxy instances (3 recordings, 3 capture files)"; !strings.Contains(text, want) {
		t.Errorf("text summary lacks %q:\n%s", want, text)
	}
	// A corrupt line in the middle of part 2.
	part2 := capture.PartPath(path, 2)
	data, _ := os.ReadFile(part2)
	lines := strings.SplitAfter(string(data), "\n")
	corrupt := strings.Join(lines[:2], "") + "{not json\n" + strings.Join(lines[2:], "")
	if err := os.WriteFile(part2, []byte(corrupt), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "", "analyze", "--fail-on", "never", path)
	if code != 0 || !strings.Contains(stderr, "1 corrupt lines skipped") {
		t.Errorf("corrupt line: exit %d, stderr %q; want 0 and a warning", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "analyze", "--strict", path)
	if code != ExitError || !strings.Contains(stderr, "not a capture event") {
		t.Errorf("--strict: exit %d, stderr %q; want 2", code, stderr)
	}
}

// TestProxyEveryKeyHasAFlag: every key of the proxy's YAML has a flag of
// the real command (capture_max_bytes was missing), and reaches the
// configuration from the file.
func TestProxyEveryKeyHasAFlag(t *testing.T) {
	var f proxyFlags
	fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
	f.register(fs)
	for _, k := range proxyconfig.Keys() {
		if fs.Lookup(proxyconfig.FlagName(k)) == nil {
			t.Errorf("key %s has no flag --%s", k, proxyconfig.FlagName(k))
		}
	}
	yml := writeProxyFile(t, t.TempDir(), "proxy.yaml", "upstream: postgres://u@h/d\ncapture: /x.jsonl\ncapture_max_bytes: 2000\n")
	cfg, _, err := proxyConfigFor(t, nil, "--config", yml)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CaptureMaxBytes != 2000 || cfg.CaptureFile != "/x.jsonl" {
		t.Errorf("capture %q, capture-max-bytes %d", cfg.CaptureFile, cfg.CaptureMaxBytes)
	}
}

// TestProxyReloadINIDatabases: RELOAD loads the ini's [databases] again,
// as entries (a name with , or : included), with the command line's
// settings still winning.
func TestProxyReloadINIDatabases(t *testing.T) {
	dir := t.TempDir()
	ini := writeProxyFile(t, dir, "pgbouncer.ini", "[databases]\napp = host=db pool_size=3\n")
	cfg, _, err := proxyConfigFor(t, nil, "--pgbouncer-ini", ini, "--max-client-conn", "9")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]pooler.Database{"app": {PoolSize: 3}}; !maps.Equal(cfg.Databases, want) || cfg.Reload == nil {
		t.Fatalf("databases %v, want %v", cfg.Databases, want)
	}
	writeProxyFile(t, dir, "pgbouncer.ini", "[databases]\napp = host=db pool_size=5\n\"a,b:c\" = host=db dbname=app max_db_connections=2\n[pgbouncer]\nmax_client_conn = 50\n")
	next := cfg
	if err := cfg.Reload(&next); err != nil {
		t.Fatal(err)
	}
	want := map[string]pooler.Database{"app": {PoolSize: 5}, "a,b:c": {DBName: "app", MaxDBConnections: 2}}
	if !maps.Equal(next.Databases, want) || next.MaxClientConn != 9 {
		t.Errorf("after reload: databases %v, max_client_conn %d; want %v, 9", next.Databases, next.MaxClientConn, want)
	}
}

// TestRecorderLogsThePartItWrote: a recorder restarted onto an existing
// capture file says at shutdown that it wrote the next part, not the file
// it was given; with rotation it names the last part as well.
func TestRecorderLogsThePartItWrote(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "staging.jsonl")
	start := func(extra ...string) string {
		var f proxyFlags
		fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
		f.register(fs)
		args := append([]string{"--mode", "record", "--capture", path, "--listen", "127.0.0.1:0",
			"--upstream", "postgres://postgres@127.0.0.1:1/postgres"}, extra...)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
			getenv: func(string) string { return "" }}
		p, _, closeCapture, err := startProxy(e, &f)
		if err != nil {
			t.Fatal(err)
		}
		// Serve with a cancelled context shuts down as on SIGTERM.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.Serve(ctx); err != nil {
			t.Fatal(err)
		}
		closeCapture()
		return stderr.String()
	}
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{"first", nil, `msg="capture written" file=` + path + "\n"},
		{"restarted", nil, `msg="capture written" file=` + capture.PartPath(path, 2) + "\n"},
		{"restarted, rotating", []string{"--capture-max-bytes", "100000"}, `msg="capture written" file=` + capture.PartPath(path, 3) + "\n"},
	}
	for _, tc := range tests {
		log := start(tc.extra...)
		if !strings.Contains(log, tc.want) {
			t.Errorf("%s: log lacks %q:\n%s", tc.name, tc.want, log)
		}
	}
	// writtenAttrs with rotation names the first and the last part.
	got := writtenAttrs([]string{"a.4.jsonl", "a.5.jsonl", "a.6.jsonl"})
	want := []any{"file", "a.4.jsonl", "parts", 3, "last", "a.6.jsonl"}
	if len(got) != len(want) {
		t.Fatalf("writtenAttrs = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("writtenAttrs = %v, want %v", got, want)
			break
		}
	}
}

// TestProxyErrorsHideThePassword: an upstream that cannot be read is
// named in the error without the password it holds, in either form.
func TestProxyErrorsHideThePassword(t *testing.T) {
	for _, up := range []string{
		"postgres://app:s3cr3t-pw@host:notaport/db",
		"postgres://app:s3cr3t%40pw@host:notaport/db",
		"postgres://app:s3cr3t-pw@[::1/db",
		"postgresql://app:s3cr3t-pw@host/db?sslmode=bogus",
		"postgres://app@host:notaport/db?password=s3cr3t-pw",
		"host=h password=s3cr3t-pw port=notaport",
		"host=h password='s3cr3t pw' port=notaport",
	} {
		stdout, stderr, code := runCLI(t, "", "proxy", "--upstream", up, "--listen", "256.0.0.1:1", "--insecure-trust")
		if code != ExitError || strings.Contains(stdout+stderr, "s3cr3t") || !strings.Contains(stderr, "upstream") {
			t.Errorf("%s: exit %d, output %q; want 2 naming the upstream without its password", up, code, stdout+stderr)
		}
	}
}
