package effects

import (
	"slices"
	"strings"
	"testing"
)

// TestKeywords: the list is lower-case, names each word once, and gives
// each a use; InContext words are InText words too, and the names whose
// use changes session state hold an InText word (the rules report those
// changes).
func TestKeywords(t *testing.T) {
	inText := Keywords(InText)
	seen := map[string]bool{}
	for _, k := range keywords {
		if k.word == "" || k.word != strings.ToLower(k.word) || seen[k.word] || k.use == 0 {
			t.Errorf("keyword %q (use %b): empty, not lower-case, listed twice or unused", k.word, k.use)
		}
		seen[k.word] = true
		if k.use&InContext != 0 && k.use&InText == 0 {
			t.Errorf("keyword %q counts for context but not in text", k.word)
		}
		if k.use&(NamesChange|PrefixesChange) != 0 && !slices.ContainsFunc(inText, func(w string) bool { return strings.Contains(k.word, w) }) {
			t.Errorf("name %q changes session state but holds no InText keyword", k.word)
		}
	}
	if got := Keywords(PrefixesChange); strings.Join(got, " ") != "pg_advisory_ pg_try_advisory_" {
		t.Errorf("Keywords(PrefixesChange) = %q", got)
	}
}
