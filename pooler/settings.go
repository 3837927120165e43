package pooler

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// The proxy's settings table: one entry per setting, which drives the
// command line's flags, the YAML config, the pgbouncer.ini keys that map
// one to one, SHOW CONFIG, the console's SET and RELOAD. A setting's
// default and its validation are written here and nowhere else.

// PolicyOff is the on_session_state setting that turns the classification
// of statements off: Config.Classifier is then not used.
const PolicyOff Policy = "off"

// SettingKind is the type of a setting's value.
type SettingKind int

// The kinds of settings, with the Go type of their values.
const (
	KindString    SettingKind = iota // string
	KindInt                          // int
	KindDuration                     // time.Duration
	KindBool                         // bool
	KindList                         // []string
	KindDatabases                    // []DatabaseEntry
	KindPeers                        // map[int]string
)

// Change says when a setting's new value takes effect.
type Change int

const (
	// Restart: read at start only; RELOAD logs a change as needing a
	// restart and SET refuses it.
	Restart Change = iota
	// Reload: RELOAD (and SIGHUP) apply a new value while running.
	Reload
	// Live: RELOAD and the admin console's SET apply it.
	Live
)

// Setting is one entry of the settings table.
type Setting struct {
	// Name is the setting's key, in snake_case: the YAML key and SHOW
	// CONFIG's key; the flag is the name with "-" for "_".
	Name string
	Kind SettingKind
	// Default is the value when nothing sets it (nil for none).
	Default any
	// Usage is the flag's help.
	Usage string
	// Enum lists the values a string setting accepts ("" too when the
	// default is "").
	Enum []string
	// Min is the least value of an int setting; Max its greatest (0:
	// 1<<31-1, MaxInt).
	Min int
	Max int64
	// Change says whether RELOAD or SET may change it while running.
	Change Change
	// Path marks a file path: relative to the config file naming it.
	Path bool
	// INI is the pgbouncer.ini key that sets it as it is ("": none).
	INI string
	// ShowAs is SHOW CONFIG's key when it is not Name (PgBouncer's).
	ShowAs string
	// Hidden leaves the flag out of the command's help (a test knob).
	Hidden bool

	check  func(v any) error      // beyond Kind, Enum and Min
	ptr    func(c *Config) any    // the Config field, as a pointer of the kind's type
	get    func(c *Config) any    // instead of ptr, for a field of another type
	put    func(c *Config, v any) // instead of ptr
	show   func(c *Config) string // SHOW CONFIG's value, when not the text of Get
	zero   func(c *Config) bool   // the field is unset (withDefaults), when not its zero value
	keep   bool                   // withDefaults leaves an unset field alone
	zeroOK bool                   // a duration may be 0 (none)
}

// Settings returns the settings table, in the order of the flags.
func Settings() []*Setting { return settingTable }

// LookupSetting returns the setting named key (its Name, or the flag's
// spelling; case-insensitive), or nil.
func LookupSetting(key string) *Setting {
	key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "-", "_")
	for _, s := range settingTable {
		if s.Name == key {
			return s
		}
	}
	return nil
}

// lookupShown returns the setting SHOW CONFIG names key (or named so), or
// nil.
func lookupShown(key string) *Setting {
	if s := LookupSetting(key); s != nil {
		return s
	}
	for _, s := range settingTable {
		if s.ShowAs == key {
			return s
		}
	}
	return nil
}

// SettingNames returns every setting's name, in the order of the flags.
func SettingNames() []string {
	out := make([]string, len(settingTable))
	for i, s := range settingTable {
		out[i] = s.Name
	}
	return out
}

// MaxInt is the greatest value of an int setting.
func (s *Setting) MaxInt() int64 {
	if s.Max != 0 {
		return s.Max
	}
	return 1<<31 - 1
}

// FlagName is the setting's command-line flag: pool_size → pool-size.
func (s *Setting) FlagName() string { return strings.ReplaceAll(s.Name, "_", "-") }

// ShowName is the setting's key in SHOW CONFIG.
func (s *Setting) ShowName() string {
	if s.ShowAs != "" {
		return s.ShowAs
	}
	return s.Name
}

// Get returns the setting's value in c.
func (s *Setting) Get(c *Config) any {
	if s.get != nil {
		return s.get(c)
	}
	return reflect.ValueOf(s.ptr(c)).Elem().Interface()
}

