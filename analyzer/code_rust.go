package analyzer

import (
	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// sessionCallFindings reports the driver calls of a file that keep
// session state without SQL in the code (extract.SessionCalls: sqlx's
// PgListener, PgAdvisoryLock and migrator), through the rules that list
// their APIs (listen, advisory-lock-session).
func (c *Config) sessionCallFindings(name string, lang extract.Language, src []byte, lines *sqlparse.LineIndex) []Finding {
	apis := c.apiRules()
	if len(apis) == 0 {
		return nil
	}
	var fs []Finding
	for _, s := range extract.SessionCalls(lang, src) {
		fs = append(fs, c.apiFindings(apis, name, lines, s.Start, s.End, s.API, s.Receiver)...)
	}
	return fs
}
