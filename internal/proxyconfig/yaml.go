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

	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/yamlpos"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
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
		return nil, yamlpos.Error(b, err)
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
		f := pooler.LookupSetting(k.Value)
		if f == nil {
			return nil, fmt.Errorf("line %d: unknown key %q%s (known keys: %s)", k.Line, k.Value, suggest.Hint(k.Value, Keys()), strings.Join(Keys(), ", "))
		}
		if prev, dup := seen[f.Name]; dup {
			return nil, fmt.Errorf("line %d: %s is already set on line %d", k.Line, k.Value, prev)
		}
		seen[f.Name] = k.Line
		if k.Value != f.Name {
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: %s is deprecated: write %s (config keys are snake_case, as in pgbouncer.ini)", k.Line, k.Value, f.Name))
		}
		if err := s.setYAML(f, v); err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
	}
	return s, nil
}

// setYAML sets setting f from YAML node v, through the table.
func (s *Settings) setYAML(f *pooler.Setting, v *yaml.Node) error {
	var val any
	switch f.Kind {
	case pooler.KindList, pooler.KindDatabases, pooler.KindPeers:
		if f.Kind == pooler.KindDatabases && v.Kind == yaml.MappingNode {
			dbs, err := yamlDatabases(v)
			if err != nil {
				return err
			}
			val = dbs
			break
		}
		var list []string
		switch {
		case v.Kind == yaml.SequenceNode:
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
					return fmt.Errorf("line %d: want a list of names", item.Line)
				}
				list = append(list, item.Value)
			}
		case v.Kind == yaml.MappingNode && f.Kind == pooler.KindPeers:
			// peers: {1: host:port, …}: the list's ID=HOST:PORT entries.
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, val := v.Content[i], v.Content[i+1]
				if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
					return fmt.Errorf("line %d: want peer id: host:port", k.Line)
				}
				list = append(list, k.Value+"="+val.Value)
			}
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
			list = pooler.SplitList(v.Value) // "a, b", as in pgbouncer.ini
		default:
			return errors.New("want a list of names")
		}
		switch f.Kind {
		case pooler.KindDatabases:
			dbs, err := pooler.ParseDatabases(list)
			if err != nil {
				return err
			}
			val = dbs
		case pooler.KindPeers:
			peers, err := pooler.ParsePeers(list)
			if err != nil {
				return err
			}
			val = peers
		default:
			if list == nil {
				list = []string{}
			}
			val = list
		}
	default:
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return errors.New("want a single value")
		}
		switch f.Kind {
		case pooler.KindString:
			if v.Tag != "!!str" {
				return fmt.Errorf("want a string, not %s", v.Value)
			}
			str := v.Value
			if len(f.Enum) > 0 {
				str = strings.ToLower(str)
			}
			val = str
		case pooler.KindInt:
			if v.Tag != "!!int" {
				return fmt.Errorf("want a whole number, not %q", v.Value)
			}
			n, err := strconv.ParseInt(v.Value, 0, 64)
			if err != nil || n < int64(f.Min) || n > f.MaxInt() {
				return fmt.Errorf("want a whole number from %d, not %s", f.Min, v.Value)
			}
			val = int(n)
		case pooler.KindDuration:
			if v.Tag != "!!int" && v.Tag != "!!float" && v.Tag != "!!str" {
				return fmt.Errorf("want a duration, not %q", v.Value)
			}
			d, err := pooler.ParseDuration(v.Value)
			if err != nil {
				return err
			}
			val = d
		case pooler.KindBool:
			if v.Tag != "!!bool" {
				return fmt.Errorf("want true or false, not %q", v.Value)
			}
			var b bool
			if err := v.Decode(&b); err != nil {
				return err
			}
			val = b
		}
	}
	if err := f.Check(val); err != nil {
		return err
	}
	s.put(f, val)
	return nil
}

// yamlDatabases reads the mapping form of databases, one entry per name
// (any name, "," and ":" included):
//
//	databases:
//	  app: {}
//	  reports: {dbname: analytics, pool_size: 5, max_db_connections: 8}
//	  "*": {auth_user: pgbouncer}
func yamlDatabases(v *yaml.Node) ([]pooler.DatabaseEntry, error) {
	var dbs []pooler.DatabaseEntry
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, fmt.Errorf("line %d: want a database name", k.Line)
		}
		e := pooler.DatabaseEntry{Name: k.Value}
		switch {
		case val.Kind == yaml.ScalarNode && (val.Tag == "!!null" || val.Value == ""):
		case val.Kind == yaml.MappingNode:
			var fields struct {
				DBName           string `yaml:"dbname"`
				PoolSize         int    `yaml:"pool_size"`
				MaxDBConnections int    `yaml:"max_db_connections"`
				AuthUser         string `yaml:"auth_user"`
				AuthDBName       string `yaml:"auth_dbname"`
				AuthQuery        string `yaml:"auth_query"`
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				switch key := val.Content[j].Value; key {
				case "dbname", "pool_size", "max_db_connections", "auth_user", "auth_dbname", "auth_query":
				default:
					return nil, fmt.Errorf("line %d: database %s: unknown key %q (want dbname, pool_size, max_db_connections, auth_user, auth_dbname or auth_query)", val.Content[j].Line, k.Value, key)
				}
			}
			if err := val.Decode(&fields); err != nil {
				return nil, fmt.Errorf("line %d: database %s: %v", val.Line, k.Value, strings.TrimPrefix(err.Error(), "yaml: "))
			}
			if fields.DBName != k.Value {
				e.DBName = fields.DBName
			}
			e.PoolSize, e.MaxDBConnections = fields.PoolSize, fields.MaxDBConnections
			e.AuthUser, e.AuthDBName, e.AuthQuery = fields.AuthUser, fields.AuthDBName, fields.AuthQuery
		default:
			return nil, fmt.Errorf("line %d: database %s: want a mapping of dbname, pool_size, …", val.Line, k.Value)
		}
		dbs = append(dbs, e)
	}
	return dbs, nil
}
