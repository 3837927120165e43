// Package cli is pgpoolcheck's command line. Run is the whole program
// except for the process exit, so end-to-end tests call it with buffers.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK       = 0 // nothing at or above --fail-on
	ExitFindings = 1 // findings at or above --fail-on
	ExitError    = 2 // usage error, unreadable input, internal error
)

// errFindings says the command worked and found problems.
var errFindings = errors.New("findings at or above the --fail-on severity")

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
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errFindings):
		return ExitFindings
	default:
		msg := err.Error()
		fmt.Fprintf(e.stderr, "pgpoolcheck: %s\n", msg)
		if isUsage(err) {
			fmt.Fprintf(e.stderr, "Run 'pgpoolcheck --help' for usage.\n")
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newScan(e), newAnalyze(e), newGate(e), newRules(e), newExplain(e), newVersion(e), newProxy(e))
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}
