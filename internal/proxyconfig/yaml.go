package proxyconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// LoadYAML reads a pgpoolcheck proxy config file. Relative auth_file and
// capture paths are made relative to the file's directory.
func LoadYAML(path string) (*Settings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseYAML(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.resolvePaths(filepath.Dir(path))
	return s, nil
}

// ParseYAML reads config text. An empty document sets nothing.
func ParseYAML(b []byte) (*Settings, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Settings{}, nil
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: more than one YAML document", extra.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return &Settings{}, nil
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return &Settings{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the config must be a mapping of keys to values", root.Line)
	}
	s := &Settings{}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		f, ok := lookupField(k.Value)
		if !ok {
			return nil, fmt.Errorf("line %d: unknown key %q%s (known keys: %s)", k.Line, k.Value, suggest.Hint(k.Value, Keys()), strings.Join(Keys(), ", "))
		}
		if prev, dup := seen[f.key]; dup {
			return nil, fmt.Errorf("line %d: %s is already set on line %d", k.Line, k.Value, prev)
		}
		seen[f.key] = k.Line
		if k.Value != f.key {
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: %s is deprecated: write %s (config keys are snake_case, as in pgbouncer.ini)", k.Line, k.Value, f.key))
		}
		if err := s.setYAML(f, v); err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
	}
	return s, nil
}

// setYAML sets field f from YAML node v.
func (s *Settings) setYAML(f field, v *yaml.Node) error {
	if f.kind == kindList {
		var list []string
		switch {
		case v.Kind == yaml.SequenceNode:
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
					return fmt.Errorf("line %d: want a list of names", item.Line)
				}
				list = append(list, item.Value)
			}
		case v.Kind == yaml.MappingNode && f.key == "peers":
			// peers: {1: host:port, …}: the list's ID=HOST:PORT entries.
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, val := v.Content[i], v.Content[i+1]
				if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
					return fmt.Errorf("line %d: want peer id: host:port", k.Line)
				}
				list = append(list, k.Value+"="+val.Value)
			}
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
			list = splitList(v.Value) // "a, b", as in pgbouncer.ini
		default:
			return errors.New("want a list of names")
		}
		*f.ptr(s).(**[]string) = &list
		return nil
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return errors.New("want a single value")
	}
	switch p := f.ptr(s).(type) {
	case **string:
		if v.Tag != "!!str" {
			return fmt.Errorf("want a string, not %s", v.Value)
		}
		if err := f.checkEnum(v.Value); err != nil {
			return err
		}
		val := v.Value
		if len(f.enum) > 0 {
			val = strings.ToLower(val)
		}
		*p = &val
	case **int:
		if v.Tag != "!!int" {
			return fmt.Errorf("want a whole number, not %q", v.Value)
		}
		n, err := strconv.ParseInt(v.Value, 0, 64)
		if err != nil || n < int64(f.min) || n > 1<<31-1 {
			return fmt.Errorf("want a whole number from %d, not %s", f.min, v.Value)
		}
		*p = ptrTo(int(n))
	case **time.Duration:
		if v.Tag != "!!int" && v.Tag != "!!float" && v.Tag != "!!str" {
			return fmt.Errorf("want a duration, not %q", v.Value)
		}
		d, err := parseDuration(v.Value)
		if err != nil {
			return err
		}
		*p = &d
	case **bool:
		if v.Tag != "!!bool" {
			return fmt.Errorf("want true or false, not %q", v.Value)
		}
		var b bool
		if err := v.Decode(&b); err != nil {
			return err
		}
		*p = &b
	}
	return nil
}

// resolvePaths makes relative file paths relative to dir.
func (s *Settings) resolvePaths(dir string) {
	for _, f := range fields {
		if !f.isPath {
			continue
		}
		p := f.ptr(s).(**string)
		if *p != nil && **p != "" && !filepath.IsAbs(**p) {
			*p = ptrTo(filepath.Join(dir, **p))
		}
	}
}

// splitList splits a comma-separated list of names, dropping blanks.
func splitList(v string) []string {
	list := []string{}
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list
}
