package pooler

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSettingsTable: every entry of the settings table is consistent:
// unique names, a default its own check takes and that reaches its field
// and comes back, text that parses back to the value, and defaults that
// make a valid configuration.
func TestSettingsTable(t *testing.T) {
	names := map[string]bool{}
	ini := map[string]bool{}
	for _, s := range Settings() {
		for _, n := range []string{s.Name, s.ShowAs} {
			if n != "" && names[n] {
				t.Errorf("%s: name %s used twice", s.Name, n)
			}
			names[n] = true
		}
		if s.INI != "" && ini[s.INI] {
			t.Errorf("%s: pgbouncer.ini key %s used twice", s.Name, s.INI)
		}
		ini[s.INI] = true
		if s.Default == nil {
			t.Errorf("%s: no default", s.Name)
			continue
		}
		if err := s.Check(s.Default); err != nil {
			t.Errorf("%s: default %v: %v", s.Name, s.Default, err)
		}
		var c Config
		s.Put(&c, s.Default)
		if got := s.Get(&c); !reflect.DeepEqual(got, s.Default) {
			t.Errorf("%s: Put(%#v) then Get = %#v", s.Name, s.Default, got)
		}
		if text := s.Format(s.Default); text != "" {
			v, err := s.Parse(text)
			if err != nil || !reflect.DeepEqual(v, s.Default) {
				t.Errorf("%s: Parse(%q) = %#v, %v; want %#v", s.Name, text, v, err, s.Default)
			}
		}
	}
	d := (&Config{}).withDefaults()
	if err := checkSettings(&d); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if d.PoolSize != 20 || d.ServerLifetime != time.Hour || d.MaxPreparedStatements != 200 || d.Listen != "" {
		t.Errorf("defaults: pool size %d, lifetime %s, prepared %d, listen %q", d.PoolSize, d.ServerLifetime, d.MaxPreparedStatements, d.Listen)
	}
}

// TestSettingParse: values as the command line and SET write them.
func TestSettingParse(t *testing.T) {
	for _, tc := range []struct {
		key, text string
		want      any
		err       string
	}{
		{"pool_size", "7", 7, ""},
		{"pool_size", "0", nil, "whole number from 1"},
		{"server_lifetime", "90", 90 * time.Second, ""},
		{"server_lifetime", "2m", 2 * time.Minute, ""},
		{"server_lifetime", "0", nil, "positive"},
		{"query_timeout", "0", time.Duration(0), ""},
		{"query_timeout", "soon", nil, "number of seconds"},
		{"mode", "Session", "session", ""},
		{"mode", "statement", nil, `unknown value "statement"`},
		{"admin_users", " a, ,b ", []string{"a", "b"}, ""},
		{"databases", "app,reports=analytics:5:8", []DatabaseEntry{{Name: "app"}, {Name: "reports", Database: Database{DBName: "analytics", PoolSize: 5, MaxDBConnections: 8}}}, ""},
		{"databases", "app,app", nil, "listed twice"},
		{"databases", "pgbouncer", nil, "admin console"},
		{"databases", "a?auth_dbname=b", nil, "auth dbname b is not a database entry"},
		{"peers", "2=b:1,1=a:1", map[int]string{1: "a:1", 2: "b:1"}, ""},
		{"peer_id", "16384", nil, "peer id from 1 to"},
		{"max_prepared_statements", "0", 0, ""},
		{"capture_max_bytes", "10000000000", 10000000000, ""},
		{"max_client_conn", "3000000000", nil, "whole number from 1"},
	} {
		v, err := LookupSetting(tc.key).Parse(tc.text)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: %v, %v; want an error with %q", tc.key, tc.text, v, err, tc.err)
			}
		case err != nil || !reflect.DeepEqual(v, tc.want):
			t.Errorf("%s %q: %#v, %v; want %#v", tc.key, tc.text, v, err, tc.want)
		}
	}
	var c Config
	LookupSetting("max_prepared_statements").Put(&c, 0)
	if c.MaxPreparedStatements != -1 {
		t.Errorf("max_prepared_statements 0 put as %d, want -1 (off)", c.MaxPreparedStatements)
	}
}
