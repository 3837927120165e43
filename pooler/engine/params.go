package engine

import "strings"

// TrackedParams are the parameters kept per client and applied to
// whichever server serves it (PgBouncer's varcache): the server reports
// each change with a ParameterStatus.
var TrackedParams = []string{"application_name", "client_encoding", "DateStyle", "TimeZone", "IntervalStyle", "standard_conforming_strings"}

// IsTracked reports whether name is one of TrackedParams (any case).
func IsTracked(name string) bool {
	for _, p := range TrackedParams {
		if strings.EqualFold(p, name) {
			return true
		}
	}
	return false
}
