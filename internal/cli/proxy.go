package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxyconfig"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// proxyFlags are the proxy's command line: a flag per entry of the
// settings table (pooler.Settings), whose text given lands in given, and
// the two config files.
type proxyFlags struct {
	config, pgbouncerINI string
	// given are the settings given on the command line, by name, as
	// their text.
	given map[string]string
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
			return runProxy(cmd.Context(), e, &f)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// register defines the proxy's flags on fl, bound to f: one per setting
// of the table, and --config and --pgbouncer-ini.
func (f *proxyFlags) register(fl *pflag.FlagSet) {
	f.given = proxyconfig.Flags(fl)
	fl.StringVar(&f.config, "config", "", "YAML config file of proxy settings (flags given on the command line win)")
	fl.StringVar(&f.pgbouncerINI, "pgbouncer-ini", "", "read settings from a PgBouncer pgbouncer.ini (--config and flags win)")
}

func runProxy(ctx context.Context, e *env, f *proxyFlags) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(proxyGCPercent)
	}
	p, cfg, closeCapture, err := startProxy(e, f)
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

// proxyGCPercent is the pooler's heap target over what is live, in
// percent, unless GOGC says otherwise: the pooler allocates almost nothing
// per transaction (its collections come from logins), so a target below
// Go's 100% costs no measurable CPU and keeps the memory of many idle
// clients close to what they use (BENCHMARKS.md, memory per idle client).
const proxyGCPercent = 25

// startProxy makes the pooler the flags describe and has it listen,
// opening the --capture file first when one is given. closeCapture
// flushes and closes that file: call it after Serve returns.
func startProxy(e *env, f *proxyFlags) (p *pooler.Proxy, cfg pooler.Config, closeCapture func(), err error) {
	cfg, err = proxyConfig(e, f)
	if err != nil {
		return nil, cfg, nil, err
	}
	file := cfg.CaptureFile
	if cfg.Mode == pooler.ModeRecord && file == "" {
		return nil, cfg, nil, usagef("--mode record needs --capture FILE")
	}
	closeCapture = func() {}
	if file != "" {
		w, err := capture.Create(file, capture.Header{Upstream: cfg.Upstream, Mode: string(cfg.Mode)},
			capture.Options{Redact: cfg.Redact, MaxBytes: int64(cfg.CaptureMaxBytes), Logger: cfg.Logger})
		if err != nil {
			return nil, cfg, nil, err
		}
		cfg.Capture = w
		cfg.Logger.Info("capture started", "file", w.Path())
		closeCapture = func() {
			err := w.Close()
			attrs := writtenAttrs(w.Files())
			if err != nil {
				cfg.Logger.Warn("capture closed with an error", append(attrs, "err", err)...)
			} else {
				cfg.Logger.Info("capture written", attrs...)
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

// writtenAttrs are the log attributes naming the capture files a
// recorder wrote: file, the part it started in (the --capture file, or the
// next free part when that file held an earlier capture), and with
// rotation the number of parts and the last one.
func writtenAttrs(files []string) []any {
	if len(files) == 0 {
		return nil
	}
	attrs := []any{"file", files[0]}
	if n := len(files); n > 1 {
		attrs = append(attrs, "parts", n, "last", files[n-1])
	}
	return attrs
}

// proxyConfig turns the flags, the config files and the environment into
// the pooler's configuration (proxyconfig.Load), without starting
// anything. With a config file, the configuration's Reload loads it again
// from the same files and command line.
func proxyConfig(e *env, f *proxyFlags) (pooler.Config, error) {
	cfg, err := proxyconfig.Load(proxyconfig.Sources{
		INI: f.pgbouncerINI, YAML: f.config, CommandLine: f.given,
		Getenv: e.getenv, Stderr: e.stderr,
	})
	var read proxyconfig.ReadError
	switch {
	case errors.As(err, &read):
		return pooler.Config{}, err
	case err != nil:
		return pooler.Config{}, usageError{err}
	}
	return cfg, nil
}
