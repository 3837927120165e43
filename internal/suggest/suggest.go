// Package suggest finds the known word a mistyped one was probably meant
// to be, for "did you mean" hints in error messages.
package suggest

import "strings"

// Closest returns the candidate nearest to word (case-insensitive edit
// distance, with '-' and '_' alike) when it is near enough to be a typo:
// at most 2 edits, and at most a third of the word's length.
func Closest(word string, candidates []string) (string, bool) {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	w := norm(word)
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(w, norm(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := min(2, max(1, len(w)/3))
	if bestD < 0 || bestD > limit || w == "" {
		return "", false
	}
	return best, true
}

// Hint is Closest as " (did you mean X?)", or "" when nothing is close.
func Hint(word string, candidates []string) string {
	if c, ok := Closest(word, candidates); ok {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// distance is the Levenshtein distance of a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
