package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxyconfig"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/metrics"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type proxyFlags struct {
	listen, upstream, mode    string
	unixSocketDir             string
	soReusePort               bool
	peerID                    int
	peers                     []string
	poolSize, maxClientConn   int
	maxDBConns, maxUserConns  int
	queryTimeout              time.Duration
	statsUsers                []string
	trustedRoutines           []string
	queryWait, idle, lifetime time.Duration
	connectTimeout, shutdown  time.Duration
	loginRetry                time.Duration
	authType, authFile        string
	authUser, authQuery       string
	authDBName                string
	insecureTrust             bool
	maxMessageSize            int
	maxPrepared               int
	relay                     string
	relayLoops                int
	logLevel, logFormat       string
	config, pgbouncerINI      string
	capture                   string
	redact                    bool
	captureMaxBytes           int64
	onSessionState            string
	adminUsers                []string
	metricsListen             string
	databases                 []string
	clientLoginTimeout        time.Duration
	maxLoginClients           int
	idleTxTimeout             time.Duration
	clientIdleTimeout         time.Duration
	clientTLSMode             string
	clientTLSCert             string
	clientTLSKey              string
	clientTLSCA               string
	clientTLSProtocols        string
	serverTLSMode             string
	serverTLSCA               string
	serverTLSCert             string
	serverTLSKey              string
}

