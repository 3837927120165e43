package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/config"
	"github.com/pgpoolcheck/pgpoolcheck/internal/output"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/spf13/cobra"
)

// judgeFlags are the flags analyze and gate share with scan: how findings
// are judged and shown.
type judgeFlags struct {
	format   string
	target   string
	failOn   string
	color    string
	disable  []string
	config   string
	noConfig bool
	idle     time.Duration
	strict   bool
	workers  int
	// allowEmpty accepts capture arguments that hold no capture.
	allowEmpty bool
}

func addJudgeFlags(cmd *cobra.Command, f *judgeFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&f.format, "format", "f", "text", "output format: "+strings.Join(output.Formats(), ", "))
	fl.StringVar(&f.target, "target", string(rules.DefaultTarget), "pooler to judge against: "+targetNames())
	fl.StringVar(&f.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: critical, error, warning, info, never")
	fl.StringVar(&f.color, "color", "auto", "colour text output: auto, always, never (NO_COLOR is respected)")
	fl.StringSliceVar(&f.disable, "disable", nil, "rule ids to turn off (comma-separated or repeated)")
	fl.StringVar(&f.config, "config", "", "config file (default: "+config.FileName+" in the working directory or a parent)")
	fl.BoolVar(&f.noConfig, "no-config", false, "ignore config files")
	fl.DurationVar(&f.idle, "idle-threshold", traffic.DefaultIdleThreshold, "report transactions left idle longer than this (idle-in-transaction)")
	fl.BoolVar(&f.strict, "strict", false, "fail on a corrupt line in a capture instead of skipping it with a warning")
	fl.IntVar(&f.workers, "workers", 0, "captures read in parallel, and parser workers (0: one per CPU)")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "accept a capture directory or pattern that holds no capture (by default that is a usage error, so that a CI gate that checks nothing does not pass)")
}

// judgement is the settled form of judgeFlags.
type judgement struct {
	format     string
	target     rules.Target
	failOn     rules.Severity
	color      bool
	cfg        *config.Config
	analyze    *analyzer.Config
	idle       time.Duration
	strict     bool
	allowEmpty bool
}

// settle reads the config file and checks the flags; flags given on the
// command line win over the config file.
func (f judgeFlags) settle(e *env, cmd *cobra.Command) (*judgement, error) {
	cfg, err := loadConfig(e, scanFlags{config: f.config, noConfig: f.noConfig})
	if err != nil {
		return nil, err
	}
	configDefaults(cfg, cmd, &f.target, &f.failOn, &f.disable)
	target, err := rules.ParseTarget(f.target)
	if err != nil {
		return nil, usagef("--target: %v", err)
	}
	failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return nil, usageError{err}
	}
	if !validFormat(f.format) {
		return nil, usagef("--format: unknown format %q (want %s)", f.format, strings.Join(output.Formats(), ", "))
	}
	color, err := output.UseColor(f.color, e.stdout, e.getenv)
	if err != nil {
		return nil, usagef("--color: %v", err)
	}
	if f.idle <= 0 {
		return nil, usagef("--idle-threshold: must be positive, got %s", f.idle)
	}
	enabled, err := enabledRules(f.disable)
	if err != nil {
		return nil, err
	}
	if f.workers < 0 {
		return nil, usagef("--workers: must not be negative, got %d", f.workers)
	}
	ac := &analyzer.Config{Target: target, Rules: enabled, Workers: f.workers}
	if cfg != nil {
		ac.Severity = cfg.Severity
	}
	return &judgement{format: f.format, target: target, failOn: failOn, color: color, cfg: cfg, analyze: ac, idle: f.idle, strict: f.strict, allowEmpty: f.allowEmpty}, nil
}

// failing returns the findings at or above --fail-on.
func (j *judgement) failing(fs []analyzer.Finding) []analyzer.Finding {
	var out []analyzer.Finding
	if j.failOn == 0 {
		return out
	}
	for _, f := range fs {
		if f.Severity >= j.failOn {
			out = append(out, f)
		}
	}
	return out
}

