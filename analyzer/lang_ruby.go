package analyzer

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
)

// This file holds what scan knows of Ruby: Rails' database.yml, and
// Sequel's listen and advisory-lock calls. Its lexer and recognisers are in
// internal/extract/ruby.go and internal/extract/ruby_heredoc.go.

// railsDatabaseFile reports whether a YAML file is a Rails database.yml for
// PostgreSQL: named database*.yml and naming a PostgreSQL adapter or URL.
func railsDatabaseFile(name string, vals []extract.ConfigValue) bool {
	base := strings.ToLower(filepath.Base(name))
	if !strings.HasPrefix(base, "database") {
		return false
	}
	for _, v := range vals {
		val := strings.ToLower(v.Value)
		if strings.HasSuffix(v.Key, "adapter") && strings.Contains(val, "postg") ||
			strings.Contains(val, "postgres://") || strings.Contains(val, "postgresql://") {
			return true
		}
	}
	return false
}

// sequelListen matches Sequel's Database#listen with a block or loop:
// RECEIVER.listen(…) do, { or loop: true.
var sequelListen = regexp.MustCompile(`([A-Za-z_@:][A-Za-z0-9_:.@]*)\.(listen)\b`)

// blockDo is a do block on the line.
var blockDo = regexp.MustCompile(`\bdo\b`)

// sequelListens returns the calls of Sequel's listen in a Ruby file that
// uses Sequel: a receiver's listen called with a block or with loop:
// (Sequel's LISTEN and wait for notifications).
func sequelListens(src []byte, lits []extract.Literal, comments []extract.Comment) []extract.Subscription {
	if !bytes.Contains(src, []byte("Sequel")) || !bytes.Contains(src, []byte(".listen")) {
		return nil
	}
	code := extract.CodeMask(src, lits, comments)
	var out []extract.Subscription
	for _, m := range sequelListen.FindAllSubmatchIndex(src, -1) {
		if !code[m[4]] {
			continue
		}
		eol := bytes.IndexByte(src[m[5]:], '\n')
		if eol < 0 {
			eol = len(src) - m[5]
		}
		line := maskedText(src, code, m[5], m[5]+eol) // after "listen"
		args, after := line, line
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '(' {
			at := m[5] + len(line) - len(t)
			shut := matchBrace(src, code, at)
			args = maskedText(src, code, at, min(shut+1, len(src)))
			after = nil
			if shut < m[5]+eol {
				after = maskedText(src, code, shut+1, m[5]+eol)
			}
		}
		after = bytes.TrimLeft(after, " \t")
		block := bytes.HasPrefix(after, []byte("{")) || blockDo.Match(after)
		if !block && !bytes.Contains(args, []byte("loop:")) {
			continue
		}
		out = append(out, extract.Subscription{Start: m[4], End: m[5], API: "Sequel.listen", Receiver: string(src[m[2]:m[3]])})
	}
	return out
}

// sequelVirtualRowCall is a call of an advisory lock function in a Sequel
// virtual row block: ds.get{pg_advisory_lock(id)}.
var sequelVirtualRowCall = regexp.MustCompile(`\{\s*(?:\|\w+\|\s*)?(pg_(?:try_)?advisory_(?:lock|lock_shared|unlock|unlock_shared|unlock_all))\s*[({]`)

// sequelAdvisoryFindings reports the advisory lock functions that a Ruby
// file using Sequel calls through its virtual row DSL
// (ds.get{pg_advisory_lock(lock_id)}): Sequel sends them as SQL, and the
// rule that lists the function as an API of Sequel's reports it.
func (c *Config) sequelAdvisoryFindings(name string, src []byte, lines *sqlparse.LineIndex) []Finding {
	apis := c.apiRules()
	if len(apis) == 0 || !bytes.Contains(src, []byte("Sequel")) || !bytes.Contains(src, []byte("advisory_")) {
		return nil
	}
	lits, comments, err := extract.Literals(extract.Ruby, src)
	if err != nil {
		return nil
	}
	code := extract.CodeMask(src, lits, comments)
	var fs []Finding
	for _, m := range sequelVirtualRowCall.FindAllSubmatchIndex(src, -1) {
		if !code[m[2]] {
			continue
		}
		fs = append(fs, c.apiFindings(apis, name, lines, m[2], m[3], "Sequel."+string(src[m[2]:m[3]]), "")...)
	}
	return fs
}
