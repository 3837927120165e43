package engine

import "github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"

// TrackedParams are the parameters kept per client and applied to
// whichever server serves it (PgBouncer's varcache): the server reports
// each change with a ParameterStatus. The list is pgparams.Tracked.
var TrackedParams = pgparams.Tracked

// IsTracked reports whether name is one of TrackedParams (any case).
func IsTracked(name string) bool { return pgparams.IsTracked(name) }
