package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgserver"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// findPostgres finds the PostgreSQL server binaries for the demo's
// throwaway server (a variable so that tests can take them away).
var findPostgres = pgserver.FindBinDir

type demoFlags struct {
	upstream string
	keep     bool
}

func newDemo(e *env) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo [--upstream URL] [--keep]",
		Short: "See the whole product in a minute: record, analyze, gate and pool a built-in workload",
		Long: `Run a small built-in workload with the session state that transaction pooling
breaks — a session SET, an advisory lock, LISTEN, a temporary table, a named
protocol-level prepared statement and the unnamed statement bound in a later
round trip — from two clients, A and B, and show what pgpoolcheck makes of it:

  1. PostgreSQL: a throwaway server (initdb into a temporary directory, as the
     postgres OS user when run as root), or the server --upstream names.
  2. Record: the workload through 'pgpoolcheck proxy --mode record', which
     writes a capture file.
  3. Analyze: 'pgpoolcheck analyze' of that capture.
  4. Gate: 'pgpoolcheck gate --target pgbouncer' of that capture, and the same
     gate judged against pgpoolcheck's own pooler.
  5. Pool: the workload again through 'pgpoolcheck proxy' in transaction mode
     with one server connection for both clients, first passing session state
     through as PgBouncer does without max_prepared_statements
     (--on-session-state allow --max-prepared-statements 0), then with the
     default --on-session-state preserve; for every hazard, what each client
     saw.

Every result printed comes from running the workload. The pooler runs inside
this process on a free 127.0.0.1 port and logs to pooler.log in the demo's
temporary directory. On an --upstream server the demo creates nothing but the
session state of its own connections (a temporary table, an advisory lock,
a LISTEN, prepared statements), all gone when they close.

At the end, or on SIGINT or SIGTERM, the pooler and the throwaway PostgreSQL
are stopped and the temporary directories removed; --keep keeps the directory
with the capture file and the pooler's log.

Exit status: 0 when the demo ran, 2 when it could not (no PostgreSQL, a server
that refused it, an interruption).`,
		Example: `  pgpoolcheck demo
  pgpoolcheck demo --keep
  pgpoolcheck demo --upstream postgres://postgres@127.0.0.1:5432/postgres`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.upstream, "upstream", "", "use the PostgreSQL at this connection URL instead of starting a throwaway one")
	fl.BoolVar(&f.keep, "keep", false, "keep the temporary directory with the capture file and the pooler's log")
	return cmd
}

// demo is one run of pgpoolcheck demo.
type demo struct {
	e        *env
	out      io.Writer
	dir      string // the temporary directory: capture and pooler log
	upstream string
	direct   *pgx.Conn // to the server, bypassing the pooler
	log      *os.File
	cleanups []func()
}

// later registers f to run at the end, in reverse order of registration.
func (d *demo) later(f func()) { d.cleanups = append(d.cleanups, f) }

func (d *demo) cleanup() {
	for i := len(d.cleanups) - 1; i >= 0; i-- {
		d.cleanups[i]()
	}
	d.cleanups = nil
}

func (d *demo) heading(title string) {
	fmt.Fprintf(d.out, "\n== %s ==\n\n", title)
}

func runDemo(ctx context.Context, e *env, f demoFlags) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	var bin string
	if f.upstream == "" {
		var err error
		if bin, err = findPostgres(); err != nil {
			return usagef("demo needs a PostgreSQL server: initdb and postgres were not found on PATH, " +
				"via pg_config --bindir or under /usr/lib/postgresql/*/bin to start a throwaway one. " +
				"Install PostgreSQL's server binaries (Debian, Ubuntu: apt-get install postgresql; " +
				"Fedora: dnf install postgresql-server; macOS: brew install postgresql) " +
				"or pass --upstream postgres://USER@HOST:PORT/DATABASE of a server the demo may use")
		}
	}
	dir, err := os.MkdirTemp("", "pgpoolcheck-demo-")
	if err != nil {
		return err
	}
	d := &demo{e: e, out: e.stdout, dir: dir, upstream: f.upstream}
	d.later(func() {
		if f.keep {
			fmt.Fprintf(d.out, "kept %s: capture.jsonl (pgpoolcheck analyze %s) and pooler.log\n",
				dir, filepath.Join(dir, "capture.jsonl"))
			return
		}
		os.RemoveAll(dir)
		fmt.Fprintf(d.out, "removed %s\n", dir)
	})
	err = d.run(ctx, bin)
	if err != nil && ctx.Err() != nil {
		err = errors.New("demo interrupted")
	} else if err != nil && !f.keep {
		d.logTail()
	}
	d.heading("Clean-up")
	d.cleanup()
	if err == nil {
		fmt.Fprintf(d.out, "\nThe demo took %.1fs.\n", time.Since(began).Seconds())
	}
	return err
}

