package rules

import "sort"

// registry lists every rule, in catalogue order.
var registry = []*Rule{
	SessionSet,
	SessionRole,
	AdvisoryLockSession,
	Listen,
	TempTable,
	CursorWithHold,
	SQLPrepare,
	SessionLoad,
	SequenceSession,
	BackendPID,
	Discard,
	ProtocolPrepare,
	UnnamedStatementReuse,
	StartupParameter,
	IdleInTransaction,
	ParseError,
	BadIgnore,
	UnusedIgnore,
	InvalidEncoding,
	OtherDialect,
}

// All returns every rule in catalogue order.
func All() []*Rule { return registry }

// Lookup returns the rule with the given id, or nil.
func Lookup(id string) *Rule {
	for _, r := range registry {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// IDs returns every rule id, sorted.
func IDs() []string {
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.ID
	}
	sort.Strings(out)
	return out
}

// InterestingFuncs returns the union of Funcs of the given rules.
func InterestingFuncs(rs []*Rule) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rs {
		for _, f := range r.Funcs {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
