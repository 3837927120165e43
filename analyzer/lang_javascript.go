package analyzer

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// This file holds what scan knows of JavaScript and TypeScript:
// node-postgres's named queries. Its lexer and recognisers are in
// internal/extract/javascript.go.

var (
	// nodeQueryObject is .query({ … }: node-postgres's query config object.
	nodeQueryObject = regexp.MustCompile(`\.query\s*\(\s*\{`)
	// nodeName is the name key of a query config object.
	nodeName = regexp.MustCompile(`(?:^|[{,\s])name\s*:\s*$`)
	// nodeText is its text key.
	nodeText = regexp.MustCompile(`(?:^|[{,\s])text\s*:`)
)

// nodeNamedQueries checks node-postgres's named queries.
func (s *settingsCheck) nodeNamedQueries(src []byte, lits []extract.Literal, comments []extract.Comment) {
	if !bytes.Contains(src, []byte(".query")) || !bytes.Contains(src, []byte("name")) {
		return
	}
	code := extract.CodeMask(src, lits, comments)
	for _, m := range nodeQueryObject.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		open := m[1] - 1
		shut := matchBrace(src, code, open)
		if !nodeText.Match(maskedText(src, code, open, shut)) {
			continue
		}
		for i := range lits {
			l := &lits[i]
			if l.Start <= open || l.End > shut || !nodeName.Match(src[open:l.Start]) || depthBetween(src, code, open, l.Start) != 1 {
				continue
			}
			if strings.TrimSpace(l.Value) == "" {
				continue // an empty name is the unnamed statement
			}
			p := param{lit: l, key: "name", value: l.Value, start: 0, end: len(l.Value), valueAt: func(i int) int { return i },
				text: fmt.Sprintf("query({ name: %q, … })", l.Value)}
			s.setting(p, "node-postgres.name", rules.SettingUse{Value: l.Value})
		}
	}
}