// Put sets the setting's value in c; v has the kind's type.
func (s *Setting) Put(c *Config, v any) {
	if s.put != nil {
		s.put(c, v)
		return
	}
	reflect.ValueOf(s.ptr(c)).Elem().Set(reflect.ValueOf(v))
}

// unset reports whether c leaves the setting to its default.
func (s *Setting) unset(c *Config) bool {
	if s.zero != nil {
		return s.zero(c)
	}
	if s.ptr == nil {
		return false
	}
	return reflect.ValueOf(s.ptr(c)).Elem().IsZero()
}

// Parse reads the setting's value from text, as the command line, SET
// and the config files write it, and checks it.
func (s *Setting) Parse(text string) (any, error) {
	var v any
	switch s.Kind {
	case KindString:
		v = strings.TrimSpace(text)
		if len(s.Enum) > 0 {
			v = strings.ToLower(v.(string))
		}
	case KindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 0, 64)
		if err != nil || n < int64(s.Min) || n > s.MaxInt() {
			return nil, fmt.Errorf("%q is not a whole number from %d", text, s.Min)
		}
		v = int(n)
	case KindDuration:
		d, err := ParseDuration(text)
		if err != nil {
			return nil, err
		}
		v = d
	case KindBool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("%q: want true or false", text)
		}
		v = b
	case KindList:
		v = SplitList(text)
	case KindDatabases:
		dbs, err := ParseDatabases(SplitList(text))
		if err != nil {
			return nil, err
		}
		v = dbs
	case KindPeers:
		peers, err := ParsePeers(SplitList(text))
		if err != nil {
			return nil, err
		}
		v = peers
	}
	if err := s.Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// Check validates a value of the setting.
func (s *Setting) Check(v any) error {
	switch x := v.(type) {
	case string:
		if len(s.Enum) > 0 && !(x == "" && s.Default == "") && !slices.Contains(s.Enum, x) {
			return fmt.Errorf("unknown value %q (want %s)", x, OrList(s.Enum))
		}
	case int:
		if x < s.Min || int64(x) > s.MaxInt() {
			return fmt.Errorf("%d is not a whole number from %d to %d", x, s.Min, s.MaxInt())
		}
	case time.Duration:
		switch {
		case x < 0:
			return fmt.Errorf("negative duration %q", x)
		case x == 0 && !s.zeroOK:
			return fmt.Errorf("%q: want a positive duration", x)
		}
	}
	if s.check != nil {
		return s.check(v)
	}
	return nil
}

// Format returns a value of the setting as text that Parse reads back:
// durations as Go durations, lists joined with commas.
func (s *Setting) Format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case time.Duration:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case []string:
		return strings.Join(x, ",")
	case []DatabaseEntry:
		specs := make([]string, len(x))
		for i, e := range x {
			specs[i] = e.String()
		}
		return strings.Join(specs, ",")
	case map[int]string:
		ids := make([]int, 0, len(x))
		for id := range x {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = strconv.Itoa(id) + "=" + x[id]
		}
		return strings.Join(out, ",")
	}
	return fmt.Sprint(v)
}

// showValue is SHOW CONFIG's value of the setting in c.
func (s *Setting) showValue(c *Config) string {
	if s.show != nil {
		return s.show(c)
	}
	return s.Format(s.Get(c))
}

// DatabaseEntry is one entry of the allow-list of databases, with its
// name (the one clients ask for).
type DatabaseEntry struct {
	Name string
	Database
}

// String writes the entry as the command line does (ParseDatabase reads
// it back).
func (e DatabaseEntry) String() string {
	spec := e.Name
	if e.DBName != "" && e.DBName != e.Name {
		spec += "=" + e.DBName
	}
	switch {
	case e.MaxDBConnections != 0:
		spec += ":" + strconv.Itoa(e.PoolSize) + ":" + strconv.Itoa(e.MaxDBConnections)
	case e.PoolSize != 0:
		spec += ":" + strconv.Itoa(e.PoolSize)
	}
	q := url.Values{}
	for k, v := range map[string]string{"auth_user": e.AuthUser, "auth_dbname": e.AuthDBName, "auth_query": e.AuthQuery} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) > 0 {
		spec += "?" + q.Encode()
	}
	return spec
}

