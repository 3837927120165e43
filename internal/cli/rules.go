package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/spf13/cobra"
)

func newRules(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "rules",
		Short:   "List the rule catalogue: id, severity, what the rule looks at, title",
		Example: "  pgpoolcheck rules\n  pgpoolcheck explain session-set",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSEVERITY\tFOUND BY\tTITLE")
			for _, r := range rules.All() {
				sev := r.Severity.String()
				if r.Security {
					sev += " (security)"
				}
				found := "scan, analyze"
				switch r.Kind {
				case rules.TrafficRule:
					found = "analyze"
					if len(r.Settings) > 0 {
						found = "scan, analyze"
					}
				case rules.ScanRule:
					found = "scan"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, sev, found, r.Title)
			}
			return tw.Flush()
		},
	}
}

func newExplain(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "explain RULE",
		Short:   "Print a rule's documentation: the problem, what breaks and leaks, the fix, safe forms",
		Example: "  pgpoolcheck explain advisory-lock-session",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := rules.Lookup(args[0])
			if r == nil {
				return usagef("unknown rule %q%s; known rules: %s", args[0], suggest.Hint(args[0], rules.IDs()), strings.Join(rules.IDs(), ", "))
			}
			doc := r.Doc()
			if !strings.HasSuffix(doc, "\n") {
				doc += "\n"
			}
			if apis := r.ExplainAPIs(); apis != "" {
				doc += "\n" + apis
			}
			if settings := r.ExplainSettings(); settings != "" {
				doc += "\n" + settings
			}
			_, err := fmt.Fprint(e.stdout, doc)
			return err
		},
	}
}

func newVersion(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print pgpoolcheck's version",
		Example: "  pgpoolcheck version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(e.stdout, "pgpoolcheck %s\n", version.String())
			return err
		},
	}
}
