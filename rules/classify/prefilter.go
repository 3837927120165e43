package classify

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// MayAffect reports whether sql may change session state, from its words
// alone: it is the pre-filter Classify runs before the cache and the
// parser. It makes one pass over the text and never allocates.
//
// It is true when a statement of sql starts with one of the keywords of
// the statements involved (SET, RESET, LISTEN, UNLISTEN, DECLARE, CLOSE,
// PREPARE, DEALLOCATE, LOAD, DISCARD, DROP, DO, CALL, and CREATE, ALTER
// and IMPORT, which may change what code other statements reach), when a word
// anywhere names one of the functions involved (pg_advisory_lock and the
// other session-level advisory lock functions, set_config) or a temporary
// object (TEMP, TEMPORARY, pg_temp) or pg_settings (those keywords are the
// model's, effects.Keywords), or when a name that
// may be a user routine is followed by a parenthesis: a qualified or
// quoted name, or a word that is neither a built-in function nor a
// keyword (a table's column list after INTO, TABLE, REFERENCES or ON does
// not count). Comments and string
// constants are skipped, lexed as PostgreSQL does with
// standard_conforming_strings on: SQL inside a string only runs as the
// body of a DO block, whose keyword is enough. A false positive only
// costs a parse (once, with the cache); a false negative would be a missed
// effect, so the lists are kept a superset.
func MayAffect(sql string) bool { return mayAffect(sql, nil) }

// mayAffect is MayAffect for a caller that knows routines that change
// nothing (known, may be nil): an unqualified call of one does not count.
func mayAffect(sql string, known func(name string) bool) bool {
	atStart := true // the next word starts a statement
	// relation: the word before named a relation's place (INTO t (…));
	// dot: the byte before the current name was a '.'.
	relation, dot := false, false
	for i := 0; i < len(sql); {
		c := sql[i]
		switch byteClass[c] {
		case classSpace:
			i++
			continue
		case classWord:
			j := i + 1
			for j < len(sql) && byteClass[sql[j]] >= classWord {
				j++
			}
			w := sql[i:j]
			if atStart && leadingWord(w) || anywhereWord(w) {
				return true
			}
			if !relation && parenNext(sql, j) && (dot || !notRoutine(w, known)) {
				return true
			}
			relation, dot = relationWord(w), false
			atStart = false
			if j-i == 1 && j < len(sql) {
				switch {
				case (c == 'u' || c == 'U') && sql[j] == '&':
					return true // U&'…' or U&"…" with Unicode escapes: let the parser read it
				case (c == 'e' || c == 'E') && sql[j] == '\'':
					j = skipString(sql, j, true)
				}
			}
			i = j
			continue
		case classDigit:
			atStart = false
			i++
			continue
		}
		switch {
		case c == ';':
			atStart = true
			i++
		case c == '(':
			relation, dot = false, false
			i++ // (SELECT …) keeps the statement start
		case c == '.':
			dot = true
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i = skipComment(sql, i)
		case c == '\'':
			atStart = false
			i = skipString(sql, i, false)
		case c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '"' {
					if j+1 < len(sql) && sql[j+1] == '"' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if anywhereWord(sql[i+1:j]) || !relation && parenNext(sql, j+1) {
				return true
			}
			relation, dot = false, false
			atStart = false
			i = j + 1
		case c == '$':
			if n := dollarTagLen(sql, i); n > 0 {
				end := strings.Index(sql[i+n:], sql[i:i+n])
				if end < 0 {
					return false
				}
				i += n + end + n
			} else {
				i++
			}
			atStart = false
		default:
			relation, dot = false, false
			atStart = false
			i++
		}
	}
	return false
}

// parenNext reports whether the next byte after offset i that is not
// white space is an opening parenthesis.
func parenNext(s string, i int) bool {
	for ; i < len(s); i++ {
		if byteClass[s[i]] != classSpace {
			return s[i] == '('
		}
	}
	return false
}

// notRoutine reports whether w followed by a parenthesis is certainly no
// call of a routine that may change session state: a built-in function's
// name, a keyword that takes a parenthesis (IN (…), VALUES (…), CAST(…),
// numeric(10, 2)), or a routine known (may be nil) to change nothing;
// known gets the name as written and folds its case itself.
func notRoutine(w string, known func(name string) bool) bool {
	var buf [64]byte
	if len(w) > len(buf) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	b := buf[:len(w)]
	return effects.BuiltinName(b) || parenKeywords[string(b)] || known != nil && known(w)
}

// relationWord reports whether w is a keyword after which a name and a
// parenthesis are a relation and its column list, not a call.
func relationWord(w string) bool {
	switch len(w) {
	case 2:
		return strings.EqualFold(w, "on")
	case 4:
		return strings.EqualFold(w, "into")
	case 5:
		return strings.EqualFold(w, "table")
	case 6:
		return strings.EqualFold(w, "exists") // CREATE TABLE IF NOT EXISTS t (…)
	case 10:
		return strings.EqualFold(w, "references")
	}
	return false
}

// parenKeywords are the keywords that a parenthesis may follow and that
// cannot name a function: PostgreSQL's reserved and column-name keywords
// (kwlist.h). An unreserved or type-and-function-name keyword (SET, KEY,
// FILTER, OVER, LIKE, …) followed by a parenthesis may be a call of a
// routine of that name (CREATE FUNCTION set() …; SELECT set()), so the
// pre-filter leaves it to the parser.
var parenKeywords = map[string]bool{
	"all": true, "and": true, "any": true, "array": true, "as": true, "between": true,
	"case": true, "cast": true, "check": true, "coalesce": true, "collate": true,
	"default": true, "distinct": true, "do": true, "else": true, "except": true,
	"exists": true, "extract": true, "foreign": true, "from": true, "greatest": true,
	"group": true, "grouping": true, "having": true, "in": true,
	"intersect": true, "lateral": true, "least": true,
	"limit": true, "not": true, "nullif": true, "offset": true, "on": true, "only": true,
	"or": true, "order": true, "overlay": true, "position": true,
	"precision": true, "primary": true, "returning": true,
	"row": true, "select": true, "some": true, "substring": true, "then": true,
	"treat": true, "trim": true, "union": true, "unique": true, "using": true, "values": true,
	"when": true, "where": true, "window": true, "with": true,
	"xmlattributes": true, "xmlconcat": true, "xmlelement": true, "xmlexists": true,
	"xmlforest": true, "xmlnamespaces": true, "xmlparse": true, "xmlpi": true, "xmlroot": true,
	"xmlserialize": true, "xmltable": true,
}

// Byte classes for the pre-filter's lexer.
const (
	classOther = iota
	classSpace
	classWord  // starts or continues a word: letters, _, non-ASCII
	classDigit // continues a word: digits, $
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			t[c] = classSpace
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			t[c] = classWord
		case c >= '0' && c <= '9' || c == '$':
			t[c] = classDigit
		}
	}
	return t
}()

