package rules

import "strings"

// keywords are lower-case words of which at least one appears in the text
// of every statement any SQL rule reports. They let the analyzer skip work
// (routine bodies, tree walks) on text that cannot produce a finding. Keep
// it a superset: a missing word is a missed finding.
var keywords = []string{
	"set",        // SET, RESET, set_config, pg_settings, SESSION AUTHORIZATION
	"listen",     // LISTEN, UNLISTEN
	"temp",       // TEMP, TEMPORARY, pg_temp
	"hold",       // DECLARE … WITH HOLD
	"prepare",    // PREPARE
	"execute",    // EXECUTE, EXPLAIN EXECUTE, EXECUTE 'literal' in PL/pgSQL
	"deallocate", // DEALLOCATE
	"load",       // LOAD
	"discard",    // DISCARD
	"currval", "lastval",
	"advisory", // pg_advisory_*, pg_try_advisory_*
	"backend_pid", "inet_client",
}

// contextKeywords mark text whose findings depend on other statements of
// the same transaction (currval needs the INSERT or nextval before it, a
// temporary table dropped before the end of the body is no finding), so
// all of its statements must be kept.
var contextKeywords = []string{"currval", "lastval", "advisory", "hold", "temp"}

// Relevant reports whether lower-case text may hold a statement that an
// SQL rule reports.
func Relevant(lower string) bool { return containsAny(lower, keywords) }

// NeedsContext reports whether lower-case text holds statements whose
// findings depend on the other statements of their transaction.
func NeedsContext(lower string) bool { return containsAny(lower, contextKeywords) }

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