// logTail copies the end of the pooler's log to standard error, since the
// log goes away with the demo's directory.
func (d *demo) logTail() {
	if d.log == nil {
		return
	}
	b, err := os.ReadFile(d.log.Name())
	if err != nil || len(b) == 0 {
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	fmt.Fprintf(d.e.stderr, "pgpoolcheck: the end of the pooler's log:\n%s\n", strings.Join(lines, "\n"))
}

func (d *demo) run(ctx context.Context, bin string) error {
	fmt.Fprintln(d.out, "pgpoolcheck demo: what transaction pooling breaks, and what pgpoolcheck does about it")
	log, err := os.Create(filepath.Join(d.dir, "pooler.log"))
	if err != nil {
		return err
	}
	d.log = log
	d.later(func() { log.Close() })

	d.heading("1. PostgreSQL")
	if d.upstream == "" {
		fmt.Fprintf(d.out, "starting a throwaway PostgreSQL with %s …\n", filepath.Join(bin, "initdb"))
		srv, err := pgserver.New(ctx, pgserver.Options{BinDir: bin, DirPrefix: "pgpoolcheck-demo-pg-"})
		if err != nil {
			return fmt.Errorf("starting PostgreSQL: %w", err)
		}
		pid := srv.PID()
		d.later(func() {
			srv.Stop()
			fmt.Fprintf(d.out, "stopped PostgreSQL (pid %d) and removed %s\n", pid, srv.Dir)
		})
		d.upstream = srv.SocketURL(pgserver.SuperUser)
		fmt.Fprintf(d.out, "PostgreSQL pid %d, port %d, directory %s (stopped and removed at the end)\n", pid, srv.Port, srv.Dir)
	}
	up, err := pgconn.ParseConfig(d.upstream)
	if err != nil {
		return usagef("--upstream: %v", err)
	}
	direct, err := pgx.Connect(ctx, d.upstream)
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	d.later(func() { direct.Close(context.Background()) })
	d.direct = direct
	var version string
	if err := direct.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "connected to PostgreSQL %s at %s, database %s, user %s\n", version, hostPort(up), up.Database, up.User)

	// 2. Record.
	d.heading("2. Record: the workload through pgpoolcheck proxy --mode record")
	capPath := filepath.Join(d.dir, "capture.jsonl")
	fmt.Fprintln(d.out, "Two clients, A and B, run six things that depend on the server session:")
	for _, h := range hazards {
		fmt.Fprintf(d.out, "  %-19s %s\n", h.name, wrap(h.what, 22, 100))
	}
	fmt.Fprintln(d.out)
	recorded, _, err := d.pooled(ctx, up, []string{"--mode", "record", "--capture", capPath})
	if err != nil {
		return err
	}
	fmt.Fprintln(d.out, wrap("Record mode gives each client a server connection of its own, as without a pooler, so this is what the application expects:", 0, 100))
	printResults(d.out, recorded)
	fmt.Fprintf(d.out, "\ncapture: %s\n", capPath)

	// 3. Analyze and 4. gate: the commands themselves.
	d.heading("3. Analyze: pgpoolcheck analyze capture.jsonl")
	if _, err := d.command(ctx, "analyze", "--no-config", capPath); err != nil {
		return err
	}
	d.heading("4. Gate: pgpoolcheck gate --target pgbouncer --capture capture.jsonl")
	if _, err := d.command(ctx, "gate", "--no-config", "--target", "pgbouncer", "--capture", capPath); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "\nThe same capture judged against pgpoolcheck's own pooler (gate --target pgpoolcheck):")
	fmt.Fprintln(d.out)
	if _, err := d.command(ctx, "gate", "--no-config", "--target", "pgpoolcheck", "--capture", capPath); err != nil {
		return err
	}

	// 5. Pool.
	d.heading("5. Pool: the same workload in transaction mode, two clients on one server connection")
	runs := []struct {
		title string
		args  []string
	}{
		{"Passing session state through, as PgBouncer does without max_prepared_statements", []string{"--mode", "transaction", "--pool-size", "1", "--on-session-state", "allow", "--max-prepared-statements", "0"}},
		{"pgpoolcheck's default", []string{"--mode", "transaction", "--pool-size", "1", "--on-session-state", "preserve"}},
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(d.out)
		}
		fmt.Fprintf(d.out, "%s\n(pgpoolcheck proxy %s):\n", r.title, strings.Join(r.args, " "))
		res, hazards, err := d.pooled(ctx, up, r.args)
		if err != nil {
			return err
		}
		printResults(d.out, res)
		broken := 0
		for _, h := range res {
			if !h.ok {
				broken++
			}
		}
		fmt.Fprintf(d.out, "  %d of %d as without a pooler, %d broken\n", len(res)-broken, len(res), broken)
		if len(hazards) > 0 {
			fmt.Fprintf(d.out, "  %s\n", wrap("the pooler's count (SHOW HAZARDS): "+strings.Join(hazards, ", "), 2, 100))
		}
	}

	fmt.Fprintln(d.out, "\nThe pooler logs each hazard once per client and rule: pooler.log in the demo's directory (--keep keeps it).")

	d.heading("Next")
	fmt.Fprintln(d.out, "  pgpoolcheck scan .                                  find these statements in your own SQL and code")
	fmt.Fprintln(d.out, "  pgpoolcheck proxy --mode record --capture FILE …    record your application's traffic in staging")
	fmt.Fprintln(d.out, "  pgpoolcheck gate --scan . --capture FILE            one verdict for CI")
	fmt.Fprintln(d.out, "  pgpoolcheck proxy --upstream URL                    pool it, with session state kept per client")
	return nil
}

