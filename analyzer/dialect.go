package analyzer

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// dialectMarker is a piece of syntax that only another database's SQL
// has.
type dialectMarker struct {
	dialect, what string
	re            *regexp.Regexp
	// weak is set for a marker that does not make a file another
	// database's on its own: GO separates batches for sqlcmd, and some
	// test harnesses split PostgreSQL scripts on it too.
	weak bool
}

// dialectMarkers are looked for in a SQL file's code, outside comments,
// strings, quoted identifiers and dollar-quoted bodies.
var dialectMarkers = []dialectMarker{
	{"SQL Server (T-SQL)", "the GO batch separator", regexp.MustCompile(`(?im)^[ \t]*GO[ \t]*(?:\d+[ \t]*)?;?[ \t]*\r?$`), true},
	{"SQL Server (T-SQL)", "a SET of a T-SQL session option", regexp.MustCompile(`(?i)\bSET[ \t]+(?:NOCOUNT|ANSI_NULLS|ANSI_PADDING|ANSI_WARNINGS|ARITHABORT|CONCAT_NULL_YIELDS_NULL|NUMERIC_ROUNDABORT|QUOTED_IDENTIFIER|XACT_ABORT|IDENTITY_INSERT)\b`), false},
	{"SQL Server (T-SQL)", "OBJECT_ID(…)", regexp.MustCompile(`(?i)\bOBJECT_ID[ \t]*\(`), false},
	{"SQL Server (T-SQL)", "a [bracketed] identifier", regexp.MustCompile(`(?i)\[dbo\]|\]\.\[|\b(?:FROM|JOIN|INTO|UPDATE|TABLE|VIEW|PROC|PROCEDURE|FUNCTION|TRIGGER|INDEX|EXEC|EXECUTE)[ \t]+\[[A-Za-z_]`), false},
	{"SQL Server (T-SQL)", "a @@ system function", regexp.MustCompile(`(?i)@@(?:ROWCOUNT|ERROR|IDENTITY|TRANCOUNT|VERSION|SPID)\b`), false},
	{"SQL Server (T-SQL)", "a DECLARE of an @variable", regexp.MustCompile(`(?i)\bDECLARE[ \t]+@`), false},
	{"MySQL", "a `backquoted` identifier", regexp.MustCompile("`[^`\n]+`"), false},
	{"MySQL", "ENGINE=", regexp.MustCompile(`(?i)\)[ \t\r\n]*ENGINE[ \t]*=`), false},
	{"MySQL", "AUTO_INCREMENT", regexp.MustCompile(`(?i)\bAUTO_INCREMENT\b`), false},
	{"MySQL", "a DELIMITER command", regexp.MustCompile(`(?im)^[ \t]*DELIMITER[ \t]+\S+`), false},
	{"SQLite", "AUTOINCREMENT", regexp.MustCompile(`(?i)\bAUTOINCREMENT\b`), false},
	{"SQLite", "a PRAGMA", regexp.MustCompile(`(?im)^[ \t]*PRAGMA[ \t]`), false},
	{"Oracle", "VARCHAR2", regexp.MustCompile(`(?i)\bN?VARCHAR2\b`), false},
}

// sqlCode returns src with comments, string literals, quoted identifiers
// and dollar-quoted bodies blanked out (newlines kept), so that markers
// are looked for in code only.
func sqlCode(src []byte) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	blank := func(a, b int) {
		for k := a; k < b && k < len(out); k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j, depth := i+2, 1
			for j < len(src) && depth > 0 {
				if src[j] == '*' && j+1 < len(src) && src[j+1] == '/' {
					depth--
					j += 2
				} else if src[j] == '/' && j+1 < len(src) && src[j+1] == '*' {
					depth++
					j += 2
				} else {
					j++
				}
			}
			blank(i, j)
			i = j
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) {
				if src[j] == c {
					if j+1 < len(src) && src[j+1] == c {
						j += 2
						continue
					}
					j++
					break
				}
				j++
			}
			blank(i, j)
			i = j
		case c == '$':
			j := i + 1
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || j > i+1 && src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if j < len(src) && src[j] == '$' && (i == 0 || !isWordByte(src[i-1])) {
				tag := src[i : j+1]
				if k := indexFrom(src, tag, j+1); k >= 0 {
					blank(i, k+len(tag))
					i = k + len(tag)
					continue
				}
			}
			i++
		default:
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func indexFrom(s, sub []byte, from int) int {
	if k := bytes.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}

// foreignSQL is what otherSQLDialect found: the dialect, the first marker
// and its offset.
type foreignSQL struct {
	dialect, what string
	off           int
}

// otherSQLDialect reports whether a SQL file carries syntax of another
// database (SQL Server's GO and SET NOCOUNT ON, MySQL's backquotes and
// ENGINE=, …): the dialect with the most markers, and its first one.
func otherSQLDialect(src []byte) (foreignSQL, bool) {
	code := sqlCode(src)
	count := map[string]int{}
	first := map[string]foreignSQL{}
	for _, m := range dialectMarkers {
		loc := m.re.FindIndex(code)
		if loc == nil {
			continue
		}
		if !m.weak {
			count[m.dialect]++
		}
		if f, ok := first[m.dialect]; !ok || loc[0] < f.off {
			first[m.dialect] = foreignSQL{m.dialect, m.what + " here", loc[0]}
		}
	}
	var best foreignSQL
	found := false
	for _, m := range dialectMarkers { // catalogue order breaks ties
		if f, ok := first[m.dialect]; ok && count[m.dialect] > 0 && (!found || count[m.dialect] > count[best.dialect]) {
			best, found = f, true
		}
	}
	return best, found
}

// pathDialect names the database a file's path names when
// otherDatabaseFile holds for it (…/MySqlMigrations/…).
func pathDialect(name string) (foreignSQL, bool) {
	if !otherDatabaseFile(name) {
		return foreignSQL{}, false
	}
	lower := strings.ToLower(name)
	for _, db := range otherDatabases {
		if strings.Contains(lower, db) {
			return foreignSQL{dialect: pathNames[db], what: "its path names it"}, true
		}
	}
	return foreignSQL{}, false
}

// pathNames spells the databases of otherDatabases.
var pathNames = map[string]string{
	"mysql": "MySQL", "mariadb": "MariaDB", "sqlite": "SQLite", "mssql": "SQL Server", "sqlserver": "SQL Server",
	"oracle": "Oracle", "clickhouse": "ClickHouse", "snowflake": "Snowflake", "spanner": "Spanner",
	"firebird": "Firebird", "cassandra": "Cassandra", "mongodb": "MongoDB", "duckdb": "DuckDB", "bigquery": "BigQuery",
}

// otherDialectFinding places other-dialect's note on a SQL file written
// for another database at its first marker, offset off.
func otherDialectFinding(name string, lines *sqlparse.LineIndex, off int, sf rules.ScanFinding) Finding {
	start := lines.Position(off)
	return Finding{
		Rule:     sf.Rule.ID,
		Severity: sf.Severity,
		File:     name,
		Line:     start.Line, Column: start.Column, EndLine: start.Line, EndColumn: start.Column + 1,
		Message:    sf.Message,
		Fix:        sf.Fix,
		SourceLine: lines.LineText(start.Line),
		stmtLine:   start.Line,
	}
}
