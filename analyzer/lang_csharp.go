package analyzer

import (
	"bytes"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// This file holds what scan knows of C#: Npgsql's subscriptions and
// commands, and which literals are not SQL. Its lexer and recognisers are
// in internal/extract/csharp.go and internal/extract/csharpcalls.go.

// csharpNotSQLLast are the last names of .NET methods whose first
// argument is a message for people: Microsoft.Extensions.Logging's
// extensions (logger.LogWarning("…")), console and debug output, and
// test failures and expectations (FluentAssertions' .Should().Be("…")).
var csharpNotSQLLast = map[string]bool{
	"logtrace": true, "logdebug": true, "loginformation": true, "logwarning": true,
	"logerror": true, "logcritical": true, "write": true, "writeline": true,
	"fail": true, "inconclusive": true, "ignore": true,
	"be": true, "notbe": true, "contain": true, "notcontain": true, "startwith": true,
	"endwith": true, "beequivalentto": true, "match": true,
}

// csharpNotSQLFirst are types whose static methods take messages or
// expected text: Assert.Equal("…", sql), Debug.Assert, Trace.WriteLine.
var csharpNotSQLFirst = map[string]bool{
	"assert": true, "classicassert": true, "stringassert": true, "collectionassert": true,
	"debug": true, "trace": true,
}

// csharpNotSQLCall reports whether a C# literal passed to function name
// (as callee returns it) is a message: a logging, output, assertion or
// expectation method, or the constructor of an exception (throw new
// InvalidOperationException("LISTEN failed")).
func csharpNotSQLCall(name string) bool {
	if name == "" {
		return false
	}
	first, last := name, name
	if k := strings.IndexByte(name, '.'); k >= 0 {
		first = name[:k]
	}
	if k := strings.LastIndexByte(name, '.'); k >= 0 {
		last = name[k+1:]
	}
	// A test double's expectation (a mock server's
	// ExpectSimpleQuery("DISCARD ALL")) is text to match, not a statement
	// sent.
	return csharpNotSQLLast[last] || csharpNotSQLFirst[first] || strings.HasSuffix(last, "exception") ||
		strings.HasPrefix(last, "expect")
}

// subscriptionFindings reports the calls of a file that receive
// notifications through the driver's API (extract.Subscriptions: Npgsql's
// Notification event and Wait; Sequel's listen), through the rules that
// list their APIs (listen). They rely on a LISTEN that subscribed the
// server connection, whether or not the scan found that LISTEN in a
// literal.
func (c *Config) subscriptionFindings(name string, lang extract.Language, src []byte, lines *sqlparse.LineIndex) []Finding {
	apis := c.apiRules()
	if len(apis) == 0 {
		return nil
	}
	subs := extract.Subscriptions(lang, src)
	if lang == extract.Ruby {
		if lits, comments, err := extract.Literals(lang, src); err == nil {
			subs = append(subs, sequelListens(src, lits, comments)...)
		}
	}
	var fs []Finding
	seen := map[string]bool{}
	for _, s := range subs {
		// One listener, one finding: a connection's Notification
		// handler and its Wait/WaitAsync calls are the same LISTEN.
		if s.API != "Sequel.listen" {
			if seen[s.Receiver] {
				continue
			}
			seen[s.Receiver] = true
		}
		fs = append(fs, c.apiFindings(apis, name, lines, s.Start, s.End, s.API, s.Receiver)...)
	}
	return fs
}

// csharpCommandNew reports whether the literal at start is the first
// argument of a target-typed new("…") whose target is a command type:
// NpgsqlCommand cmd = new("…"), a field or property of such a type
// initialised so, or NpgsqlBatchCommand. The declared type is the name
// before the variable before the '='.
func csharpCommandNew(src []byte, start int) bool {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	isName := func(c byte) bool {
		return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	i := start - 1
	back := func() {
		for i >= 0 && isSpace(src[i]) {
			i--
		}
	}
	back()
	if i < 0 || src[i] != '(' {
		return false
	}
	i--
	back()
	if i < 2 || string(src[i-2:i+1]) != "new" {
		return false
	}
	i -= 3
	back()
	if i < 0 || src[i] != '=' || i > 0 && (src[i-1] == '=' || src[i-1] == '!' || src[i-1] == '<' || src[i-1] == '>') {
		return false
	}
	i--
	back()
	for i >= 0 && isName(src[i]) { // the variable, field or property
		i--
	}
	back()
	if i >= 0 && src[i] == '?' {
		i-- // NpgsqlCommand? cmd
	}
	end := i + 1
	for i >= 0 && isName(src[i]) {
		i--
	}
	typ := string(src[i+1 : end])
	if k := strings.LastIndexByte(typ, '.'); k >= 0 {
		typ = typ[k+1:]
	}
	return strings.HasSuffix(typ, "Command") || typ == "NpgsqlBatchCommand"
}

// csharpThrowsArgs returns the source ranges of the argument lists of
// calls that expect an exception (Assert.Throws<…>(…), ThrowsAsync,
// MSTest's ThrowsException): what they build fails, so a connection string
// there never reaches a server.
func csharpThrowsArgs(src []byte, lits []extract.Literal, comments []extract.Comment) [][2]int {
	if !bytes.Contains(src, []byte("Throws")) {
		return nil
	}
	code := extract.CodeMask(src, lits, comments)
	var out [][2]int
	for _, name := range []string{"Throws", "ThrowsAsync", "ThrowsException", "ThrowsExceptionAsync"} {
		for _, k := range codeIndex(src, code, name) {
			if k == 0 || src[k-1] != '.' {
				continue
			}
			j := k + len(name)
			if j < len(src) && src[j] == '<' { // generic arguments
				depth := 0
				for ; j < len(src); j++ {
					if src[j] == '<' {
						depth++
					} else if src[j] == '>' {
						depth--
						if depth == 0 {
							j++
							break
						}
					}
				}
			}
			if j >= len(src) || src[j] != '(' {
				continue
			}
			if e := extract.CloseParen(src, code, j); e >= 0 {
				out = append(out, [2]int{j, e})
			}
		}
	}
	return out
}
