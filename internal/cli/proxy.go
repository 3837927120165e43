package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/spf13/cobra"
)

type proxyFlags struct {
	listen, upstream, mode    string
	poolSize, maxClientConn   int
	queryWait, idle, lifetime time.Duration
	connectTimeout, shutdown  time.Duration
	authType, authFile        string
	insecureTrust             bool
	maxMessageSize            int
	maxPrepared               int
	logLevel, logFormat       string
}

func newProxy(e *env) *cobra.Command {
	var f proxyFlags
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL [flags]",
		Short: "Run a PostgreSQL connection pooler (transaction, session or record mode)",
		Long: `Run a connection pooler in front of PostgreSQL. Clients connect to --listen and
log in to the pooler (--auth-type); the pooler keeps a pool of server connections
per database and user, logged in to --upstream.

Server credentials: the upstream URL gives host, port, TLS settings (sslmode …)
and the default user, password and database. A client logging in as the URL's
user uses the URL's password towards the server; any other user needs its
plain-text password in --auth-file (an md5 or SCRAM secret there can check the
client but cannot log in to the server), or a server that trusts it. The
upstream URL may also come from the PGPOOLCHECK_UPSTREAM environment variable,
which keeps its password out of the process list.

--auth-file is PgBouncer's userlist format: one "user" "secret" per line, the
secret a plain-text password, md5<md5(password+user)>, or a SCRAM-SHA-256
verifier. trust needs no file and is refused on a non-loopback --listen
address unless --insecure-trust is given.

The proxy runs until SIGINT or SIGTERM: it then stops accepting, lets running
transactions finish for up to --shutdown-timeout, closes everything and exits 0.`,
		Example: `  pgpoolcheck proxy --upstream postgres://app:secret@db:5432/app --pool-size 20
  pgpoolcheck proxy --listen 0.0.0.0:6432 --auth-type scram-sha-256 --auth-file userlist.txt \
      --upstream 'postgres://app@db/app?sslmode=require'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runProxy(cmd.Context(), e, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:6432", "address to accept clients on")
	fl.StringVar(&f.upstream, "upstream", "", "PostgreSQL connection URL (or PGPOOLCHECK_UPSTREAM)")
	fl.StringVar(&f.mode, "mode", "transaction", "pool mode: transaction, session or record")
	fl.IntVar(&f.poolSize, "pool-size", 20, "server connections per database and user")
	fl.IntVar(&f.maxClientConn, "max-client-conn", 1000, "most clients at once")
	fl.DurationVar(&f.queryWait, "query-wait-timeout", 120*time.Second, "how long a client may wait for a server")
	fl.DurationVar(&f.idle, "server-idle-timeout", 600*time.Second, "close servers idle this long")
	fl.DurationVar(&f.lifetime, "server-lifetime", 3600*time.Second, "retire servers this old (never mid-transaction)")
	fl.DurationVar(&f.connectTimeout, "server-connect-timeout", 15*time.Second, "timeout of one server login")
	fl.DurationVar(&f.shutdown, "shutdown-timeout", 30*time.Second, "how long shutdown lets transactions finish")
	fl.StringVar(&f.authType, "auth-type", "trust", "client authentication: trust, md5 or scram-sha-256")
	fl.StringVar(&f.authFile, "auth-file", "", "PgBouncer-format userlist file")
	fl.BoolVar(&f.insecureTrust, "insecure-trust", false, "allow trust authentication on a non-loopback address")
	fl.IntVar(&f.maxMessageSize, "max-message-size", pooler.DefaultMaxMessageSize, "largest client message in bytes")
	fl.IntVar(&f.maxPrepared, "max-prepared-statements", 200, "protocol prepared statements kept per server connection in transaction mode (0 turns their support off)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	return cmd
}

func runProxy(ctx context.Context, e *env, f proxyFlags) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usagef("--log-level: unknown level %q (want debug, info, warn or error)", f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch strings.ToLower(f.logFormat) {
	case "text":
		logger = slog.New(slog.NewTextHandler(e.stderr, opts))
	case "json":
		logger = slog.New(slog.NewJSONHandler(e.stderr, opts))
	default:
		return usagef("--log-format: unknown format %q (want text or json)", f.logFormat)
	}
	upstream := f.upstream
	if upstream == "" {
		upstream = e.getenv("PGPOOLCHECK_UPSTREAM")
	}
	if upstream == "" {
		return usagef("proxy needs --upstream (or PGPOOLCHECK_UPSTREAM)")
	}
	cfg := pooler.Config{
		Listen:                f.listen,
		Upstream:              upstream,
		Mode:                  pooler.Mode(f.mode),
		PoolSize:              f.poolSize,
		MaxClientConn:         f.maxClientConn,
		QueryWaitTimeout:      f.queryWait,
		ServerIdleTimeout:     f.idle,
		ServerLifetime:        f.lifetime,
		ServerConnectTimeout:  f.connectTimeout,
		ShutdownTimeout:       f.shutdown,
		AuthType:              pooler.AuthType(f.authType),
		InsecureTrust:         f.insecureTrust,
		MaxMessageSize:        f.maxMessageSize,
		MaxPreparedStatements: maxPrepared(f.maxPrepared),
		Logger:                logger,
	}
	if f.authFile != "" {
		users, err := pooler.LoadUserlist(f.authFile)
		if err != nil {
			return fmt.Errorf("--auth-file: %w", err)
		}
		cfg.Users = users
	}
	p, err := pooler.New(cfg)
	if err != nil {
		return usageError{err}
	}
	if err := p.Listen(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return p.Serve(ctx)
}

// maxPrepared maps the command line's 0 (off) to the Config's negative
// value.
func maxPrepared(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
