package analyzer

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// This file holds what scan knows of Rust: sqlx's session calls and connect
// options, and which literals are messages rather than SQL. Its lexer and
// recognisers are in internal/extract/rust.go and
// internal/extract/rustcalls.go.

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

// rustOptions checks the (name, value) pairs given to sqlx's
// PgConnectOptions::options, which sqlx sends as -c name=value in the
// options startup parameter.
func (s *settingsCheck) rustOptions(src []byte, lits []extract.Literal, offline []extract.Span) {
	pairs := extract.RustConnectOptions(src)
	if len(pairs) == 0 {
		return
	}
	at := map[int]*extract.Literal{}
	for i := range lits {
		at[lits[i].Start] = &lits[i]
	}
	for _, pr := range pairs {
		k, v := at[pr.Key], at[pr.Value]
		if k == nil || v == nil || spanAt(offline, k.Start) >= 0 {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(k.Value))
		if name == "" || strings.Contains(name, extract.Placeholder) {
			continue
		}
		p := param{lit: k, key: name, value: v.Value, start: 0, end: len(k.Value), valueAt: func(i int) int { return i }, text: fmt.Sprintf("(%q, %q)", k.Value, v.Value)}
		s.setting(p, "sqlx.PgConnectOptions.options", rules.SettingUse{Param: name, Value: v.Value})
	}
}

// rustNotSQLCall reports whether a Rust literal passed to function name
// (as callee returns it) is a message: Option and Result's expect("…")
// panic with it.
func rustNotSQLCall(name string) bool {
	if k := strings.LastIndexByte(name, '.'); k >= 0 {
		name = name[k+1:]
	}
	return name == "expect" || name == "expect_err"
}
