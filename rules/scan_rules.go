package rules

// The rules in this file are about the scan itself.

// ParseError is a statement the PostgreSQL parser rejects.
var ParseError = &Rule{
	ID:       "parse-error",
	Title:    "statement does not parse",
	Severity: Info,
	Fix:      "fix the syntax, or exclude the file if it is not PostgreSQL",
	Kind:     ScanRule,
}

// BadIgnore is a malformed ignore directive.
var BadIgnore = &Rule{
	ID:       "bad-ignore",
	Title:    "ignore directive without a reason or with an unknown rule",
	Severity: Warning,
	Fix:      "write -- pgpoolcheck:ignore RULE[,RULE] reason, with rule ids from `pgpoolcheck rules`",
	Kind:     ScanRule,
}

// UnusedIgnore is an ignore directive that suppressed nothing.
var UnusedIgnore = &Rule{
	ID:       "unused-ignore",
	Title:    "ignore directive matched no finding",
	Severity: Info,
	Fix:      "remove the directive",
	Kind:     ScanRule,
}

// InvalidEncoding is a file that is not UTF-8 text, which the scan skips.
var InvalidEncoding = &Rule{
	ID:       "invalid-encoding",
	Title:    "file is not UTF-8 and was not scanned",
	Severity: Warning,
	Fix:      "convert the file to UTF-8 (for example iconv -f LATIN1 -t UTF-8), or exclude it in .pgpoolcheck.yaml",
	Kind:     ScanRule,
}

// OtherDialect is a SQL file written for another database.
var OtherDialect = &Rule{
	ID:       "other-dialect",
	Title:    "SQL file written for another database",
	Severity: Info,
	Fix:      "nothing to do if the file is not run against PostgreSQL; exclude it in .pgpoolcheck.yaml to drop this note",
	Kind:     ScanRule,
}
