// Package config reads .pgpoolcheck.yaml: the scan settings a repository
// keeps next to its code. Command-line flags override it.
//
//	target: pgbouncer          # generic, pgbouncer, pgbouncer-legacy, pgdog, rds-proxy, pgpoolcheck
//	fail-on: error             # critical, error, warning, info, never
//	rules:                     # per rule: off, info, warning, error or critical
//	  backend-pid: off
//	  session-load: error
//	include: ["db/**"]         # globs (** allowed), relative to the config file's directory
//	exclude: ["db/legacy/**"]
//	languages: [sql]           # which kinds of files directory walks pick up ("config": .env, properties, YAML, appsettings.json)
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/yamlpos"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"go.yaml.in/yaml/v3"
)

// FileName is the name searched for; FileNameAlt is accepted too.
const (
	FileName    = ".pgpoolcheck.yaml"
	FileNameAlt = ".pgpoolcheck.yml"
)

// Config is the content of a config file.
type Config struct {
	Target    string            `yaml:"target"`
	FailOn    string            `yaml:"fail_on"`
	Rules     map[string]string `yaml:"rules"`
	Include   []string          `yaml:"include"`
	Exclude   []string          `yaml:"exclude"`
	Languages []string          `yaml:"languages"`

	// Path is the file it was read from; Dir its directory, the base of
	// include and exclude globs.
	Path string `yaml:"-"`
	Dir  string `yaml:"-"`
	// Severity holds the rules whose severity is overridden; Disabled the
	// rules turned off.
	Severity map[string]rules.Severity `yaml:"-"`
	Disabled map[string]bool           `yaml:"-"`
	// Warnings are deprecated spellings the file used, one line each.
	Warnings []string `yaml:"-"`
}

// keys are the keys a config file may set. Keys are snake_case, as in the
// proxy's YAML config and pgbouncer.ini; the spelling with "-" (fail-on)
// is accepted with a warning.
var keys = []string{"target", "fail_on", "rules", "include", "exclude", "languages"}

// unknownField matches the YAML library's message for an unknown key.
var unknownField = regexp.MustCompile(`^(line \d+): field (\S+) not found in type .*$`)

// describeTypeError turns the YAML library's errors into one line that
// speaks of keys, not Go types.
func describeTypeError(te *yaml.TypeError) string {
	var parts []string
	for _, e := range te.Errors {
		if m := unknownField.FindStringSubmatch(e); m != nil {
			parts = append(parts, fmt.Sprintf("%s: unknown key %q%s (known keys: %s)", m[1], m[2], suggest.Hint(m[2], keys), strings.Join(keys, ", ")))
			continue
		}
		parts = append(parts, strings.ReplaceAll(e, "config.Config", "config"))
	}
	return strings.Join(parts, "; ")
}

// Find looks for a config file in dir and its parents. It returns "" when
// there is none.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		for _, name := range []string{FileName, FileNameAlt} {
			p := filepath.Join(dir, name)
			if info, err := os.Stat(p); err == nil && !info.IsDir() {
				return p, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Load reads and checks a config file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	c.Path = path
	c.Dir = filepath.Dir(abs)
	return c, nil
}

// Languages a walk can pick up.
var knownLanguages = []string{"sql", "go", "python", "ruby", "javascript", "typescript", "java", "kotlin", "elixir", "php", "rust", "csharp", "config"}