// ParseDatabases reads allow-list entries as the command line writes
// them (ParseDatabase); a name listed twice is an error.
func ParseDatabases(specs []string) ([]DatabaseEntry, error) {
	var out []DatabaseEntry
	for _, spec := range specs {
		name, db, err := ParseDatabase(spec)
		if err != nil {
			return nil, err
		}
		e := DatabaseEntry{Name: name, Database: db}
		if err := checkEntries(append(out, e)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// checkEntries checks the allow-list: each name once, not the admin
// console's, no negative size or cap, an alias only on a named entry, and
// an auth_dbname that is an entry.
func checkEntries(dbs []DatabaseEntry) error {
	seen := map[string]bool{}
	for _, e := range dbs {
		if seen[e.Name] {
			return fmt.Errorf("%s is listed twice", e.Name)
		}
		seen[e.Name] = true
	}
	for _, e := range dbs {
		switch {
		case e.Name == "":
			return errors.New("a database entry without a name")
		case isAdminDatabase(e.Name):
			return fmt.Errorf("database %s: the name of the admin console cannot be a database entry", e.Name)
		case e.PoolSize < 0 || e.MaxDBConnections < 0:
			return fmt.Errorf("database %s: negative pool size or max_db_connections", e.Name)
		case e.Name == "*" && e.DBName != "":
			return fmt.Errorf("database *: the entry * cannot name a server database (%s)", e.DBName)
		case e.AuthDBName != "" && !seen[e.AuthDBName]:
			return fmt.Errorf("database %s: auth dbname %s is not a database entry", e.Name, e.AuthDBName)
		}
	}
	return nil
}

// ParsePeers reads peers as the command line writes them (ParsePeer); an
// id listed twice is an error.
func ParsePeers(specs []string) (map[int]string, error) {
	var peers map[int]string
	for _, spec := range specs {
		id, addr, err := ParsePeer(spec)
		if err != nil {
			return nil, err
		}
		if peers == nil {
			peers = map[int]string{}
		}
		if _, dup := peers[id]; dup {
			return nil, fmt.Errorf("peer %d is listed twice", id)
		}
		peers[id] = addr
	}
	return peers, nil
}

// SplitList splits a comma-separated list of names, trimming each and
// dropping blanks.
func SplitList(v string) []string {
	list := []string{}
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list
}

// ParseDuration reads a duration: a Go duration ("90s", "1m30s"), or a
// number of seconds ("90", "0.5"), which is what PgBouncer writes.
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("negative duration %q", v)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want a Go duration such as 90s or 2m, or a number of seconds)", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", v)
	}
	return d, nil
}

// OrList joins words as "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// SSLModes are libpq's sslmode values, which PgBouncer's *_tls_sslmode
// take.
var SSLModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// Accessors of Config fields, by kind.
func strField(f func(c *Config) *string) func(*Config) any {
	return func(c *Config) any { return f(c) }
}
func intField(f func(c *Config) *int) func(*Config) any { return func(c *Config) any { return f(c) } }
func durField(f func(c *Config) *time.Duration) func(*Config) any {
	return func(c *Config) any { return f(c) }
}
func boolField(f func(c *Config) *bool) func(*Config) any { return func(c *Config) any { return f(c) } }
func listField(f func(c *Config) *[]string) func(*Config) any {
	return func(c *Config) any { return f(c) }
}