// command runs a pgpoolcheck command in this process (the same code as on
// the command line), writing to the demo's output, and returns its exit
// code; exit 2 is an error.
func (d *demo) command(ctx context.Context, args ...string) (int, error) {
	code := run(ctx, args, &env{stdin: strings.NewReader(""), stdout: d.out, stderr: d.e.stderr, getenv: d.e.getenv})
	if ctx.Err() != nil {
		return code, ctx.Err()
	}
	if code == ExitError {
		return code, fmt.Errorf("pgpoolcheck %s failed", args[0])
	}
	fmt.Fprintf(d.out, "(exit status %d)\n", code)
	return code, nil
}

// pooled starts the proxy command's pooler with args (plus a free port on
// 127.0.0.1, the upstream and short timeouts), runs the workload through
// it with two clients and stops it again. It returns the workload's
// results and the session-state hazards the pooler counted, as "rule
// action count".
func (d *demo) pooled(ctx context.Context, up *pgconn.Config, args []string) ([]hazardResult, []string, error) {
	var f proxyFlags
	fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
	f.register(fs)
	all := append([]string{"--listen", "127.0.0.1:0", "--upstream", d.upstream,
		"--shutdown-timeout", "2s", "--query-wait-timeout", "10s"}, args...)
	if err := fs.Parse(all); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(d.log, "--- pgpoolcheck proxy %s\n", strings.Join(args, " "))
	logEnv := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: d.log, getenv: d.e.getenv}
	p, _, closeCapture, err := startProxy(logEnv, &f)
	if err != nil {
		return nil, nil, fmt.Errorf("starting the pooler: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(context.Background()) }()
	stopped := false
	stopPooler := func() error {
		if stopped {
			return nil
		}
		stopped = true
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Shutdown(sctx)
		err := <-served
		closeCapture()
		return err
	}
	d.later(func() { stopPooler() })
	addr := p.Addr().String()
	appName := func(client string) string { return "pgpoolcheck-demo-" + client }
	watch := func() (v poolerView) {
		for _, c := range p.Snapshot().Clients {
			switch c.ApplicationName {
			case appName("a"):
				v.aPinned = v.aPinned || c.Pinned
			case appName("b"):
				v.bWaiting = v.bWaiting || c.State == "waiting"
			}
		}
		return v
	}
	res, err := runWorkload(ctx, func(name string) (*pgx.ConnConfig, error) {
		u := url.URL{Scheme: "postgres", User: url.User(up.User), Host: addr, Path: "/" + up.Database,
			RawQuery: url.Values{"sslmode": {"disable"}, "application_name": {appName(name)}}.Encode()}
		cfg, err := pgx.ParseConfig(u.String())
		if err != nil {
			return nil, err
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		return cfg, nil
	}, d.direct, watch)
	counts := map[string]int64{}
	var keys []string
	for _, h := range p.Hazards() {
		k := h.Rule + " " + h.Action
		if _, seen := counts[k]; !seen {
			keys = append(keys, k)
		}
		counts[k] += h.Count
	}
	hazards := make([]string, len(keys))
	for i, k := range keys {
		hazards[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	if serr := stopPooler(); err == nil && serr != nil {
		err = fmt.Errorf("pooler: %w", serr)
	}
	return res, hazards, err
}

func hostPort(c *pgconn.Config) string {
	if strings.HasPrefix(c.Host, "/") {
		return fmt.Sprintf("%s (socket, port %d)", c.Host, c.Port)
	}
	return fmt.Sprintf("%s:%d", c.Host, c.Port)
}

// printResults prints one line per hazard: ok or BROKEN, and what the
// clients saw.
func printResults(w io.Writer, res []hazardResult) {
	for _, h := range res {
		status := "ok"
		if !h.ok {
			status = "BROKEN"
		}
		fmt.Fprintf(w, "  %-19s %s\n", h.name, wrap(status+": "+h.text, 22, 100))
	}
}

// wrap breaks text into lines of at most width columns, the lines after
// the first indented by indent spaces (the first line starts at column
// indent already).
func wrap(text string, indent, width int) string {
	var b strings.Builder
	col := indent
	for i, word := range strings.Fields(text) {
		n := len([]rune(word))
		if i > 0 {
			if col+1+n > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}