func newAnalyze(e *env) *cobra.Command {
	var f judgeFlags
	cmd := &cobra.Command{
		Use:   "analyze CAPTURE...",
		Short: "Analyze captured traffic: what the clients relied on across transactions",
		Long: `Analyze capture files written by "pgpoolcheck proxy --capture" (or --mode
record): each client session is rebuilt transaction by transaction, every
statement it ran is checked with the same rules as scan, and a finding is kept
when the session state it made actually crossed a transaction boundary — a SET
followed by later transactions, a lock still held at COMMIT, a temporary table,
WITH HOLD cursor or prepared statement used in a later transaction. Traffic
shows what scan cannot: named protocol-level statements, the unnamed statement
bound after a Sync, startup parameters and transactions left idle.

Findings are grouped by rule and statement, with how often they happened, in
how many sessions, when, and from which application_name.

Arguments are capture files, directories (every .jsonl file in them and below)
and glob patterns (expanded here too, so they may be quoted). A capture named
as a file brings its other parts (FILE.2.jsonl …) along, and the parts of a
rotated capture may come in any order. The captures of several proxy
instances are analyzed together (fleet-wide), read in parallel (--workers):
sessions of different captures stay apart even when their ids are equal, each
finding is reported once with its counts summed over the instances, and the
summary says how many instances and sessions the report covers. A corrupt
line in the middle of a capture is skipped with a warning that counts such
lines (--strict: an error).

Exit status: 0 when no finding is at or above --fail-on, 1 when one is, 2 for a
usage error, an unreadable or invalid capture or an internal error.`,
		Example: `  pgpoolcheck analyze capture.jsonl
  pgpoolcheck analyze --target pgbouncer-legacy 'captures/*.jsonl'
  pgpoolcheck analyze captures/          # every instance's capture, fleet-wide
  pgpoolcheck analyze --format sarif --idle-threshold 500ms capture.jsonl > traffic.sarif`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("analyze needs at least one CAPTURE file")
			}
			j, err := f.settle(e, cmd)
			if err != nil {
				return err
			}
			rep, err := j.analyzeCaptures(e, args)
			if err != nil {
				return err
			}
			if err := output.Write(e.stdout, j.format, rep, output.Options{Color: j.color}); err != nil {
				return fmt.Errorf("writing output: %w", err)
			}
			if len(j.failing(rep.Findings)) > 0 {
				return errFindings
			}
			return nil
		},
	}
	addJudgeFlags(cmd, &f)
	return cmd
}

// analyzeCaptures expands the capture arguments and analyzes them; the
// reader's warnings go to standard error.
func (j *judgement) analyzeCaptures(e *env, args []string) (*analyzer.Report, error) {
	paths, err := expandCaptures(args, j.allowEmpty)
	if err != nil {
		return nil, err
	}
	rep, warns, err := traffic.Analyze(j.analyze, paths, traffic.Options{IdleThreshold: j.idle, Strict: j.strict})
	for _, w := range warns {
		fmt.Fprintf(e.stderr, "pgpoolcheck: warning: %s\n", w)
	}
	if err != nil {
		return nil, err
	}
	rep.Version = version.String()
	return rep, nil
}

// expandCaptures turns the capture arguments into capture files. A file is
// taken as it is, with the other parts of its capture next to it
// (FILE.2.jsonl, … written by rotation or a restarted recorder); a
// directory gives every .jsonl file in it and below it; a glob pattern is
// expanded here too (for shells and CI systems that pass it quoted), and
// each file or directory it matches is taken as above. A missing file is an
// error; so is an argument that yields no capture, unless allowEmpty.
func expandCaptures(args []string, allowEmpty bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range args {
		matches := []string{a}
		if _, err := os.Stat(a); errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, usagef("bad pattern %q: %v", a, err)
			}
			if len(m) == 0 {
				if allowEmpty {
					continue
				}
				return nil, fmt.Errorf("%s: no capture file matches", a)
			}
			matches = m
		} else if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", a, analyzer.ErrNotFound)
		} else if err != nil {
			return nil, err
		}
		found := 0
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, err
			}
			if !st.IsDir() {
				add(m)
				found++
				for n := 2; ; n++ {
					part := capture.PartPath(m, n)
					if st, err := os.Stat(part); err != nil || st.IsDir() {
						break
					}
					add(part)
				}
				continue
			}
			files, err := capturesIn(m)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				add(f)
			}
			found += len(files)
		}
		if found == 0 && !allowEmpty {
			return nil, usagef("no captures in %s (no .jsonl file in it or below); --allow-empty accepts that", a)
		}
	}
	return out, nil
}

// capturesIn returns the .jsonl files in dir and below it, in lexical
// order.
func capturesIn(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(p), ".jsonl") {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symbolic link counts when it leads to a file.
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err
}
