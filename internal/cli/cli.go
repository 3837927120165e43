// Package cli is pgpoolcheck's command line. Run is the whole program
// except for the process exit, so end-to-end tests call it with buffers.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes.
const (
	ExitOK       = 0 // nothing at or above --fail-on
	ExitFindings = 1 // findings at or above --fail-on
	ExitError    = 2 // usage error, unreadable input, internal error
)

// errFindings says the command worked and found problems.
var errFindings = errors.New("findings at or above the --fail-on severity")

// unreadableError says the command wrote its output, but some inputs could
// not be read, so the output covers less than was asked for.
type unreadableError struct{ skipped []analyzer.Skipped }

func (e unreadableError) Error() string {
	n := len(e.skipped)
	if n == 1 {
		return fmt.Sprintf("%s could not be read (%s): the output covers the other inputs only", e.skipped[0].File, e.skipped[0].Reason)
	}
	return fmt.Sprintf("%d paths could not be read (first %s: %s): the output covers the other inputs only", n, e.skipped[0].File, e.skipped[0].Reason)
}

// unreadable returns the error for the unreadable inputs of a summary, or
// nil when every input was read.
func unreadable(sum analyzer.Summary) error {
	if bad := sum.Unreadable(); len(bad) > 0 {
		return unreadableError{bad}
	}
	return nil
}

// usageError is a mistake in the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// env is what commands need from the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// walkDir walks the directories to scan; nil is filepath.WalkDir.
	// Tests put a file system's errors in through it.
	walkDir func(root string, fn fs.WalkDirFunc) error
}

// Run runs pgpoolcheck with args (without the program name) and returns
// the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: osGetenv})
}

func run(ctx context.Context, args []string, e *env) int {
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errFindings):
		return ExitFindings
	default:
		msg := err.Error()
		fmt.Fprintf(e.stderr, "pgpoolcheck: %s\n", msg)
		if isUsage(err) {
			path := "pgpoolcheck"
			if cmd != nil {
				path = cmd.CommandPath()
			}
			fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", path)
		}
		return ExitError
	}
}

// isUsage recognises our usage errors and cobra's (unknown flags and
// commands, wrong argument counts).
func isUsage(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "pgpoolcheck",
		Short: "Find what breaks when PostgreSQL clients move behind a transaction-mode pooler",
		Long: `pgpoolcheck finds the SQL that depends on server session state — session SET,
SET ROLE, advisory locks, LISTEN, temporary tables, WITH HOLD cursors, SQL
prepared statements — which breaks, or leaks to other clients, behind a
transaction-mode connection pooler such as PgBouncer.`,
		Example: `  pgpoolcheck scan migrations/
  pgpoolcheck scan --format sarif --target pgbouncer . > pgpoolcheck.sarif
  pgpoolcheck analyze capture.jsonl
  pgpoolcheck gate --scan db/ --capture 'staging/*.jsonl'
  pgpoolcheck rules
  pgpoolcheck explain advisory-lock-session`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetVersionTemplate("pgpoolcheck {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// unknown flag: --name → a hint from the command's own flags.
		if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
			var names []string
			c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			if c, ok := suggest.Closest(name, names); ok {
				return usagef("%v (did you mean --%s?)", err, c)
			}
		}
		return usageError{err}
	})
	root.AddCommand(newScan(e), newAnalyze(e), newGate(e), newRules(e), newExplain(e), newVersion(e), newProxy(e))
	root.AddCommand(newDemo(e))
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}