// settingTable is every setting, in the order of the flags.
var settingTable = []*Setting{
	{Name: "listen", Kind: KindString, Default: "127.0.0.1:6432", keep: true,
		Usage: "address to accept clients on",
		ptr:   strField(func(c *Config) *string { return &c.Listen })},
	{Name: "unix_socket_dir", Kind: KindString, Default: "", Path: true, INI: "unix_socket_dir",
		Usage: "also listen on a Unix-domain socket in this directory (.s.PGSQL.PORT, as PostgreSQL names it: psql -h DIR -p PORT)",
		ptr:   strField(func(c *Config) *string { return &c.UnixSocketDir })},
	{Name: "so_reuseport", Kind: KindBool, Default: false, INI: "so_reuseport",
		Usage: "set SO_REUSEPORT on the listener, so that several pgpoolcheck processes on one machine share --listen (Linux)",
		ptr:   boolField(func(c *Config) *bool { return &c.SoReusePort })},
	{Name: "peer_id", Kind: KindInt, Default: 0, INI: "peer_id",
		Usage: fmt.Sprintf("this instance's id among peers behind one address, 1 to %d: cancel keys carry it, and a cancel request for another peer's key is forwarded to that peer (0: no peering)", MaxPeerID),
		check: func(v any) error {
			if n := v.(int); n > MaxPeerID {
				return fmt.Errorf("want a peer id from 1 to %d (0: no peering), not %d", MaxPeerID, n)
			}
			return nil
		},
		ptr: intField(func(c *Config) *int { return &c.PeerID })},
	{Name: "peers", Kind: KindPeers, Default: map[int]string(nil),
		Usage: "every instance behind the address, this one included, comma-separated or repeated: ID=HOST:PORT (or ID=/path/.s.PGSQL.PORT)",
		ptr:   func(c *Config) any { return &c.Peers }},
	{Name: "upstream", Kind: KindString, Default: "",
		Usage: "PostgreSQL connection URL (or PGPOOLCHECK_UPSTREAM)",
		ptr:   strField(func(c *Config) *string { return &c.Upstream }),
		show:  func(c *Config) string { return redactURL(c.Upstream) }},
	{Name: "mode", Kind: KindString, Default: string(ModeTransaction), ShowAs: "pool_mode",
		Enum:  []string{"transaction", "session", "record"},
		Usage: "pool mode: transaction, session or record",
		ptr:   strField(func(c *Config) *string { return (*string)(&c.Mode) })},
	{Name: "pool_size", Kind: KindInt, Default: 20, Min: 1, Change: Live, INI: "default_pool_size",
		Usage: "server connections per database and user",
		ptr:   intField(func(c *Config) *int { return &c.PoolSize })},
	{Name: "max_client_conn", Kind: KindInt, Default: 1000, Min: 1, Change: Live, INI: "max_client_conn",
		Usage: "most clients at once",
		ptr:   intField(func(c *Config) *int { return &c.MaxClientConn })},
	{Name: "max_db_connections", Kind: KindInt, Default: 0, Change: Live, INI: "max_db_connections",
		Usage: "most server connections to one database over all users (0: no cap); clients beyond it wait for a server",
		ptr:   intField(func(c *Config) *int { return &c.MaxDBConnections })},
	{Name: "max_user_connections", Kind: KindInt, Default: 0, Change: Live, INI: "max_user_connections",
		Usage: "most server connections of one user over all databases (0: no cap); clients beyond it wait for a server",
		ptr:   intField(func(c *Config) *int { return &c.MaxUserConnections })},
	{Name: "databases", Kind: KindDatabases, Default: []DatabaseEntry(nil), Change: Reload,
		Usage: "allow-list of databases clients may ask for, comma-separated entries NAME[=DBNAME][:POOL_SIZE[:MAX_DB_CONNECTIONS]][?auth_user=…&auth_dbname=…&auth_query=…] (an alias connects to DBNAME; * admits any name; POOL_SIZE 0 keeps --pool-size; default: any)",
		check: func(v any) error { return checkEntries(v.([]DatabaseEntry)) },
		get: func(c *Config) any {
			if c.Databases == nil {
				return []DatabaseEntry(nil)
			}
			out := make([]DatabaseEntry, 0, len(c.Databases))
			for name, db := range c.Databases {
				out = append(out, DatabaseEntry{Name: name, Database: db})
			}
			slices.SortFunc(out, func(a, b DatabaseEntry) int { return strings.Compare(a.Name, b.Name) })
			return out
		},
		put: func(c *Config, v any) {
			dbs := v.([]DatabaseEntry)
			if dbs == nil {
				c.Databases = nil
				return
			}
			c.Databases = make(map[string]Database, len(dbs))
			for _, e := range dbs {
				c.Databases[e.Name] = e.Database
			}
		},
		zero: func(*Config) bool { return false }},
	{Name: "client_login_timeout", Kind: KindDuration, Default: 60 * time.Second, Change: Live, INI: "client_login_timeout",
		Usage: "how long a client may take to send its startup packet and authenticate",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ClientLoginTimeout })},
	{Name: "max_login_clients", Kind: KindInt, Default: 512, Min: 1, Change: Live,
		Usage: "most connections logging in at once (more are refused at once); not counted against --max-client-conn until they authenticate",
		ptr:   intField(func(c *Config) *int { return &c.MaxLoginClients })},
	{Name: "max_logins_per_address", Kind: KindInt, Default: 128, Min: 1, Change: Live,
		Usage: "most connections of one client address logging in at once (more are refused at once); Unix sockets are not counted",
		ptr:   intField(func(c *Config) *int { return &c.MaxLoginsPerAddress })},
	{Name: "login_failure_backoff", Kind: KindDuration, Default: 5 * time.Second, zeroOK: true, Change: Live,
		Usage: "after a few failed logins in a row from one address or for one user, hold back each failure's answer, doubling up to this long (0: never)",
		ptr:   durField(func(c *Config) *time.Duration { return &c.LoginFailureBackoff })},
	{Name: "idle_transaction_timeout", Kind: KindDuration, Default: time.Duration(0), zeroOK: true, Change: Live, INI: "idle_transaction_timeout",
		Usage: "close a client idle inside a transaction this long (its server is closed; 0: never)",
		ptr:   durField(func(c *Config) *time.Duration { return &c.IdleTransactionTimeout })},
	{Name: "client_idle_timeout", Kind: KindDuration, Default: time.Duration(0), zeroOK: true, Change: Live, INI: "client_idle_timeout",
		Usage: "close a client that sent nothing outside a transaction this long (0: never)",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ClientIdleTimeout })},
	{Name: "query_wait_timeout", Kind: KindDuration, Default: 120 * time.Second, Change: Live, INI: "query_wait_timeout",
		Usage: "how long a client may wait for a server",
		ptr:   durField(func(c *Config) *time.Duration { return &c.QueryWaitTimeout })},
	{Name: "query_timeout", Kind: KindDuration, Default: time.Duration(0), zeroOK: true, Change: Live, INI: "query_timeout",
		Usage: "close a client whose query has run this long since its last message, with FATAL \"query timeout\" (the query is cancelled, the server closed; 0: never)",
		ptr:   durField(func(c *Config) *time.Duration { return &c.QueryTimeout })},
	{Name: "server_idle_timeout", Kind: KindDuration, Default: 600 * time.Second, Change: Live, INI: "server_idle_timeout",
		Usage: "close servers idle this long",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ServerIdleTimeout })},
	{Name: "server_lifetime", Kind: KindDuration, Default: 3600 * time.Second, Change: Live, INI: "server_lifetime",
		Usage: "retire servers this old (never mid-transaction)",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ServerLifetime })},
	{Name: "server_connect_timeout", Kind: KindDuration, Default: 15 * time.Second, Change: Live, INI: "server_connect_timeout",
		Usage: "timeout of one server login",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ServerConnectTimeout })},
	{Name: "server_login_retry", Kind: KindDuration, Default: 15 * time.Second, Change: Live, INI: "server_login_retry",
		Usage: "longest wait between server logins while the server is down (from 250ms, doubling); clients meanwhile get the login error at once",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ServerLoginRetry })},
	{Name: "shutdown_timeout", Kind: KindDuration, Default: 30 * time.Second,
		Usage: "how long shutdown lets transactions finish",
		ptr:   durField(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{Name: "auth_type", Kind: KindString, Default: string(AuthTrust),
		Enum:  []string{"trust", "md5", "scram-sha-256", "cert"},
		Usage: "client authentication: trust, md5, scram-sha-256 or cert (a client certificate whose common name is the user; needs --client-tls-sslmode verify-ca or verify-full)",
		ptr:   strField(func(c *Config) *string { return (*string)(&c.AuthType) })},
	{Name: "auth_file", Kind: KindString, Default: "", Path: true, Change: Reload, INI: "auth_file",
		Usage: "PgBouncer-format userlist file",
		ptr:   strField(func(c *Config) *string { return &c.AuthFile })},
	{Name: "auth_user", Kind: KindString, Default: "", INI: "auth_user",
		Usage: "user that looks up users not in --auth-file on the server with --auth-query (its password from --auth-file)",
		ptr:   strField(func(c *Config) *string { return &c.AuthUser })},
	{Name: "auth_query", Kind: KindString, Default: DefaultAuthQuery, INI: "auth_query",
		Usage: "query returning the user name and secret of $1, run as --auth-user",
		ptr:   strField(func(c *Config) *string { return &c.AuthQuery })},
	{Name: "auth_dbname", Kind: KindString, Default: "", INI: "auth_dbname",
		Usage: "--databases entry the auth query runs in (default: the client's database)",
		ptr:   strField(func(c *Config) *string { return &c.AuthDBName })},
	{Name: "insecure_trust", Kind: KindBool, Default: false,
		Usage: "allow trust authentication on a non-loopback address",
		ptr:   boolField(func(c *Config) *bool { return &c.InsecureTrust })},
	{Name: "max_message_size", Kind: KindInt, Default: DefaultMaxMessageSize, Min: 1024, INI: "max_packet_size",
		Usage: "largest client message in bytes",
		ptr:   intField(func(c *Config) *int { return &c.MaxMessageSize })},
	{Name: "max_pending_output", Kind: KindInt, Default: DefaultMaxPendingOutput, Min: 16 << 10,
		Usage: "bytes a client's or server's socket may hold back unwritten before the pooler stops reading the other side for it",
		ptr:   intField(func(c *Config) *int { return &c.MaxPendingOutput })},
	{Name: "max_owed_answers", Kind: KindInt, Default: engine.DefaultMaxOwed, Min: 4096,
		Usage: "answers a server may owe a client before the client's next message waits for them (PostgreSQL may hold back about 1,640 unsent)",
		ptr:   intField(func(c *Config) *int { return &c.MaxOwedAnswers })},
	{Name: "max_prepared_statements", Kind: KindInt, Default: 200, INI: "max_prepared_statements",
		Usage: "protocol prepared statements kept per server connection in transaction mode (0 turns their support off)",
		// The Config keeps 0 for "the default" and a negative number
		// for "off".
		get: func(c *Config) any { return max(c.MaxPreparedStatements, 0) },
		put: func(c *Config, v any) {
			if c.MaxPreparedStatements = v.(int); c.MaxPreparedStatements <= 0 {
				c.MaxPreparedStatements = -1
			}
		},
		zero: func(c *Config) bool { return c.MaxPreparedStatements == 0 }},
	{Name: "relay", Kind: KindString, Default: string(RelayLoop), Enum: []string{"loop", "bridged"},
		Usage:  "how the event loops watch sockets: loop (epoll, on Linux) or bridged (every socket moved by goroutines, as without epoll); a test knob, not in the help",
		Hidden: true,
		ptr:    strField(func(c *Config) *string { return (*string)(&c.Relay) })},
	{Name: "event_loops", Kind: KindInt, Default: 1, Min: 1,
		Usage: "event loops that relay the clients' traffic (more only where the pooler has cores of its own)",
		ptr:   intField(func(c *Config) *int { return &c.Loops })},
	{Name: "log_level", Kind: KindString, Default: "info", Enum: []string{"debug", "info", "warn", "error"},
		Usage: "log level: debug, info, warn or error",
		ptr:   strField(func(c *Config) *string { return &c.LogLevel })},
	{Name: "log_format", Kind: KindString, Default: "text", Enum: []string{"text", "json"},
		Usage: "log format: text or json",
		ptr:   strField(func(c *Config) *string { return &c.LogFormat })},
	{Name: "on_session_state", Kind: KindString, Default: string(PolicyPreserve),
		Enum:  []string{"preserve", "reset", "reject", "allow", "off"},
		Usage: "session state in transaction mode: preserve (replay SETs, pin locks/LISTEN/temp tables), reset (clean the server), reject (refuse with 0A000), allow (pass through, as PgBouncer, counted) or off (no classification at all)",
		ptr:   strField(func(c *Config) *string { return (*string)(&c.OnSessionState) }),
		show:  func(c *Config) string { return sessionStateText(*c) }},
	{Name: "trusted_routines", Kind: KindList, Default: []string(nil),
		Usage: "routines the operator vouches change no session state, so calls of them are not followed by a read of the server's state: name, schema.name or extension:NAME (every routine of that extension), comma-separated",
		ptr:   listField(func(c *Config) *[]string { return &c.TrustedRoutines })},
	{Name: "admin_users", Kind: KindList, Default: []string(nil), Change: Live, INI: "admin_users",
		Usage: "users allowed on the admin console (database pgpoolcheck), comma-separated",
		ptr:   listField(func(c *Config) *[]string { return &c.AdminUsers })},
	{Name: "stats_users", Kind: KindList, Default: []string(nil), Change: Live, INI: "stats_users",
		Usage: "users allowed the admin console's SHOW commands only, comma-separated",
		ptr:   listField(func(c *Config) *[]string { return &c.StatsUsers })},
	{Name: "metrics_listen", Kind: KindString, Default: "",
		Usage: "serve Prometheus metrics on http://ADDR/metrics (e.g. 127.0.0.1:9127)",
		ptr:   strField(func(c *Config) *string { return &c.MetricsListen }),
		show: func(c *Config) string {
			if c.MetricsHandler == nil {
				return ""
			}
			return c.MetricsListen
		}},
	{Name: "capture", Kind: KindString, Default: "", Path: true,
		Usage: "record every client session to this capture file (JSON Lines; required with --mode record)",
		ptr:   strField(func(c *Config) *string { return &c.CaptureFile }),
		show: func(c *Config) string {
			if c.CaptureFile == "" && c.Capture != nil {
				return "yes"
			}
			return c.CaptureFile
		}},
	{Name: "capture_max_bytes", Kind: KindInt, Default: 0, Max: math.MaxInt,
		Usage: "start a new capture part (FILE.2.jsonl, …) before one exceeds this size (0: never)",
		ptr:   intField(func(c *Config) *int { return &c.CaptureMaxBytes })},
	{Name: "redact", Kind: KindBool, Default: false,
		Usage: "replace literals in captured SQL with placeholders",
		ptr:   boolField(func(c *Config) *bool { return &c.Redact })},
	{Name: "client_tls_sslmode", Kind: KindString, Default: string(TLSDisable), Enum: SSLModes, INI: "client_tls_sslmode",
		Usage: "TLS to clients: disable, allow or prefer (TLS for clients that ask), require (refuse plaintext), verify-ca or verify-full (also a client certificate signed by --client-tls-ca-file)",
		ptr:   strField(func(c *Config) *string { return (*string)(&c.ClientTLSMode) })},
	{Name: "client_tls_cert_file", Kind: KindString, Default: "", Path: true, Change: Reload, INI: "client_tls_cert_file",
		Usage: "the pooler's certificate for clients (PEM)",
		ptr:   strField(func(c *Config) *string { return &c.ClientTLSCertFile })},
	{Name: "client_tls_key_file", Kind: KindString, Default: "", Path: true, Change: Reload, INI: "client_tls_key_file",
		Usage: "key of --client-tls-cert-file (PEM)",
		ptr:   strField(func(c *Config) *string { return &c.ClientTLSKeyFile })},
	{Name: "client_tls_ca_file", Kind: KindString, Default: "", Path: true, Change: Reload, INI: "client_tls_ca_file",
		Usage: "CA certificates that verify client certificates (PEM)",
		ptr:   strField(func(c *Config) *string { return &c.ClientTLSCAFile })},
	{Name: "client_tls_protocols", Kind: KindString, Default: "secure", Change: Reload, INI: "client_tls_protocols",
		Usage: "TLS versions offered to clients: secure (TLS 1.2 and 1.3), all, or a list such as tlsv1.2,tlsv1.3",
		ptr:   strField(func(c *Config) *string { return &c.ClientTLSProtocols })},
	{Name: "server_tls_sslmode", Kind: KindString, Default: "", Enum: SSLModes, INI: "server_tls_sslmode",
		Usage: "TLS to PostgreSQL: disable, allow, prefer, require, verify-ca or verify-full (sets sslmode in the upstream URL)",
		ptr:   strField(func(c *Config) *string { return &c.ServerTLSMode })},
	{Name: "server_tls_ca_file", Kind: KindString, Default: "", Path: true, INI: "server_tls_ca_file",
		Usage: "CA certificates that verify PostgreSQL's certificate (sslrootcert)",
		ptr:   strField(func(c *Config) *string { return &c.ServerTLSCAFile })},
	{Name: "server_tls_cert_file", Kind: KindString, Default: "", Path: true, INI: "server_tls_cert_file",
		Usage: "client certificate the pooler shows PostgreSQL (sslcert)",
		ptr:   strField(func(c *Config) *string { return &c.ServerTLSCertFile })},
	{Name: "server_tls_key_file", Kind: KindString, Default: "", Path: true, INI: "server_tls_key_file",
		Usage: "key of --server-tls-cert-file (sslkey)",
		ptr:   strField(func(c *Config) *string { return &c.ServerTLSKeyFile })},
}

// applyDefaults gives every setting c leaves unset its default.
func applyDefaults(c *Config) {
	for _, s := range settingTable {
		if !s.keep && s.Default != nil && s.unset(c) {
			s.Put(c, s.Default)
		}
	}
}

// checkSettings validates every setting of c against the table.
func checkSettings(c *Config) error {
	for _, s := range settingTable {
		if err := s.Check(s.Get(c)); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}
