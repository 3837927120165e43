package cli

import (
	"fmt"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/baseline"
	"github.com/pgpoolcheck/pgpoolcheck/internal/output"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/spf13/cobra"
)

func newGate(e *env) *cobra.Command {
	var f judgeFlags
	var scanPaths, captures []string
	var baselinePath string
	cmd := &cobra.Command{
		Use:   "gate [--scan PATH...] [--capture FILE...]",
		Short: "One CI verdict: is this application ready for transaction pooling?",
		Long: `Run scan over the --scan paths and analyze over the --capture files, and print
one verdict:

  READY for transaction pooling behind <target>
  NOT READY: N blocking findings

A finding blocks when its severity is at or above --fail-on (default error,
judged against --target) and --baseline does not record it. Only the blocking
findings are listed, in the chosen --format; with a format other than text the
verdict goes to standard error as well, and --format json carries it in its
"verdict" object.

Exit status: 0 when ready, 1 when not ready, 2 for a usage error, unreadable
input or an internal error.`,
		Example: `  pgpoolcheck gate --scan db/ --scan src/ --capture 'staging/*.jsonl'
  pgpoolcheck gate --target pgbouncer --fail-on warning --capture capture.jsonl
  pgpoolcheck gate --format sarif --scan . --capture capture.jsonl > pgpoolcheck.sarif`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(scanPaths) == 0 && len(captures) == 0 {
				return usagef("gate needs --scan PATH or --capture FILE (or both)")
			}
			j, err := f.settle(e, cmd)
			if err != nil {
				return err
			}
			rep := &analyzer.Report{Tool: "pgpoolcheck", Version: version.String(), Target: j.target, Findings: []analyzer.Finding{}}
			if len(scanPaths) > 0 {
				inputs, err := scanInputs(e, scanFlags{}, j.cfg, scanPaths)
				if err != nil {
					return err
				}
				sr, err := j.analyze.Scan(inputs)
				if err != nil {
					return err
				}
				for _, sk := range sr.Summary.Skipped {
					fmt.Fprintf(e.stderr, "pgpoolcheck: %s: skipped: %s\n", sk.File, sk.Reason)
				}
				merge(rep, sr)
			}
			if len(captures) > 0 {
				tr, err := j.analyzeCaptures(e, captures)
				if err != nil {
					return err
				}
				merge(rep, tr)
			}
			if baselinePath != "" {
				b, err := baseline.Load(baselinePath)
				if err != nil {
					return err
				}
				rep.Findings, rep.Summary.Baselined, rep.Summary.StaleBaseline = b.Filter(rep.Findings)
			}
			blocking := j.failing(rep.Findings)
			below := len(rep.Findings) - len(blocking)
			rep.Findings = append([]analyzer.Finding{}, blocking...)
			rep.Summary.Count(rep.Findings)
			verdict := fmt.Sprintf("READY for transaction pooling behind %s", j.target)
			if len(blocking) > 0 {
				verdict = fmt.Sprintf("NOT READY: %s", plural(len(blocking), "blocking finding"))
			} else if bad := rep.Summary.Unreadable(); len(bad) > 0 {
				verdict = fmt.Sprintf("UNKNOWN: %s could not be read", plural(len(bad), "path"))
			}
			failOn := "never"
			if j.failOn != 0 {
				failOn = j.failOn.String()
			}
			rep.Verdict = &analyzer.Verdict{Ready: len(blocking) == 0, Message: verdict, Blocking: len(blocking), NotBlocking: below, FailOn: failOn}
			if err := output.Write(e.stdout, j.format, rep, output.Options{Color: j.color}); err != nil {
				return fmt.Errorf("writing output: %w", err)
			}
			if j.format == "text" {
				if below > 0 {
					fmt.Fprintf(e.stdout, "%s below --fail-on not listed (see pgpoolcheck scan and analyze)\n", plural(below, "finding"))
				}
				if n := rep.Summary.Baselined; n > 0 {
					fmt.Fprintf(e.stdout, "%s hidden by the baseline\n", plural(n, "finding"))
				}
				fmt.Fprintln(e.stdout, verdict)
			} else {
				fmt.Fprintf(e.stderr, "pgpoolcheck: %s\n", verdict)
			}
			if err := unreadable(rep.Summary); err != nil {
				return err
			}
			if len(blocking) > 0 {
				return errFindings
			}
			return nil
		},
	}
	addJudgeFlags(cmd, &f)
	fl := cmd.Flags()
	fl.StringArrayVar(&scanPaths, "scan", nil, "a file or directory to scan (repeatable)")
	fl.StringArrayVar(&captures, "capture", nil, "a capture file, directory or glob pattern to analyze (repeatable; the captures of several proxy instances are analyzed together)")
	fl.StringVar(&baselinePath, "baseline", "", "hide the findings recorded in this baseline file (pgpoolcheck scan --write-baseline): only new ones block")
	return cmd
}

// merge adds the findings and counts of one report to another.
func merge(into, from *analyzer.Report) {
	into.Findings = append(into.Findings, from.Findings...)
	into.Findings = analyzer.Sort(into.Findings)
	into.Summary.Files += from.Summary.Files
	into.Summary.Statements += from.Summary.Statements
	into.Summary.Instances += from.Summary.Instances
	into.Summary.Captures += from.Summary.Captures
	into.Summary.CaptureFiles += from.Summary.CaptureFiles
	into.Summary.Sessions += from.Summary.Sessions
	into.Summary.Suppressed += from.Summary.Suppressed
	into.Summary.Skipped = append(into.Summary.Skipped, from.Summary.Skipped...)
}

// plural returns "1 finding" or "2 findings".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
