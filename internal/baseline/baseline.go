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
	var bb Builder
	bb.Add(findings)
	return bb.File()
}

// Builder makes a baseline from findings that arrive in batches, in the
// order the analyzer sorts them (a scan's files one after the other).
type Builder struct {
	entries []analyzer.BaselineEntry
	seen    map[key]int
}

// Add records a batch of findings.
func (bb *Builder) Add(findings []analyzer.Finding) {
	if bb.seen == nil {
		bb.seen = map[key]int{}
	}
	for _, f := range findings {
		k := keyOf(f)
		bb.seen[k]++
		bb.entries = append(bb.entries, analyzer.BaselineEntry{Rule: k.rule, File: k.file, Fingerprint: k.fingerprint, Occurrence: bb.seen[k]})
	}
}

// File returns the baseline of every finding added.
func (bb *Builder) File() *File {
	b := &File{Version: Version, Tool: "pgpoolcheck", Entries: bb.entries}
	if b.Entries == nil {
		b.Entries = []analyzer.BaselineEntry{}
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
	m := b.Matcher()
	kept = m.Filter(findings)
	return kept, m.Hidden(), m.Stale()
}

// Matcher hides the findings of a baseline from findings that arrive in
// batches, in the order the analyzer sorts them; the result is the same as
// Filter over all of them.
type Matcher struct {
	entries      []analyzer.BaselineEntry
	budget, used map[key]int
	hidden       int
}

// Matcher starts matching findings against b.
func (b *File) Matcher() *Matcher {
	m := &Matcher{entries: b.Entries, budget: map[key]int{}, used: map[key]int{}}
	for _, e := range b.Entries {
		m.budget[key{e.Rule, cleanPath(e.File), e.Fingerprint}]++
	}
	return m
}

// Filter returns the findings of a batch that the baseline does not hold
// (a new slice; never nil).
func (m *Matcher) Filter(findings []analyzer.Finding) []analyzer.Finding {
	kept := []analyzer.Finding{}
	for _, f := range findings {
		k := keyOf(f)
		if m.used[k] < m.budget[k] {
			m.used[k]++
			m.hidden++
			continue
		}
		kept = append(kept, f)
	}
	return kept
}

// Hidden returns how many findings the baseline has hidden so far.
func (m *Matcher) Hidden() int { return m.hidden }

// Stale returns the baseline entries that matched none of the findings
// filtered so far.
func (m *Matcher) Stale() []analyzer.BaselineEntry {
	var stale []analyzer.BaselineEntry
	for _, e := range m.entries {
		k := key{e.Rule, cleanPath(e.File), e.Fingerprint}
		if e.Occurrence > m.used[k] {
			stale = append(stale, e)
		}
	}
	return stale
}
