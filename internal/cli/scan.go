package cli

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/output"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/spf13/cobra"
)

type scanFlags struct {
	format        string
	target        string
	failOn        string
	color         string
	stdinFilename string
	workers       int
	disable       []string
}

func newScan(e *env) *cobra.Command {
	var f scanFlags
	cmd := &cobra.Command{
		Use:   "scan [PATH...|-]",
		Short: "Scan SQL files for statements that break behind a transaction-mode pooler",
		Long: `Scan SQL files (.sql, .psql, .pgsql; directories are walked, skipping hidden
directories, vendor and node_modules) and report every statement that depends on
server session state. "-" reads standard input.

Exit status: 0 when no finding is at or above --fail-on, 1 when one is, 2 for a
usage error, an unreadable path or an internal error.`,
		Example: `  pgpoolcheck scan db/migrations
  pgpoolcheck scan --target generic --fail-on warning schema.sql
  pg_dump --schema-only mydb | pgpoolcheck scan --stdin-filename schema.sql -
  pgpoolcheck scan --format github .`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runScan(e, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.format, "format", "f", "text", "output format: "+strings.Join(output.Formats(), ", "))
	fl.StringVar(&f.target, "target", string(rules.DefaultTarget), "pooler to judge against: "+targetNames())
	fl.StringVar(&f.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: critical, error, warning, info, never")
	fl.StringVar(&f.color, "color", "auto", "colour text output: auto, always, never (NO_COLOR is respected)")
	fl.StringVar(&f.stdinFilename, "stdin-filename", "", "file name to report for standard input")
	fl.IntVar(&f.workers, "workers", 0, "parser workers (0: one per CPU)")
	fl.StringSliceVar(&f.disable, "disable", nil, "rule ids to turn off (comma-separated or repeated)")
	return cmd
}

func targetNames() string {
	names := make([]string, len(rules.Targets))
	for i, t := range rules.Targets {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// parseFailOn returns the lowest severity that fails the run; 0 for never.
func parseFailOn(s string) (rules.Severity, error) {
	if strings.EqualFold(s, "never") || strings.EqualFold(s, "none") {
		return 0, nil
	}
	sev, err := rules.ParseSeverity(s)
	if err != nil {
		return 0, fmt.Errorf("--fail-on: unknown severity %q (want critical, error, warning, info or never)", s)
	}
	return sev, nil
}

func runScan(e *env, f scanFlags, args []string) error {
	if len(args) == 0 {
		return usagef("scan needs at least one PATH (or - for standard input)")
	}
	target, err := rules.ParseTarget(f.target)
	if err != nil {
		return usagef("--target: %v", err)
	}
	failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return usageError{err}
	}
	if !validFormat(f.format) {
		return usagef("--format: unknown format %q (want %s)", f.format, strings.Join(output.Formats(), ", "))
	}
	color, err := output.UseColor(f.color, e.stdout, e.getenv)
	if err != nil {
		return usagef("--color: %v", err)
	}
	enabled, err := enabledRules(f.disable)
	if err != nil {
		return err
	}

	var inputs []analyzer.Input
	var paths []string
	stdinUsed := false
	for _, a := range args {
		if a == "-" {
			if stdinUsed {
				return usagef("standard input (-) given twice")
			}
			stdinUsed = true
			in, err := analyzer.ReadStdin(e.stdin, f.stdinFilename)
			if err != nil {
				return err
			}
			inputs = append(inputs, in)
			continue
		}
		paths = append(paths, a)
	}
	files, err := analyzer.Collect(paths)
	if err != nil {
		return err
	}
	inputs = append(inputs, files...)

	cfg := &analyzer.Config{Target: target, Rules: enabled, Workers: f.workers}
	rep, err := cfg.Scan(inputs)
	if err != nil {
		return err
	}
	rep.Version = version.String()
	for _, sk := range rep.Summary.Skipped {
		fmt.Fprintf(e.stderr, "pgpoolcheck: %s: skipped: %s\n", sk.File, sk.Reason)
	}
	if err := output.Write(e.stdout, f.format, rep, output.Options{Color: color}); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if failOn > 0 {
		for _, fd := range rep.Findings {
			if fd.Severity >= failOn {
				return errFindings
			}
		}
	}
	return nil
}

func validFormat(name string) bool {
	for _, f := range output.Formats() {
		if f == name {
			return true
		}
	}
	return false
}

// enabledRules returns every rule except the disabled ones.
func enabledRules(disable []string) ([]*rules.Rule, error) {
	off := map[string]bool{}
	for _, id := range disable {
		id = strings.TrimSpace(id)
		if rules.Lookup(id) == nil {
			return nil, usagef("--disable: unknown rule %q (see pgpoolcheck rules)", id)
		}
		off[id] = true
	}
	var out []*rules.Rule
	for _, r := range rules.All() {
		if !off[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}