// Parse reads config text: unknown keys, rule ids, severities, targets and
// languages are errors.
func Parse(b []byte) (*Config, error) {
	c := &Config{}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlpos.Error(b, err)
	}
	at := nodeLines(&doc)
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if snake := strings.ReplaceAll(k.Value, "-", "_"); snake != k.Value && slices.Contains(keys, snake) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: %s is deprecated: write %s (config keys are snake_case, as in the proxy's config)", k.Line, k.Value, snake))
				k.Value = snake
			}
			if !slices.Contains(keys, k.Value) {
				return nil, fmt.Errorf("line %d: unknown key %q%s (known keys: %s)", k.Line, k.Value, suggest.Hint(k.Value, keys), strings.Join(keys, ", "))
			}
		}
	}
	var err error
	if len(doc.Content) > 0 {
		err = doc.Decode(c)
	}
	if err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, errors.New(describeTypeError(te))
		}
		return nil, yamlpos.Error(b, err)
	}
	if c.Target != "" {
		if _, err := rules.ParseTarget(c.Target); err != nil {
			return nil, fmt.Errorf("%starget: %v", at.key("target"), err)
		}
	}
	if c.FailOn != "" && !strings.EqualFold(c.FailOn, "never") {
		if _, err := rules.ParseSeverity(c.FailOn); err != nil {
			return nil, fmt.Errorf("%sfail_on: %v (or never)", at.key("fail_on"), err)
		}
	}
	c.Severity = map[string]rules.Severity{}
	c.Disabled = map[string]bool{}
	for id, v := range c.Rules {
		if rules.Lookup(id) == nil {
			return nil, fmt.Errorf("%srules: unknown rule %q%s (see pgpoolcheck rules)", at.entry("rules", id), id, suggest.Hint(id, rules.IDs()))
		}
		if strings.EqualFold(v, "off") || strings.EqualFold(v, "false") {
			c.Disabled[id] = true
			continue
		}
		sev, err := rules.ParseSeverity(v)
		if err != nil {
			return nil, fmt.Errorf("%srules: %s: %q is not off, info, warning, error or critical", at.entry("rules", id), id, v)
		}
		c.Severity[id] = sev
	}
	for _, key := range []string{"include", "exclude"} {
		globs := c.Include
		if key == "exclude" {
			globs = c.Exclude
		}
		for i, g := range globs {
			if !doublestar.ValidatePattern(g) {
				return nil, fmt.Errorf("%s%s: bad glob %q", at.item(key, i), key, g)
			}
		}
	}
	for i, l := range c.Languages {
		ok := false
		for _, k := range knownLanguages {
			if strings.EqualFold(l, k) {
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("%slanguages: unknown language %q (want %s)", at.item("languages", i), l, strings.Join(knownLanguages, ", "))
		}
	}
	return c, nil
}

// lines finds the lines of a config document's values, for errors.
type lines struct{ top map[string]*yaml.Node }

// nodeLines indexes the top-level keys of doc.
func nodeLines(doc *yaml.Node) lines {
	l := lines{top: map[string]*yaml.Node{}}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			l.top[m.Content[i].Value] = m.Content[i+1]
		}
	}
	return l
}

// prefix is "line N: " for a node, "" for none.
func prefix(n *yaml.Node) string {
	if n == nil || n.Line == 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", n.Line)
}

// key is the prefix of the value of a top-level key.
func (l lines) key(k string) string { return prefix(l.top[k]) }

// entry is the prefix of the entry name of the mapping under k (a rule
// under rules).
func (l lines) entry(k, name string) string {
	if m := l.top[k]; m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == name {
				return prefix(m.Content[i])
			}
		}
	}
	return l.key(k)
}

// item is the prefix of item i of the sequence under k.
func (l lines) item(k string, i int) string {
	if s := l.top[k]; s != nil && s.Kind == yaml.SequenceNode && i < len(s.Content) {
		return prefix(s.Content[i])
	}
	return l.key(k)
}

// Selects reports whether a file found by walking a directory is scanned:
// it matches an include glob (or there are none) and no exclude glob.
// Globs are relative to the config file's directory; files outside it are
// judged by their path as given.
func (c *Config) Selects(path string) bool {
	if c == nil || (len(c.Include) == 0 && len(c.Exclude) == 0) {
		return true
	}
	if len(c.Include) > 0 && !c.matches(c.Include, path) {
		return false
	}
	return !c.matches(c.Exclude, path)
}

// matches reports whether path (relative to the config file's directory
// when it is below it) matches one of globs, a glob naming a directory
// covering what is below it.
func (c *Config) matches(globs []string, path string) bool {
	rel := filepath.ToSlash(path)
	if abs, err := filepath.Abs(path); err == nil && c.Dir != "" {
		if r, err := filepath.Rel(c.Dir, abs); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
	}
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
		// A pattern naming a directory covers what is below it.
		if ok, _ := doublestar.Match(strings.TrimSuffix(g, "/")+"/**", rel); ok {
			return true
		}
	}
	return false
}

// ExcludesDir reports whether an exclude glob covers the directory dir
// (path as walked) and so everything below it.
func (c *Config) ExcludesDir(dir string) bool {
	if c == nil || len(c.Exclude) == 0 {
		return false
	}
	return c.matches(c.Exclude, dir)
}

// Language reports whether walks pick up files of language l; with no
// languages configured, every language is on.
func (c *Config) Language(l string) bool {
	if c == nil || len(c.Languages) == 0 {
		return true
	}
	for _, k := range c.Languages {
		if strings.EqualFold(k, l) {
			return true
		}
	}
	return false
}
