package pgparams

import "strings"

// Tracked are the parameters that PgBouncer keeps per client (its
// varcache), and pgpoolcheck's pooler too: the server reports each change
// of one in a ParameterStatus, and the pooler sets a client's values on
// whichever server connection serves it, so that they follow the client
// across transactions. Spelled as the server reports them.
var Tracked = []string{"application_name", "client_encoding", "DateStyle", "TimeZone", "IntervalStyle", "standard_conforming_strings"}

// Canonical returns the spelling in Tracked of parameter name, given in
// any case, or "" when it is not tracked.
func Canonical(name string) string {
	for _, p := range Tracked {
		if strings.EqualFold(p, name) {
			return p
		}
	}
	return ""
}

// IsTracked reports whether parameter name (any case) is one of Tracked.
func IsTracked(name string) bool { return Canonical(name) != "" }
