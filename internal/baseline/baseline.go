// Package baseline records today's findings so that a later scan reports
// only new ones. A finding is keyed by rule, file and the pg_query
// fingerprint of its statement (the same for statements that differ only
// in constants, whitespace and comments), plus an occurrence number for
// equal keys, so findings survive moved lines and reformatting.
package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

// Version is the baseline file format version.
const Version = 1

// File is a baseline file.
type File struct {
	Version int                      `json:"version"`
	Tool    string                   `json:"tool"`
	Entries []analyzer.BaselineEntry `json:"entries"`
}

// key identifies a finding for baseline purposes.
type key struct{ rule, file, fingerprint string }

func keyOf(f analyzer.Finding) key {
	fp := f.Fingerprint
	if fp == "" {
		// Statements that do not parse, ignore directives: hash the text.
		text := f.Statement
		if text == "" {
			text = f.SourceLine
		}
		sum := sha256.Sum256([]byte(strings.Join(strings.Fields(text), " ") + "\x00" + f.Message))
		fp = "text:" + hex.EncodeToString(sum[:8])
	}
	return key{f.Rule, cleanPath(f.File), fp}
}

func cleanPath(p string) string { return filepath.ToSlash(filepath.Clean(p)) }

// Build makes a baseline of findings (sorted as the analyzer sorts them).
func Build(findings []analyzer.Finding) *File {
	b := &File{Version: Version, Tool: "pgpoolcheck", Entries: []analyzer.BaselineEntry{}}
	seen := map[key]int{}
	for _, f := range findings {
		k := keyOf(f)
		seen[k]++
		b.Entries = append(b.Entries, analyzer.BaselineEntry{Rule: k.rule, File: k.file, Fingerprint: k.fingerprint, Occurrence: seen[k]})
	}
	return b
}

// Write stores b at path.
func (b *File) Write(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Load reads a baseline file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b File
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: not a pgpoolcheck baseline: %v", path, err)
	}
	if b.Version != Version {
		return nil, fmt.Errorf("%s: baseline version %d, this pgpoolcheck reads version %d", path, b.Version, Version)
	}
	return &b, nil
}

// Filter hides the findings the baseline holds. It returns the findings
// to report, how many were hidden, and the baseline entries that matched
// nothing (fixed or changed code: the baseline can be rewritten).
func (b *File) Filter(findings []analyzer.Finding) (kept []analyzer.Finding, hidden int, stale []analyzer.BaselineEntry) {
	budget := map[key]int{}
	for _, e := range b.Entries {
		budget[key{e.Rule, cleanPath(e.File), e.Fingerprint}]++
	}
	used := map[key]int{}
	kept = []analyzer.Finding{}
	for _, f := range findings {
		k := keyOf(f)
		if used[k] < budget[k] {
			used[k]++
			hidden++
			continue
		}
		kept = append(kept, f)
	}
	for _, e := range b.Entries {
		k := key{e.Rule, cleanPath(e.File), e.Fingerprint}
		if e.Occurrence > used[k] {
			stale = append(stale, e)
		}
	}
	return kept, hidden, stale
}
