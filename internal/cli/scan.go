package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/baseline"
	"github.com/pgpoolcheck/pgpoolcheck/internal/config"
	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/output"
	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/spf13/cobra"
)

type scanFlags struct {
	allowEmpty    bool
	format        string
	target        string
	failOn        string
	color         string
	stdinFilename string
	workers       int
	disable       []string
	config        string
	noConfig      bool
	baseline      string
	writeBaseline string
	forceExclude  bool
}

func newScan(e *env) *cobra.Command {
	var f scanFlags
	cmd := &cobra.Command{
		Use:   "scan [PATH...|-]",
		Short: "Scan SQL and application code for statements that break behind a transaction-mode pooler",
		Long: `Scan SQL files (.sql, .psql, .pgsql), the SQL in application code (Go, Python,
Ruby, JavaScript/TypeScript, Java/Kotlin, Elixir, PHP, Rust, C#) and the
connection strings in configuration files (.env, *.properties, *.yml/*.yaml,
appsettings*.json), and report every statement and setting that depends on
server session state. Directories are walked, skipping hidden directories,
vendor, node_modules, what git ignores and what .pgpoolcheck.yaml excludes;
files named are scanned as given, unless --force-exclude selects them as a walk
would (what the pre-commit hook does). "-" reads standard input.

Findings are written file by file while the scan goes on, in the same order as
a whole report (by path, then position). When standard error is a terminal and
the scan takes over 2 seconds, a progress line there counts the files done.

A binary file is skipped with a note on standard error. A file that is not
UTF-8 is skipped too and reported as an invalid-encoding finding (warning) at
its first invalid byte: like any rule it counts toward --fail-on (so
--fail-on warning fails on it), takes a severity from the config file, and
--disable invalid-encoding leaves only the note.

Exit status: 0 when no finding is at or above --fail-on, 1 when one is, 2 for a
usage error, an unreadable path or an internal error.`,
		Example: `  pgpoolcheck scan db/migrations
  pgpoolcheck scan --target generic --fail-on warning schema.sql
  pg_dump --schema-only mydb | pgpoolcheck scan --stdin-filename schema.sql -
  pgpoolcheck scan --format github .`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runScan(e, cmd, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.format, "format", "f", "text", "output format: "+strings.Join(output.Formats(), ", "))
	fl.StringVar(&f.target, "target", string(rules.DefaultTarget), "pooler to judge against: "+targetNames())
	fl.StringVar(&f.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: critical, error, warning, info, never")
	fl.StringVar(&f.color, "color", "auto", "colour text output: auto, always, never (NO_COLOR is respected)")
	fl.StringVar(&f.stdinFilename, "stdin-filename", "", "file name to report for standard input")
	fl.IntVar(&f.workers, "workers", 0, "parser workers (0: one per CPU)")
	fl.StringSliceVar(&f.disable, "disable", nil, "rule ids to turn off (comma-separated or repeated)")
	fl.StringVar(&f.config, "config", "", "config file (default: "+config.FileName+" in the working directory or a parent)")
	fl.BoolVar(&f.noConfig, "no-config", false, "ignore config files")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "exit 0 when the paths hold no file to scan (by default that is a usage error, so that a CI gate that checks nothing does not pass)")
	fl.StringVar(&f.baseline, "baseline", "", "hide the findings recorded in this baseline file; report only new ones")
	fl.StringVar(&f.writeBaseline, "write-baseline", "", "record the current findings in this baseline file (exit 0)")
	fl.BoolVar(&f.forceExclude, "force-exclude", false, "select files named on the command line as a directory walk selects them (config include/exclude and languages, .gitignore, hidden and vendor directories, files scan does not read): for hooks that pass file names, such as pre-commit")
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

func runScan(e *env, cmd *cobra.Command, f scanFlags, args []string) error {
	if len(args) == 0 {
		return usagef("scan needs at least one PATH (or - for standard input)")
	}
	cfg, err := loadConfig(e, f)
	if err != nil {
		return err
	}
	configDefaults(cfg, cmd, &f.target, &f.failOn, &f.disable)
	target, err := rules.ParseTarget(f.target)
	if f.baseline != "" && f.writeBaseline != "" {
		return usagef("--baseline and --write-baseline exclude each other")
	}
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

	inputs, err := scanInputs(e, f, cfg, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 && !f.allowEmpty {
		return usagef("no files to scan in %s (no SQL or application code the config selects); --allow-empty accepts that", strings.Join(args, ", "))
	}

	ac := &analyzer.Config{Target: target, Rules: enabled, Workers: f.workers}
	if cfg != nil {
		ac.Severity = cfg.Severity
	}
	return streamScan(e, f, ac, inputs, color, failOn)
}

// streamScan runs the scan and writes each file's findings as soon as they
// are made (after the baseline, if any, hid its own), so neither the parse
// trees nor the findings of the whole tree are ever held. With
// --write-baseline the findings are only recorded.
func streamScan(e *env, f scanFlags, ac *analyzer.Config, inputs []analyzer.Input, color bool, failOn rules.Severity) error {
	var (
		builder *baseline.Builder
		matcher *baseline.Matcher
		stream  *output.Stream
		failed  bool
	)
	prog := startProgress(e, len(inputs))
	defer prog.finish()
	if f.writeBaseline != "" {
		builder = &baseline.Builder{}
	} else {
		if f.baseline != "" {
			b, err := baseline.Load(f.baseline)
			if err != nil {
				return err
			}
			matcher = b.Matcher()
		}
		stdout := e.stdout
		if isTerminal(stdout) {
			stdout = prog.above(stdout)
		}
		rep := &analyzer.Report{Tool: "pgpoolcheck", Version: version.String(), Target: ac.Target}
		var err error
		if stream, err = output.NewStream(stdout, f.format, rep, output.Options{Color: color}); err != nil {
			return err
		}
	}
	sum, err := ac.Stream(inputs, func(fr analyzer.FileResult) error {
		prog.add(fr.Inputs)
		fs := fr.Findings
		if builder != nil {
			builder.Add(fs)
			return nil
		}
		if matcher != nil {
			fs = matcher.Filter(fs)
		}
		for _, fd := range fs {
			if failOn > 0 && fd.Severity >= failOn {
				failed = true
			}
		}
		if err := stream.Write(fs); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	})
	prog.finish()
	if err != nil {
		return err
	}
	if builder != nil {
		b := builder.File()
		if err := b.Write(f.writeBaseline); err != nil {
			return fmt.Errorf("writing baseline: %w", err)
		}
		fmt.Fprintf(e.stderr, "pgpoolcheck: recorded %d findings in %s\n", len(b.Entries), f.writeBaseline)
		return nil
	}
	if matcher != nil {
		sum.Baselined, sum.StaleBaseline = matcher.Hidden(), matcher.Stale()
	}
	for _, sk := range sum.Skipped {
		fmt.Fprintf(e.stderr, "pgpoolcheck: %s: skipped: %s\n", sk.File, sk.Reason)
	}
	if err := stream.Close(sum); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if err := unreadable(sum); err != nil {
		return err
	}
	if failed {
		return errFindings
	}
	return nil
}

// scanInputs collects the inputs of a scan: "-" reads standard input,
// files are taken as given, directories are walked for the languages and
// paths the config selects (and that git does not ignore).
func scanInputs(e *env, f scanFlags, cfg *config.Config, args []string) ([]analyzer.Input, error) {
	var inputs []analyzer.Input
	var paths []string
	stdinUsed := false
	for _, a := range args {
		if a == "-" {
			if stdinUsed {
				return nil, usagef("standard input (-) given twice")
			}
			stdinUsed = true
			in, err := analyzer.ReadStdin(e.stdin, f.stdinFilename)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, in)
			continue
		}
		paths = append(paths, a)
	}
	walk := analyzer.Walk{Gitignore: true, Wants: func(path string) bool {
		lang := languageOf(path)
		return lang != "" && cfg.Language(lang) && cfg.Selects(path)
	}, Excluded: cfg.ExcludesDir, WalkDir: e.walkDir,
		Warn: func(msg string) { fmt.Fprintf(e.stderr, "pgpoolcheck: warning: %s\n", msg) }}
	if f.forceExclude {
		walk.Named = walk.Wants
	}
	files, err := analyzer.Collect(paths, walk)
	if err != nil {
		return nil, err
	}
	return append(inputs, files...), nil
}

// languageOf names the language of a file as the config's languages list
// does, or "" for files scan does not read.
func languageOf(path string) string {
	if analyzer.IsSQLFile(path) {
		return "sql"
	}
	lang, ok := extract.LanguageFor(path)
	if !ok {
		// Configuration files are read for connection strings only;
		// pgpoolcheck's own holds none.
		if _, ok := extract.ConfigFormatFor(path); ok {
			if base := filepath.Base(path); base != config.FileName && base != config.FileNameAlt {
				return "config"
			}
		}
		return ""
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".ts", ".tsx", ".mts", ".cts":
		return "typescript"
	}
	return string(lang)
}

// loadConfig reads --config, or the config file found from the working
// directory up, unless --no-config.
// configDefaults takes the target, fail-on level and disabled rules of the
// config file (nil: none) where the command line did not give them.
func configDefaults(cfg *config.Config, cmd *cobra.Command, target, failOn *string, disable *[]string) {
	if cfg == nil {
		return
	}
	if cfg.Target != "" && !cmd.Flags().Changed("target") {
		*target = cfg.Target
	}
	if cfg.FailOn != "" && !cmd.Flags().Changed("fail-on") {
		*failOn = cfg.FailOn
	}
	for id := range cfg.Disabled {
		*disable = append(*disable, id)
	}
}

func loadConfig(e *env, f scanFlags) (*config.Config, error) {
	if f.noConfig {
		if f.config != "" {
			return nil, usagef("--config and --no-config exclude each other")
		}
		return nil, nil
	}
	path := f.config
	if path == "" {
		found, err := config.Find(".")
		if err != nil || found == "" {
			return nil, err
		}
		path = found
	}
	c, err := config.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(e.stderr, "pgpoolcheck: warning: %s: %s\n", path, w)
	}
	return c, nil
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
			return nil, usagef("--disable: unknown rule %q%s (see pgpoolcheck rules)", id, suggest.Hint(id, rules.IDs()))
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
