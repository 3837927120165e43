package analyzer

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
)

// A framework's identity query is a statement the framework runs right
// after an INSERT of its own, in that INSERT's transaction, to read the
// key the INSERT generated: currval() or lastval() there reads this
// transaction's nextval(), which is safe behind a transaction pooler.

// identitySetters are the setters that take an identity query: Spring
// Security ACL's JdbcMutableAclService runs its class and SID identity
// queries after its INSERT, and refuses to run outside a transaction.
var identitySetters = map[string]bool{"setclassidentityquery": true, "setsididentityquery": true}

// selectKeyAfterRE matches the before = false argument of MyBatis's
// @SelectKey: the key statement runs after the INSERT, in its session's
// transaction.
var selectKeyAfterRE = regexp.MustCompile(`\bbefore\s*=\s*false\b`)

// identityQueries returns the ranges of a file that hold identity
// queries: the argument lists of the identity setters and of MyBatis
// @SelectKey annotations with before = false.
func identityQueries(src []byte, lits []extract.Literal, comments []extract.Comment) [][2]int {
	lower := bytes.ToLower(src)
	if !bytes.Contains(src, []byte("@SelectKey")) && !bytes.Contains(lower, []byte("identityquery")) {
		return nil
	}
	code := extract.CodeMask(src, lits, comments)
	var out [][2]int
	// argsAfter returns the argument list that opens at or after i
	// (blanks before it), or false.
	argsAfter := func(i int) ([2]int, bool) {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		if i >= len(src) || src[i] != '(' || !code[i] {
			return [2]int{}, false
		}
		end := extract.CloseParen(src, code, i)
		return [2]int{i, end}, end >= 0
	}
	for from := 0; ; {
		k := bytes.Index(src[from:], []byte("@SelectKey"))
		if k < 0 {
			break
		}
		k += from
		from = k + 1
		if !code[k] {
			continue
		}
		r, ok := argsAfter(k + len("@SelectKey"))
		if !ok {
			continue
		}
		var args strings.Builder
		for i := r[0]; i < r[1]; i++ {
			if code[i] {
				args.WriteByte(src[i])
			}
		}
		if selectKeyAfterRE.MatchString(args.String()) {
			out = append(out, r)
		}
	}
	for setter := range identitySetters {
		for from := 0; ; {
			k := bytes.Index(lower[from:], []byte(setter))
			if k < 0 {
				break
			}
			k += from
			from = k + 1
			if !code[k] || k > 0 && src[k-1] != '.' && src[k-1] != ' ' && src[k-1] != '\t' {
				continue
			}
			if r, ok := argsAfter(k + len(setter)); ok {
				out = append(out, r)
			}
		}
	}
	return out
}
