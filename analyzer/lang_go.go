package analyzer

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// This file holds what scan knows of Go: pgx's RuntimeParams, which pgx
// sends as startup parameters. Its lexer and recognisers are in
// internal/extract/golang.go.

var (
	// runtimeParamsIndex is RuntimeParams[ before a key literal.
	runtimeParamsIndex = regexp.MustCompile(`\bRuntimeParams\s*\[\s*$`)
	// runtimeParamsMap is RuntimeParams: map[string]string{ or
	// RuntimeParams = map[string]string{.
	runtimeParamsMap = regexp.MustCompile(`\bRuntimeParams\s*(?::|=|:=)\s*map\[string\]string\s*\{`)
)

// goRuntimeParams checks pgx's RuntimeParams.
func (s *settingsCheck) goRuntimeParams(src []byte, lits []extract.Literal, comments []extract.Comment) {
	if !bytes.Contains(src, []byte("RuntimeParams")) {
		return
	}
	code := extract.CodeMask(src, lits, comments)
	keyed := map[int]bool{} // literal starts that are map keys
	for _, m := range runtimeParamsMap.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		open := m[1] - 1
		shut := matchBrace(src, code, open)
		for i := range lits {
			l := &lits[i]
			if l.Start > open && l.End <= shut && bytes.HasPrefix(bytes.TrimLeft(src[l.End:shut], " \t\r\n"), []byte(":")) {
				keyed[l.Start] = true
			}
		}
	}
	for i := range lits {
		l := &lits[i]
		lineStart := bytes.LastIndexByte(src[:l.Start], '\n') + 1
		index := runtimeParamsIndex.Match(src[lineStart:l.Start])
		if !index && !keyed[l.Start] {
			continue
		}
		if index && !bytes.HasPrefix(bytes.TrimLeft(src[l.End:], " \t"), []byte("]")) {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(l.Value))
		if name == "" || strings.Contains(name, extract.Placeholder) {
			continue
		}
		p := param{lit: l, key: name, start: 0, end: len(l.Value), valueAt: func(i int) int { return i },
			text: fmt.Sprintf("RuntimeParams[%q]", l.Value)}
		s.setting(p, "pgx.RuntimeParams", rules.SettingUse{Key: l.Value, Param: name})
	}
}