func newProxy(e *env) *cobra.Command {
	var f proxyFlags
	cmd := &cobra.Command{
		Use:   "proxy [pgbouncer.ini] [flags]",
		Short: "Run a PostgreSQL connection pooler (transaction, session or record mode)",
		Long: `Run a connection pooler in front of PostgreSQL. Clients connect to --listen and
log in to the pooler (--auth-type); the pooler keeps a pool of server connections
per database and user, logged in to --upstream.

Server credentials: the upstream URL gives host, port, TLS settings (sslmode …)
and the default user, password and database. A client logging in as the URL's
user uses the URL's password towards the server; any other user logs in with
its secret from --auth-file: a plain-text password, an md5 hash (answers an
md5 server) or a SCRAM verifier, which logs in to a server storing the same
verifier with the ClientKey of a client's SCRAM login, as PgBouncer does (so
the first server connection of such a user is made after a client logged in
with SCRAM). A server asking for a password the pooler cannot give gets the
client a FATAL saying so. The upstream URL may also come from the
PGPOOLCHECK_UPSTREAM environment variable, which keeps its password out of the
process list.

--auth-user looks up users not in --auth-file on the server, as PgBouncer's
auth_user: the pooler logs in as that user (its password from --auth-file)
to --auth-dbname (a --databases entry; default the client's database) and
runs --auth-query with the user's name as $1; what it returns (an md5 hash or
a SCRAM verifier, or no row: unknown user, same answer as a wrong password)
checks the client and logs the user's pools in. Secrets found are used for
10 seconds before the next lookup. A --databases entry may carry its own,
URL-encoded: app?auth_user=pgb&auth_dbname=authdb&auth_query=SELECT+…

--auth-file is PgBouncer's userlist format: one "user" "secret" per line, the
secret a plain-text password, md5<md5(password+user)>, or a SCRAM-SHA-256
verifier. trust needs no file and is refused on a non-loopback --listen
address unless --insecure-trust is given.

TLS: --client-tls-sslmode allow or prefer answers a client's SSLRequest with a
TLS handshake (--client-tls-cert-file, --client-tls-key-file); require refuses
plaintext clients (FATAL 28000 "SSL required"); verify-ca and verify-full also
require a client certificate signed by --client-tls-ca-file. RELOAD and SIGHUP
read the certificate files again for new clients. Towards PostgreSQL,
--server-tls-sslmode and --server-tls-ca-file/-cert-file/-key-file become the
upstream URL's sslmode, sslrootcert, sslcert and sslkey (an upstream that
already says otherwise is an error).

Settings may also come from files. --config reads pgpoolcheck's YAML config:
a mapping of the flags' names in snake_case (pool_size: 20, upstream: …,
query_wait_timeout: 2m; durations are Go durations or seconds); an unknown key
is an error. --pgbouncer-ini reads an existing pgbouncer.ini: [databases]
becomes the upstream (every entry must name the same server) and the
allow-list of databases (--databases: aliases with dbname= and per-database
pool_size= included; a client asking for another database gets FATAL
3D000), and the common [pgbouncer] keys (listen_addr, listen_port,
pool_mode, default_pool_size, max_client_conn, auth_type, auth_file, the
timeouts, server_tls_* …) their flags. A key that protects something (TLS,
authentication, per-user settings, connection limits) and that pgpoolcheck
does not implement stops the start with exit 2, naming the key; other keys
it does not use are reported as warnings on stderr. Relative file paths are
relative to the file that names them. Precedence, highest
first: flags given on the command line, then (for the upstream URL)
PGPOOLCHECK_UPSTREAM, then --config, then --pgbouncer-ini, then the defaults.
With a config file, the admin console's RELOAD and
SIGHUP read the files again and apply pool sizes, the connection caps,
admin_users, stats_users, max_client_conn, the timeouts, the auth file
and the client certificates at once; other changed settings are logged as
needing a restart.

Limits across pools: --max-db-connections caps the server connections of
one database over all its users, --max-user-connections those of one user
over all databases (a database entry NAME:POOL_SIZE:MAX_DB_CONNECTIONS caps
one database); a client that needs a server beyond a cap waits in its
queue within --query-wait-timeout. --query-timeout closes a client whose
query has run that long with FATAL "query timeout" (the query is cancelled
and its server closed).

Admin console: users in --admin-users (who log in as any client does) may
connect to the virtual database pgpoolcheck (or pgbouncer, PgBouncer's name)
on the same port, e.g. psql -h 127.0.0.1 -p 6432 -U postgres pgpoolcheck,
and run SHOW POOLS, SHOW STATS, STATS_TOTALS, STATS_AVERAGES, TOTALS, USERS,
SHOW CLIENTS, SHOW SERVERS, SHOW SOCKETS, SHOW FDS, SHOW MEM, SHOW DATABASES,
SHOW LISTS, SHOW CONFIG (PgBouncer's columns), SHOW HAZARDS, SHOW VERSION,
PAUSE [db], RESUME [db], DISABLE db, ENABLE db, RECONNECT [db],
WAIT_CLOSE [db], KILL db, RELOAD, SET key = value (a setting RELOAD can
change, while running) and SHUTDOWN. One admin may connect when clients are
at --max-client-conn. Users in --stats-users may run the SHOW commands only.
Other users are refused.

Metrics: --metrics-listen ADDR serves Prometheus metrics on http://ADDR/metrics
(clients and servers by state per pool, pinned clients, a wait-time
histogram, transactions, queries, bytes, prepared-statement counters and the
session-state hazards by rule and action), read from the pooler's counters at
each scrape.

Session state in transaction mode (--on-session-state): pgpoolcheck parses
every statement that could change session state (a keyword pre-filter first,
then a cache) and, by default (preserve), makes each client's SET,
set_config(…, false) and SET ROLE follow it to whichever server it gets while
no other client ever sees them, and pins a client that holds an advisory lock,
LISTENs, has temporary tables, WITH HOLD cursors or SQL prepared statements to
its server until that state is gone, cleaning the server before reuse. reset
only cleans; reject refuses such statements with SQLSTATE 0A000 naming the
rule and its fix; allow passes them through as PgBouncer does. Every hazard is
counted and logged once per client and rule. off skips the classification.

Capture: --mode record keeps one server connection per client (session
pooling, so the application behaves exactly as without the proxy) and
records every session to --capture FILE; --capture also works in the other
modes. The file holds statements, statement names, transaction boundaries and
error codes — never parameter values, result rows or passwords; --redact
replaces literals in the SQL too. Read it with 'pgpoolcheck analyze FILE'.

The proxy runs until SIGINT or SIGTERM: it then stops accepting, lets running
transactions finish for up to --shutdown-timeout, closes everything and exits 0.`,
		Example: `  pgpoolcheck proxy --upstream postgres://app:secret@db:5432/app --pool-size 20
  pgpoolcheck proxy --listen 0.0.0.0:6432 --auth-type scram-sha-256 --auth-file userlist.txt \
      --upstream 'postgres://app@db/app?sslmode=require'
  pgpoolcheck proxy --pgbouncer-ini /etc/pgbouncer/pgbouncer.ini --listen 127.0.0.1:7432
  pgpoolcheck proxy /etc/pgbouncer/pgbouncer.ini
  pgpoolcheck proxy --config proxy.yaml
  pgpoolcheck proxy --mode record --capture staging.jsonl --upstream postgres://app@db/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				// pgpoolcheck proxy pgbouncer.ini, as pgbouncer pgbouncer.ini.
				if cmd.Flags().Changed("pgbouncer-ini") {
					return usagef("give the pgbouncer.ini once: as the argument or as --pgbouncer-ini")
				}
				if err := cmd.Flags().Set("pgbouncer-ini", args[0]); err != nil {
					return usageError{err}
				}
			}
			return runProxy(cmd.Context(), e, cmd.Flags(), &f)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// register defines the proxy's flags on fl, bound to f.
func (f *proxyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.listen, "listen", "127.0.0.1:6432", "address to accept clients on")
	fl.BoolVar(&f.soReusePort, "so-reuseport", false, "set SO_REUSEPORT on the listener, so that several pgpoolcheck processes on one machine share --listen (Linux)")
	fl.IntVar(&f.peerID, "peer-id", 0, fmt.Sprintf("this instance's id among peers behind one address, 1 to %d: cancel keys carry it, and a cancel request for another peer's key is forwarded to that peer (0: no peering)", pooler.MaxPeerID))
	fl.StringSliceVar(&f.peers, "peers", nil, "every instance behind the address, this one included, comma-separated or repeated: ID=HOST:PORT (or ID=/path/.s.PGSQL.PORT)")
	fl.StringVar(&f.unixSocketDir, "unix-socket-dir", "", "also listen on a Unix-domain socket in this directory (.s.PGSQL.PORT, as PostgreSQL names it: psql -h DIR -p PORT)")
	fl.StringVar(&f.upstream, "upstream", "", "PostgreSQL connection URL (or PGPOOLCHECK_UPSTREAM)")
	fl.StringVar(&f.mode, "mode", "transaction", "pool mode: transaction, session or record")
	fl.IntVar(&f.poolSize, "pool-size", 20, "server connections per database and user")
	fl.IntVar(&f.maxClientConn, "max-client-conn", 1000, "most clients at once")
	fl.IntVar(&f.maxDBConns, "max-db-connections", 0, "most server connections to one database over all users (0: no cap); clients beyond it wait for a server")
	fl.IntVar(&f.maxUserConns, "max-user-connections", 0, "most server connections of one user over all databases (0: no cap); clients beyond it wait for a server")
	fl.StringSliceVar(&f.databases, "databases", nil, "allow-list of databases clients may ask for, comma-separated entries NAME[=DBNAME][:POOL_SIZE[:MAX_DB_CONNECTIONS]][?auth_user=…&auth_dbname=…&auth_query=…] (an alias connects to DBNAME; * admits any name; POOL_SIZE 0 keeps --pool-size; default: any)")
	fl.IntVar(&f.maxLoginClients, "max-login-clients", 512, "most connections logging in at once (more are refused at once); not counted against --max-client-conn until they authenticate")
	fl.DurationVar(&f.clientLoginTimeout, "client-login-timeout", 60*time.Second, "how long a client may take to send its startup packet and authenticate")
	fl.DurationVar(&f.queryWait, "query-wait-timeout", 120*time.Second, "how long a client may wait for a server")
	fl.DurationVar(&f.queryTimeout, "query-timeout", 0, "close a client whose query has run this long since its last message, with FATAL \"query timeout\" (the query is cancelled, the server closed; 0: never)")
	fl.DurationVar(&f.idleTxTimeout, "idle-transaction-timeout", 0, "close a client idle inside a transaction this long (its server is rolled back and freed; 0: never)")
	fl.DurationVar(&f.clientIdleTimeout, "client-idle-timeout", 0, "close a client that sent nothing outside a transaction this long (0: never)")
	fl.DurationVar(&f.idle, "server-idle-timeout", 600*time.Second, "close servers idle this long")
	fl.DurationVar(&f.lifetime, "server-lifetime", 3600*time.Second, "retire servers this old (never mid-transaction)")
	fl.DurationVar(&f.connectTimeout, "server-connect-timeout", 15*time.Second, "timeout of one server login")
	fl.DurationVar(&f.loginRetry, "server-login-retry", 15*time.Second, "longest wait between server logins while the server is down (from 250ms, doubling); clients meanwhile get the login error at once")
	fl.DurationVar(&f.shutdown, "shutdown-timeout", 30*time.Second, "how long shutdown lets transactions finish")
	fl.StringVar(&f.authType, "auth-type", "trust", "client authentication: trust, md5, scram-sha-256 or cert (a client certificate whose common name is the user; needs --client-tls-sslmode verify-ca or verify-full)")
	fl.StringVar(&f.authFile, "auth-file", "", "PgBouncer-format userlist file")
	fl.StringVar(&f.authUser, "auth-user", "", "user that looks up users not in --auth-file on the server with --auth-query (its password from --auth-file)")
	fl.StringVar(&f.authQuery, "auth-query", pooler.DefaultAuthQuery, "query returning the user name and secret of $1, run as --auth-user")
	fl.StringVar(&f.authDBName, "auth-dbname", "", "--databases entry the auth query runs in (default: the client's database)")
	fl.BoolVar(&f.insecureTrust, "insecure-trust", false, "allow trust authentication on a non-loopback address")
	fl.IntVar(&f.maxMessageSize, "max-message-size", pooler.DefaultMaxMessageSize, "largest client message in bytes")
	fl.IntVar(&f.maxPrepared, "max-prepared-statements", 200, "protocol prepared statements kept per server connection in transaction mode (0 turns their support off)")
	fl.StringVar(&f.relay, "relay", "loop", "how transaction mode relays: loop (a few epoll event loops, Linux) or goroutine (two goroutines per busy client)")
	fl.IntVar(&f.relayLoops, "relay-loops", 1, "event loops of the loop relay (more only where the pooler has cores of its own)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.capture, "capture", "", "record every client session to this capture file (JSON Lines; required with --mode record)")
	fl.BoolVar(&f.redact, "redact", false, "replace literals in captured SQL with placeholders")
	fl.Int64Var(&f.captureMaxBytes, "capture-max-bytes", 0, "start a new capture part (FILE.2.jsonl, …) before one exceeds this size (0: never)")
	fl.StringVar(&f.onSessionState, "on-session-state", "preserve", "session state in transaction mode: preserve (replay SETs, pin locks/LISTEN/temp tables), reset (clean the server), reject (refuse with 0A000), allow (pass through, as PgBouncer, counted) or off (no classification at all)")
	fl.StringSliceVar(&f.trustedRoutines, "trusted-routines", nil, "routines the operator vouches change no session state, so calls of them are not followed by a read of the server's state: name, schema.name or extension:NAME (every routine of that extension), comma-separated")
	fl.StringSliceVar(&f.adminUsers, "admin-users", nil, "users allowed on the admin console (database pgpoolcheck), comma-separated")
	fl.StringSliceVar(&f.statsUsers, "stats-users", nil, "users allowed the admin console's SHOW commands only, comma-separated")
	fl.StringVar(&f.metricsListen, "metrics-listen", "", "serve Prometheus metrics on http://ADDR/metrics (e.g. 127.0.0.1:9127)")
	fl.StringVar(&f.clientTLSMode, "client-tls-sslmode", "disable", "TLS to clients: disable, allow or prefer (TLS for clients that ask), require (refuse plaintext), verify-ca or verify-full (also a client certificate signed by --client-tls-ca-file)")
	fl.StringVar(&f.clientTLSCert, "client-tls-cert-file", "", "the pooler's certificate for clients (PEM)")
	fl.StringVar(&f.clientTLSKey, "client-tls-key-file", "", "key of --client-tls-cert-file (PEM)")
	fl.StringVar(&f.clientTLSCA, "client-tls-ca-file", "", "CA certificates that verify client certificates (PEM)")
	fl.StringVar(&f.clientTLSProtocols, "client-tls-protocols", "secure", "TLS versions offered to clients: secure (TLS 1.2 and 1.3), all, or a list such as tlsv1.2,tlsv1.3")
	fl.StringVar(&f.serverTLSMode, "server-tls-sslmode", "", "TLS to PostgreSQL: disable, allow, prefer, require, verify-ca or verify-full (sets sslmode in the upstream URL)")
	fl.StringVar(&f.serverTLSCA, "server-tls-ca-file", "", "CA certificates that verify PostgreSQL's certificate (sslrootcert)")
	fl.StringVar(&f.serverTLSCert, "server-tls-cert-file", "", "client certificate the pooler shows PostgreSQL (sslcert)")
	fl.StringVar(&f.serverTLSKey, "server-tls-key-file", "", "key of --server-tls-cert-file (sslkey)")
	fl.StringVar(&f.config, "config", "", "YAML config file of proxy settings (flags given on the command line win)")
	fl.StringVar(&f.pgbouncerINI, "pgbouncer-ini", "", "read settings from a PgBouncer pgbouncer.ini (--config and flags win)")
}

func runProxy(ctx context.Context, e *env, fs *pflag.FlagSet, f *proxyFlags) error {
	p, cfg, closeCapture, err := startProxy(e, fs, f)
	if err != nil {
		return err
	}
	defer closeCapture()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	{
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go func() {
			for {
				select {
				case <-hup:
					if cfg.Reload == nil {
						cfg.Logger.Warn("SIGHUP: nothing to reload (start the proxy with --config or --pgbouncer-ini to change settings while it runs)")
					} else if err := p.Reload(); err != nil {
						cfg.Logger.Warn("reload on SIGHUP failed", "err", err)
					} else {
						cfg.Logger.Info("configuration reloaded (SIGHUP)")
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return p.Serve(ctx)
}

// startProxy makes the pooler the flags describe and has it listen,
// opening the --capture file first when one is given. closeCapture
// flushes and closes that file: call it after Serve returns.
func startProxy(e *env, fs *pflag.FlagSet, f *proxyFlags) (p *pooler.Proxy, cfg pooler.Config, closeCapture func(), err error) {
	cfg, err = proxyConfig(e, fs, f)
	if err != nil {
		return nil, cfg, nil, err
	}
	if cfg.Mode == pooler.ModeRecord && f.capture == "" {
		return nil, cfg, nil, usagef("--mode record needs --capture FILE")
	}
	closeCapture = func() {}
	if f.capture != "" {
		w, err := capture.Create(f.capture, capture.Header{Upstream: cfg.Upstream, Mode: string(cfg.Mode)},
			capture.Options{Redact: f.redact, MaxBytes: f.captureMaxBytes, Logger: cfg.Logger})
		if err != nil {
			return nil, cfg, nil, err
		}
		cfg.Capture = w
		cfg.Logger.Info("capture started", "file", w.Path())
		closeCapture = func() {
			if err := w.Close(); err != nil {
				cfg.Logger.Warn("capture closed with an error", "file", f.capture, "err", err)
			} else {
				cfg.Logger.Info("capture written", "file", f.capture)
			}
		}
	}
	if p, err = pooler.New(cfg); err != nil {
		closeCapture()
		return nil, cfg, nil, usageError{err}
	}
	if err := p.Listen(); err != nil {
		closeCapture()
		return nil, cfg, nil, err
	}
	return p, cfg, closeCapture, nil
}

// loadProxyFiles reads --pgbouncer-ini and --config into fs's flags (and
// so into f), leaving alone the flags given on the command line, and warns
// on e.stderr, one line each, about every setting it does not use.
func loadProxyFiles(e *env, fs *pflag.FlagSet, f *proxyFlags) error {
	if f.config == "" && f.pgbouncerINI == "" {
		return nil
	}
	warn := func(format string, a ...any) {
		fmt.Fprintf(e.stderr, "pgpoolcheck: warning: "+format+"\n", a...)
	}
	var ini, yml *proxyconfig.Settings
	merged := &proxyconfig.Settings{}
	if f.pgbouncerINI != "" {
		s, ignored, err := proxyconfig.LoadPgBouncerINI(f.pgbouncerINI)
		if err != nil {
			return usagef("--pgbouncer-ini: %w", err)
		}
		for _, ig := range ignored {
			warn("%s: %s", f.pgbouncerINI, ig)
		}
		ini = s
		merged.Merge(s)
	}
	if f.config != "" {
		s, err := proxyconfig.LoadYAML(f.config)
		if err != nil {
			return usagef("--config: %w", err)
		}
		for _, w := range s.Warnings {
			warn("%s: %s", f.config, w)
		}
		yml = s
		merged.Merge(s)
	}
	// source names the file a key's value comes from: the YAML wins.
	source := func(key string) string {
		if yml != nil {
			if _, ok := yml.Get(key); ok {
				return f.config
			}
		}
		if ini != nil {
			if _, ok := ini.Get(key); ok {
				return f.pgbouncerINI
			}
		}
		return "config"
	}
	noFlag, err := merged.Apply(fs)
	if err != nil {
		// Apply's error names the key; say which file gave it.
		key, _, _ := strings.Cut(err.Error(), ":")
		return usagef("%s: %w", source(key), err)
	}
	for _, key := range noFlag {
		warn("%s: %s: not supported yet, ignored", source(key), key)
	}
	return nil
}

// proxyConfig turns the flags, the config files and the environment into
// the pooler's configuration, without starting anything.
func proxyConfig(e *env, fs *pflag.FlagSet, f *proxyFlags) (pooler.Config, error) {
	// Apply marks the flags it sets as changed: look first.
	upstreamFlag := fs.Changed("upstream")
	cmdline := changedFlags(fs)
	if err := loadProxyFiles(e, fs, f); err != nil {
		return pooler.Config{}, err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return pooler.Config{}, usagef("--log-level: unknown level %q (want debug, info, warn or error)", f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch strings.ToLower(f.logFormat) {
	case "text":
		logger = slog.New(slog.NewTextHandler(e.stderr, opts))
	case "json":
		logger = slog.New(slog.NewJSONHandler(e.stderr, opts))
	default:
		return pooler.Config{}, usagef("--log-format: unknown format %q (want text or json)", f.logFormat)
	}
	// The upstream URL: the command line, then the environment, then the
	// files (which Apply wrote into f.upstream).
	upstream := f.upstream
	if env := e.getenv("PGPOOLCHECK_UPSTREAM"); env != "" && (!upstreamFlag || upstream == "") {
		upstream = env
	}
	if upstream == "" {
		return pooler.Config{}, usagef("proxy needs --upstream (or PGPOOLCHECK_UPSTREAM)")
	}
	upstream, err := withServerTLS(upstream, [][2]string{
		{"sslmode", f.serverTLSMode}, {"sslrootcert", f.serverTLSCA},
		{"sslcert", f.serverTLSCert}, {"sslkey", f.serverTLSKey},
	})
	if err != nil {
		return pooler.Config{}, usageError{err}
	}
	tlsMode, tlsCfg, err := clientTLS(f)
	if err != nil {
		return pooler.Config{}, usageError{err}
	}
	var databases map[string]pooler.Database
	for _, spec := range f.databases {
		name, db, err := pooler.ParseDatabase(spec)
		if err != nil {
			return pooler.Config{}, usagef("--databases: %w", err)
		}
		if databases == nil {
			databases = map[string]pooler.Database{}
		}
		if _, dup := databases[name]; dup {
			return pooler.Config{}, usagef("--databases: %s is listed twice", name)
		}
		databases[name] = db
	}
	var peers map[int]string
	for _, spec := range f.peers {
		id, addr, err := pooler.ParsePeer(spec)
		if err != nil {
			return pooler.Config{}, usagef("--peers: %w", err)
		}
		if peers == nil {
			peers = map[int]string{}
		}
		if _, dup := peers[id]; dup {
			return pooler.Config{}, usagef("--peers: peer %d is listed twice", id)
		}
		peers[id] = addr
	}
	cfg := pooler.Config{
		Listen:                 f.listen,
		SoReusePort:            f.soReusePort,
		UnixSocketDir:          f.unixSocketDir,
		PeerID:                 f.peerID,
		Peers:                  peers,
		Upstream:               upstream,
		Mode:                   pooler.Mode(f.mode),
		PoolSize:               f.poolSize,
		MaxClientConn:          f.maxClientConn,
		MaxDBConnections:       f.maxDBConns,
		MaxUserConnections:     f.maxUserConns,
		QueryTimeout:           f.queryTimeout,
		StatsUsers:             adminUsers(f.statsUsers),
		Databases:              databases,
		ClientLoginTimeout:     f.clientLoginTimeout,
		MaxLoginClients:        f.maxLoginClients,
		IdleTransactionTimeout: f.idleTxTimeout,
		ClientIdleTimeout:      f.clientIdleTimeout,
		ClientTLSMode:          tlsMode,
		ClientTLS:              tlsCfg,
		QueryWaitTimeout:       f.queryWait,
		ServerIdleTimeout:      f.idle,
		ServerLifetime:         f.lifetime,
		ServerConnectTimeout:   f.connectTimeout,
		ServerLoginRetry:       f.loginRetry,
		ShutdownTimeout:        f.shutdown,
		AuthType:               pooler.AuthType(f.authType),
		AuthUser:               f.authUser,
		AuthQuery:              f.authQuery,
		AuthDBName:             f.authDBName,
		InsecureTrust:          f.insecureTrust,
		MaxMessageSize:         f.maxMessageSize,
		MaxPreparedStatements:  maxPrepared(f.maxPrepared),
		Relay:                  pooler.Relay(f.relay),
		Loops:                  f.relayLoops,
		Logger:                 logger,
		AdminUsers:             adminUsers(f.adminUsers),
		TrustedRoutines:        adminUsers(f.trustedRoutines),
	}
	if f.metricsListen != "" {
		cfg.MetricsListen, cfg.MetricsHandler = f.metricsListen, metrics.Handler
	}
	if f.config != "" || f.pgbouncerINI != "" {
		cfg.Reload = reloader(e, cmdline)
	}
	if f.onSessionState != "off" {
		cfg.OnSessionState = pooler.Policy(f.onSessionState)
		cfg.Classifier = sessionstate.New()
	}
	if f.authFile != "" {
		users, err := pooler.LoadUserlist(f.authFile)
		if err != nil {
			return pooler.Config{}, fmt.Errorf("--auth-file: %w", err)
		}
		cfg.Users = users
	}
	return cfg, nil
}

// withServerTLS adds the --server-tls-* settings (libpq keyword, value;
// "" for unset) to the upstream URL or keyword/value DSN. A setting the
// upstream already gives with another value is an error: one of them
// would be silently dropped.
func withServerTLS(upstream string, params [][2]string) (string, error) {
	isURL := strings.HasPrefix(upstream, "postgres://") || strings.HasPrefix(upstream, "postgresql://")
	var u *url.URL
	var q url.Values
	if isURL {
		var err error
		if u, err = url.Parse(upstream); err != nil {
			return "", fmt.Errorf("upstream URL: %w", err)
		}
		q = u.Query()
	}
	changed := false
	for _, kv := range params {
		key, v := kv[0], kv[1]
		if v == "" {
			continue
		}
		var have string
		if isURL {
			have = q.Get(key)
		} else if m := regexp.MustCompile(`(?:^|\s)` + key + `\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`).FindStringSubmatch(upstream); m != nil {
			have = strings.Trim(m[1], "'")
		}
		switch {
		case have == v:
			continue
		case have != "":
			return "", fmt.Errorf("the upstream sets %s=%s but the server TLS settings ask for %s=%s: keep one", key, have, key, v)
		}
		changed = true
		if isURL {
			q.Set(key, v)
		} else {
			upstream += " " + key + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
		}
	}
	if isURL && changed {
		u.RawQuery = q.Encode()
		upstream = u.String()
	}
	return upstream, nil
}

// adminUsers trims the names and drops empty ones.
func adminUsers(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// reloader is the admin console's RELOAD (and SIGHUP): it reads the config
// files again, with the flags given on the command line still winning,
// and fills in the settings the proxy can change while running.
func reloader(e *env, cmdline map[string]string) func(*pooler.Config) error {
	return func(c *pooler.Config) error {
		var f proxyFlags
		fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
		f.register(fs)
		for name, v := range cmdline {
			if err := fs.Set(name, v); err != nil {
				return err
			}
		}
		next, err := proxyConfig(e, fs, &f)
		if err != nil {
			return err
		}
		// Everything the files can set: the proxy applies what can change
		// while it runs and logs the rest as needing a restart.
		c.Listen, c.Upstream, c.Mode, c.AuthType = next.Listen, next.Upstream, next.Mode, next.AuthType
		c.UnixSocketDir = next.UnixSocketDir
		c.PoolSize, c.MaxClientConn, c.Databases = next.PoolSize, next.MaxClientConn, next.Databases
		c.QueryWaitTimeout, c.ServerIdleTimeout, c.ServerLifetime = next.QueryWaitTimeout, next.ServerIdleTimeout, next.ServerLifetime
		c.ServerConnectTimeout, c.ServerLoginRetry, c.ClientLoginTimeout = next.ServerConnectTimeout, next.ServerLoginRetry, next.ClientLoginTimeout
		c.MaxLoginClients = next.MaxLoginClients
		c.IdleTransactionTimeout, c.ClientIdleTimeout = next.IdleTransactionTimeout, next.ClientIdleTimeout
		c.AdminUsers, c.Users = next.AdminUsers, next.Users
		c.AuthUser, c.AuthQuery, c.AuthDBName = next.AuthUser, next.AuthQuery, next.AuthDBName
		c.StatsUsers, c.QueryTimeout = next.StatsUsers, next.QueryTimeout
		c.MaxDBConnections, c.MaxUserConnections = next.MaxDBConnections, next.MaxUserConnections
		c.ClientTLSMode, c.ClientTLS = next.ClientTLSMode, next.ClientTLS
		return nil
	}
}

// changedFlags returns the flags given on fs's command line, as text Set
// takes again.
func changedFlags(fs *pflag.FlagSet) map[string]string {
	m := map[string]string{}
	fs.Visit(func(fl *pflag.Flag) {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			m[fl.Name] = strings.Join(sv.GetSlice(), ",")
		} else {
			m[fl.Name] = fl.Value.String()
		}
	})
	return m
}

// maxPrepared maps the command line's 0 (off) to the Config's negative
// value.
func maxPrepared(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