func isWordStart(c byte) bool { return byteClass[c] == classWord }

func isWordByte(c byte) bool { return byteClass[c] >= classWord }

// skipComment returns the offset after the (nested) block comment at i.
func skipComment(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch {
		case s[i] == '/' && i+1 < len(s) && s[i+1] == '*':
			depth++
			i += 2
		case s[i] == '*' && i+1 < len(s) && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

// skipString returns the offset after the string constant whose opening
// quote is at i (” is a quote; with backslash, \x escapes x).
func skipString(s string, i int, backslash bool) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if backslash {
				j++
			}
		case '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// dollarTagLen returns the length of the dollar-quote delimiter ($$ or
// $tag$) at i, or 0 when there is none ($1 is a parameter).
func dollarTagLen(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] != '$' && !isWordStart(s[j]) {
		return 0
	}
	for j < len(s) && s[j] != '$' {
		if !isWordByte(s[j]) {
			return 0
		}
		j++
	}
	if j >= len(s) {
		return 0
	}
	return j + 1 - i
}

// statementWords and nameWords are the keywords of the model
// (effects.Keywords) that count as the first word of a statement
// (StartsChange) and as a word anywhere (NamesChange); advisoryPrefixes
// start the names of advisory lock functions (PrefixesChange).
var (
	statementWords   = byLength(effects.Keywords(effects.StartsChange))
	nameWords        = byLength(effects.Keywords(effects.NamesChange))
	advisoryPrefixes = effects.Keywords(effects.PrefixesChange)
)

// minPrefixed is the length of the shortest word that advisoryPrefixes
// count in, pg_advisory_lock's.
const minPrefixed = len("pg_advisory_lock")

// leadingWord reports whether w, the first word of a statement, is the
// keyword of a statement that may change session state.
func leadingWord(w string) bool { return statementWords.may(w) && statementWords.equal(w) }

// anywhereWord reports whether w, anywhere in a statement, names a
// function or object that may change session state.
func anywhereWord(w string) bool {
	if nameWords.may(w) && nameWords.equal(w) {
		return true
	}
	if len(w) < minPrefixed || w[0]|0x20 != 'p' {
		return false
	}
	for _, p := range advisoryPrefixes {
		if hasPrefixFold(w, p) && !hasPrefixFold(w[len(p):], "xact") {
			return true
		}
	}
	return false
}

// wordsByLength holds lower-case ASCII words by length, for a look-up
// that rejects most words with one test of their length and first
// letter, and compares the others with the words of their length only.
// Lengths are taken modulo 32, which the comparison makes exact.
type wordsByLength struct {
	// first[n] has bit c-'a' set when a word of length n starts with c.
	first [32]uint32
	words [32][]string
}

func byLength(words []string) *wordsByLength {
	t := new(wordsByLength)
	for _, w := range words {
		t.first[len(w)&31] |= 1 << (w[0] - 'a')
		t.words[len(w)&31] = append(t.words[len(w)&31], w)
	}
	return t
}

// may reports whether t has a word of w's length and first letter: a
// first byte that is no letter shifts out every bit that is set. may and
// then equal tell whether w is one of t's words, in any case.
func (t *wordsByLength) may(w string) bool {
	return len(w) > 0 && t.first[len(w)&31]>>((w[0]|0x20)-'a')&1 != 0
}

// equal compares w with t's words of its length. They are ASCII, so a
// word of the same length matches only ASCII bytes.
func (t *wordsByLength) equal(w string) bool {
	for _, k := range t.words[len(w)&31] {
		if strings.EqualFold(w, k) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
