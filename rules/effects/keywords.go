package effects

// KeywordUse is how the pre-filters count a keyword. They decide from a
// statement's text alone, before any parse, whether it can matter: the
// pooler's (rules/classify.MayAffect: may it change session state?) and
// scan's (rules.Relevant: may an SQL rule report it? rules.NeedsContext:
// do its findings depend on the statements around it?).
type KeywordUse uint8

const (
	// StartsChange: as the first word of a statement (any case), the
	// keyword of a statement that may change session state, or what code
	// other statements reach.
	StartsChange KeywordUse = 1 << iota
	// NamesChange: as a whole word (any case) outside comments and string
	// constants, the name of a function whose call changes session state
	// or of a temporary object.
	NamesChange
	// PrefixesChange: NamesChange for the long words it starts (those of
	// the session-level advisory lock functions), unless "xact" follows it:
	// the transaction-level locks end with the transaction.
	PrefixesChange
	// InText: in lower-case text, even inside a longer word, a string
	// constant or a comment. The text of every statement an SQL rule
	// reports holds one of these: the list is kept a superset, as a
	// missing word is a missed finding.
	InText
	// InContext: InText for statements whose findings depend on the
	// other statements of their transaction (currval needs the INSERT or
	// nextval before it, a temporary table dropped before the end of a
	// routine body is no finding), so that all of those are kept.
	InContext
)

// keywords are the words of SQL text that tell the pre-filters a statement
// may matter, each listed once with every way it counts.
var keywords = []struct {
	word string // lower-case
	use  KeywordUse
}{
	{"set", StartsChange | InText}, // in text: RESET, set_config, pg_settings, SET ROLE, SESSION AUTHORIZATION
	{"reset", StartsChange},
	{"set_config", NamesChange},
	{"pg_settings", NamesChange},
	{"listen", StartsChange | InText}, // in text: UNLISTEN
	{"unlisten", StartsChange},
	{"temp", NamesChange | InText | InContext}, // in text: TEMPORARY, pg_temp
	{"temporary", NamesChange},
	{"pg_temp", NamesChange},
	{"declare", StartsChange},
	{"hold", InText | InContext}, // DECLARE … WITH HOLD
	{"close", StartsChange},
	{"prepare", StartsChange | InText},
	{"execute", InText}, // EXECUTE, EXPLAIN EXECUTE, EXECUTE 'literal' in PL/pgSQL
	{"deallocate", StartsChange | InText},
	{"load", StartsChange | InText},
	{"discard", StartsChange | InText},
	{"currval", InText | InContext},
	{"lastval", InText | InContext},
	{"advisory", InText | InContext}, // pg_advisory_*, pg_try_advisory_*
	{"pg_advisory_", PrefixesChange},
	{"pg_try_advisory_", PrefixesChange},
	{"backend_pid", InText},
	{"inet_client", InText},
	// Statements that may change what code other statements reach.
	{"do", StartsChange},
	{"call", StartsChange},
	{"create", StartsChange},
	{"alter", StartsChange},
	{"drop", StartsChange},
	{"import", StartsChange},
}

// Keywords returns the keywords (lower-case) that count in way use, in
// the order of the list.
func Keywords(use KeywordUse) []string {
	var out []string
	for _, k := range keywords {
		if k.use&use != 0 {
			out = append(out, k.word)
		}
	}
	return out
}
