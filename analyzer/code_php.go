package analyzer

import (
	"regexp"
	"strings"
)

// phpNotSQLCall reports whether a PHP literal passed to function name (as
// callee returns it) is text a test matches rather than a statement sent:
// the argument of a mock's with(…) (PHPUnit's and Mockery's expected
// arguments: $pdo->expects('prepare')->with('set search_path …')).
func phpNotSQLCall(name string) bool {
	return name == "with" || name == "withargs"
}

// phpFunction matches a PHP function declaration and captures its name.
var phpFunction = regexp.MustCompile(`\bfunction\s+&?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// phpDataProviders returns the source ranges of the PHPUnit data
// providers of a file (methods named provide… or …Provider, from their
// declaration to the next function's): the rows they return are a test's
// input and expected text, not statements sent.
func phpDataProviders(src []byte) [][2]int {
	if !strings.Contains(string(src), "rovide") {
		return nil
	}
	locs := phpFunction.FindAllSubmatchIndex(src, -1)
	var out [][2]int
	for i, m := range locs {
		name := strings.ToLower(string(src[m[2]:m[3]]))
		if !strings.HasPrefix(name, "provide") && !strings.HasSuffix(name, "provider") {
			continue
		}
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, [2]int{m[0], end})
	}
	return out
}
