package proxyconfig

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/suggest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// Ignored is a pgbouncer.ini setting that pgpoolcheck does not honour, or
// honours only in part; Reason says which.
type Ignored struct {
	Line int
	// Section is the ini section: "pgbouncer", "databases", "users", …
	Section string
	// Key is the setting; in [databases] the database name, followed by
	// "." and the connection parameter when the note is about one.
	Key    string
	Reason string
}

func (i Ignored) String() string {
	return fmt.Sprintf("line %d: [%s] %s: %s", i.Line, i.Section, i.Key, i.Reason)
}

// LoadPgBouncerINI reads a pgbouncer.ini. A relative auth_file is made
// relative to the file's directory.
func LoadPgBouncerINI(path string) (*Settings, []Ignored, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	s, ignored, err := ParsePgBouncerINI(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	s.resolvePaths(filepath.Dir(path))
	return s, ignored, nil
}

// iniLine is one "key = value" line.
type iniLine struct {
	line       int
	key, value string
}

// ParsePgBouncerINI reads pgbouncer.ini text: the [databases] section
// becomes the upstream URL and the [pgbouncer] keys pgpoolcheck has
// settings for are mapped; the rest is returned as ignored.
func ParsePgBouncerINI(b []byte) (*Settings, []Ignored, error) {
	sections := map[string][]iniLine{}
	var order []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "" || text[0] == '#' || text[0] == ';':
			continue
		case strings.HasPrefix(text, "%include"):
			return nil, nil, fmt.Errorf("line %d: %%include is not supported: copy the included file's settings into this one", n)
		case text[0] == '[':
			end := strings.IndexByte(text, ']')
			if end < 0 {
				return nil, nil, fmt.Errorf("line %d: section header without ]", n)
			}
			section = strings.ToLower(strings.TrimSpace(text[1:end]))
			if _, ok := sections[section]; !ok {
				order = append(order, section)
				sections[section] = nil
			}
			continue
		}
		eq := strings.IndexByte(text, '=')
		if eq <= 0 {
			return nil, nil, fmt.Errorf("line %d: want key = value", n)
		}
		if section == "" {
			return nil, nil, fmt.Errorf("line %d: %s is outside any section", n, strings.TrimSpace(text[:eq]))
		}
		key := strings.TrimSpace(text[:eq])
		if section != "databases" {
			key = strings.ToLower(key)
		} else if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
			key = key[1 : len(key)-1]
		}
		sections[section] = append(sections[section], iniLine{n, key, strings.TrimSpace(text[eq+1:])})
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	s := &Settings{}
	var ignored []Ignored
	for _, name := range order {
		var err error
		switch name {
		case "pgbouncer":
			ignored, err = s.pgbouncerSection(sections[name], ignored)
		case "databases":
			ignored, err = s.databasesSection(sections[name], ignored)
		case "peers":
			err = s.peersSection(sections[name])
		case "users":
			if ls := sections[name]; len(ls) > 0 {
				err = fmt.Errorf("line %d: [users] %s: per-user settings (pool_mode, max_user_connections, pool_size) are not supported by pgpoolcheck; remove the [users] section", ls[0].line, ls[0].key)
			}
		default:
			for _, l := range sections[name] {
				ignored = append(ignored, Ignored{l.line, name, l.key, "section not used by pgpoolcheck"})
			}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	sort.SliceStable(ignored, func(i, j int) bool { return ignored[i].Line < ignored[j].Line })
	return s, ignored, nil
}

// peersSection maps [peers]: "ID = host=HOST port=PORT", as PgBouncer
// writes it (a host starting with / is a Unix socket directory).
func (s *Settings) peersSection(lines []iniLine) error {
	peers := map[int]string{}
	for _, l := range lines {
		id, err := strconv.Atoi(l.key)
		if err != nil || id < 1 || id > pooler.MaxPeerID {
			return fmt.Errorf("line %d: [peers] %s: want a peer id from 1 to %d", l.line, l.key, pooler.MaxPeerID)
		}
		if _, dup := peers[id]; dup {
			return fmt.Errorf("line %d: [peers] %s: peer %d is listed twice", l.line, l.key, id)
		}
		params, err := parseConnString(l.value)
		if err != nil {
			return fmt.Errorf("line %d: [peers] %s: %v", l.line, l.key, err)
		}
		host, port := "", "6432"
		for _, p := range params {
			switch p.key {
			case "host":
				host = p.value
			case "port":
				port = p.value
			case "pool_size":
				// PgBouncer's pool for forwarded cancels: each is sent on a
				// connection of its own here.
			default:
				return fmt.Errorf("line %d: [peers] %s: unknown key %q (want host and port)", l.line, l.key, p.key)
			}
		}
		if host == "" {
			return fmt.Errorf("line %d: [peers] %s: no host", l.line, l.key)
		}
		addr := net.JoinHostPort(host, port)
		if strings.HasPrefix(host, "/") {
			addr = host + "/.s.PGSQL." + port
		}
		peers[id] = addr
	}
	s.put(pooler.LookupSetting("peers"), peers)
	return nil
}

// pgbouncerSection maps the [pgbouncer] keys.
func (s *Settings) pgbouncerSection(lines []iniLine, ignored []Ignored) ([]Ignored, error) {
	ignore := func(l iniLine, reason string) {
		ignored = append(ignored, Ignored{l.line, "pgbouncer", l.key, reason})
	}
	var (
		addr, port         string
		addrLine, portLine iniLine
	)
	for _, l := range lines {
		fail := func(format string, a ...any) error {
			return fmt.Errorf("line %d: %s: %s", l.line, l.key, fmt.Sprintf(format, a...))
		}
		switch l.key {
		case "listen_addr":
			addr, addrLine = l.value, l
		case "listen_port":
			if _, err := strconv.ParseUint(l.value, 10, 16); err != nil {
				return ignored, fail("invalid port %q", l.value)
			}
			port, portLine = l.value, l
		case "auth_type":
			st := pooler.LookupSetting("auth_type")
			switch v := strings.ToLower(l.value); {
			case v == "plain":
				s.setString("auth_type", "md5")
				ignore(l, "plain is not supported; clients log in with md5 against the same auth_file")
			case st.Check(v) == nil:
				s.setString("auth_type", v)
			default:
				return ignored, fail("auth_type %s is not supported by pgpoolcheck (%s)", l.value, pooler.OrList(st.Enum))
			}
		case "pool_mode":
			switch v := strings.ToLower(l.value); v {
			case "session", "transaction":
				s.setString("mode", v)
			case "statement":
				s.setString("mode", "transaction")
				ignore(l, "statement mode is not supported; using transaction mode, which runs every statement-mode client")
			default:
				return ignored, fail("unknown pool_mode %q (want session, transaction or statement)", l.value)
			}
		case "client_login_timeout":
			if d, err := pooler.ParseDuration(l.value); err == nil && d == 0 {
				return ignored, fail("0 (no limit) is not supported: a login that never ends holds a connection slot; give a number of seconds")
			}
			if err := s.iniSetting(l); err != nil {
				return ignored, err
			}
		case "server_tls_protocols", "server_tls_ciphers", "server_tls13_ciphers":
			if !defaultTLSValue(l.key, l.value) {
				return ignored, fail("%q is not supported: pgpoolcheck connects to PostgreSQL with Go's TLS defaults (TLS 1.2 and 1.3, Go's cipher suites); remove the key or set %s", l.value, tlsDefaults[l.key])
			}
		case "client_tls_ciphers", "client_tls13_ciphers":
			if !defaultTLSValue(l.key, l.value) {
				return ignored, fail("%q is not supported: pgpoolcheck offers clients Go's TLS cipher suites; remove the key or set %s", l.value, tlsDefaults[l.key])
			}
		case "client_tls_ecdhcurve", "client_tls_dheparams":
			if v := strings.ToLower(l.value); v != "auto" && v != "none" {
				return ignored, fail("%q is not supported: pgpoolcheck uses Go's key exchanges (ECDHE with X25519 and the NIST curves, no finite-field DHE); remove the key or set auto", l.value)
			}
		case "auth_hba_file", "auth_ident_file", "auth_ldap_options":
			return ignored, fail("not supported by pgpoolcheck: clients are authenticated against auth_file and auth_query only; remove the key")
		case "unix_socket_mode", "unix_socket_group", "disable_pqexec", "scram_iterations":
			// They protect something: accepted at PgBouncer's default
			// (what pgpoolcheck does), refused otherwise.
			def := map[string]string{"unix_socket_mode": "0777", "unix_socket_group": "", "disable_pqexec": "0", "scram_iterations": "4096"}[l.key]
			v := strings.TrimSpace(l.value)
			if v == def || l.key == "unix_socket_mode" && strings.TrimLeft(v, "0") == "777" || l.key == "disable_pqexec" && strings.EqualFold(v, "off") {
				continue
			}
			return ignored, fail("%q is not supported by pgpoolcheck (only PgBouncer's default %q); remove the key", l.value, def)
		case "transaction_timeout", "max_db_client_connections", "max_user_client_connections":
			if v, err := strconv.ParseFloat(l.value, 64); err == nil && v == 0 {
				continue // PgBouncer's default: no limit
			}
			return ignored, fail("this limit is not supported by pgpoolcheck yet; remove it or set 0 (no limit)")
		default:
			st := iniSettings[l.key]
			if st == nil && !isPgBouncerKey(l.key) {
				// A typo of a key would leave its setting at the default
				// (a listen_prot: the wrong port; a client_tls_sslmod: no
				// TLS), so a near miss is an error; any other unknown key
				// may come from a newer PgBouncer.
				if c, ok := suggest.Closest(l.key, pgbouncerKeys); ok {
					return ignored, fail("unknown key (did you mean %s?)", c)
				}
				ignore(l, "unknown key, not a PgBouncer setting pgpoolcheck knows; ignored")
				continue
			}
			if st == nil {
				ignore(l, "not used by pgpoolcheck")
				continue
			}
			if st.Kind == pooler.KindDuration {
				if d, err := pooler.ParseDuration(l.value); err == nil && d == 0 && st.Check(d) != nil {
					ignore(l, "0 (no limit) has no equivalent; pgpoolcheck's default applies")
					continue
				}
			}
			if err := s.iniSetting(l); err != nil {
				return ignored, err
			}
		}
	}
	if addr != "" || port != "" {
		host := "127.0.0.1"
		if addr != "" {
			hosts := pooler.SplitList(addr)
			switch {
			case len(hosts) == 0:
				ignore(addrLine, "empty (Unix sockets only): pgpoolcheck listens on TCP, here on 127.0.0.1")
			case hosts[0] == "*":
				host = ""
			default:
				host = hosts[0]
			}
			if len(hosts) > 1 {
				ignore(addrLine, "pgpoolcheck listens on one address; using "+hosts[0])
			}
		} else {
			ignore(portLine, "no listen_addr (Unix sockets only in PgBouncer): pgpoolcheck listens on TCP at 127.0.0.1")
		}
		if port == "" {
			port = "6432"
		}
		s.setString("listen", net.JoinHostPort(host, port))
	}
	return ignored, nil
}

// pgbouncerKeys are the keys of PgBouncer's pgbouncer.ini ([pgbouncer]
// section, from its documentation and sample file, 1.25 and newer).
var pgbouncerKeys = []string{
	"admin_users", "application_name_add_host", "auth_dbname", "auth_file", "auth_hba_file",
	"auth_ident_file", "auth_ldap_options", "auth_query", "auth_type", "auth_user",
	"autodb_idle_timeout", "cancel_wait_timeout", "client_encoding", "client_idle_timeout",
	"client_login_timeout", "client_tls13_ciphers", "client_tls_ca_file", "client_tls_cert_file",
	"client_tls_ciphers", "client_tls_dheparams", "client_tls_ecdhcurve", "client_tls_key_file",
	"client_tls_protocols", "client_tls_sslmode", "conffile", "connect_query", "datestyle",
	"default_pool_size", "disable_pqexec", "dns_max_ttl", "dns_nxdomain_ttl",
	"dns_zone_check_period", "idle_transaction_timeout", "ignore_startup_parameters", "job_name",
	"listen_addr", "listen_backlog", "listen_port", "load_balance_hosts", "log_connections",
	"log_disconnections", "log_pooler_errors", "log_stats", "logfile", "login_notify_message",
	"max_client_conn", "max_db_client_connections", "max_db_connections", "max_packet_size",
	"max_prepared_statements", "max_user_client_connections", "max_user_connections",
	"min_pool_size", "peer_id", "pidfile", "pkt_buf", "pool_idle_timeout", "pool_mode",
	"pool_size", "query_timeout", "query_wait_notify", "query_wait_timeout", "reserve_pool_size",
	"reserve_pool_timeout", "resolv_conf", "sbuf_loopcnt", "scram_iterations",
	"server_check_delay", "server_check_query", "server_connect_timeout", "server_fast_close",
	"server_idle_timeout", "server_lifetime", "server_login_retry", "server_reset_query",
	"server_reset_query_always", "server_round_robin", "server_tls13_ciphers",
	"server_tls_ca_file", "server_tls_cert_file", "server_tls_ciphers", "server_tls_key_file",
	"server_tls_protocols", "server_tls_sslmode", "service_name", "so_reuseport", "stats_period",
	"stats_users", "suspend_timeout", "syslog", "syslog_facility", "syslog_ident",
	"tcp_defer_accept", "tcp_keepalive", "tcp_keepcnt", "tcp_keepidle", "tcp_keepintvl",
	"tcp_socket_buffer", "tcp_user_timeout", "timezone", "track_extra_parameters",
	"transaction_timeout", "unix_socket_dir", "unix_socket_group", "unix_socket_mode", "user",
	"verbose",
}

// isPgBouncerKey reports whether key is a key of PgBouncer's [pgbouncer]
// section.
func isPgBouncerKey(key string) bool { return slices.Contains(pgbouncerKeys, key) }

// iniSettings are the settings a [pgbouncer] key sets as it is, by key
// (the table's INI names).
var iniSettings = func() map[string]*pooler.Setting {
	m := map[string]*pooler.Setting{}
	for _, st := range pooler.Settings() {
		if st.INI != "" {
			m[st.INI] = st
		}
	}
	return m
}()

// iniSetting sets the setting of a [pgbouncer] key from its value,
// through the table: a number, a duration in seconds (or a Go duration),
// a boolean (1, yes, on, true), a comma-separated list or text.
func (s *Settings) iniSetting(l iniLine) error {
	st := iniSettings[l.key]
	fail := func(format string, a ...any) error {
		return fmt.Errorf("line %d: %s: %s", l.line, l.key, fmt.Sprintf(format, a...))
	}
	var v any
	switch st.Kind {
	case pooler.KindInt:
		n, err := strconv.ParseInt(l.value, 0, 64)
		if err != nil || n < 0 || n > st.MaxInt() {
			return fail("invalid number %q", l.value)
		}
		if int(n) < st.Min {
			return fail("must be at least %d", st.Min)
		}
		v = int(n)
	case pooler.KindDuration:
		d, err := pooler.ParseDuration(l.value)
		if err != nil {
			return fail("%v", err)
		}
		v = d
	case pooler.KindBool:
		v = l.value == "1" || strings.EqualFold(l.value, "true") || strings.EqualFold(l.value, "yes") || strings.EqualFold(l.value, "on")
	case pooler.KindList:
		v = pooler.SplitList(l.value)
	default:
		if l.value == "" && st.Path {
			return nil // PgBouncer's "none"
		}
		v = l.value
		if len(st.Enum) > 0 {
			v = strings.ToLower(l.value)
		}
	}
	if err := st.Check(v); err != nil {
		return fail("%v", err)
	}
	s.put(st, v)
	return nil
}

// setString sets a string setting the reader checked itself.
func (s *Settings) setString(key, v string) { s.put(pooler.LookupSetting(key), v) }

// upstreamEntry is one [databases] entry.
type upstreamEntry struct {
	line                     int
	name                     string
	host, port, dbname, user string
	password                 string
	hasPassword              bool
	// db is the entry as the allow-list has it.
	db pooler.Database
}

// databasesSection turns [databases] into the upstream URL. pgpoolcheck
// has one upstream and passes the client's database name through, so all
// entries must name one host and port; renamed databases, forced users and
// per-database settings are reported.
func (s *Settings) databasesSection(lines []iniLine, ignored []Ignored) ([]Ignored, error) {
	ignore := func(line int, key, reason string) {
		ignored = append(ignored, Ignored{line, "databases", key, reason})
	}
	var entries []upstreamEntry
	for _, l := range lines {
		params, err := parseConnString(l.value)
		if err != nil {
			return ignored, fmt.Errorf("line %d: database %s: %w", l.line, l.key, err)
		}
		e := upstreamEntry{line: l.line, name: l.key, port: "5432"}
		for _, p := range params {
			switch p.key {
			case "host":
				e.host = p.value
			case "port":
				if _, err := strconv.ParseUint(p.value, 10, 16); err != nil {
					return ignored, fmt.Errorf("line %d: database %s: invalid port %q", l.line, l.key, p.value)
				}
				e.port = p.value
			case "dbname":
				e.dbname = p.value
			case "user":
				e.user = p.value
			case "password":
				e.password, e.hasPassword = p.value, true
			case "pool_size":
				n, err := strconv.Atoi(p.value)
				if err != nil || n < 1 {
					return ignored, fmt.Errorf("line %d: database %s: pool_size %q is not a whole number from 1", l.line, l.key, p.value)
				}
				e.db.PoolSize = n
			case "auth_user":
				e.db.AuthUser = p.value
			case "auth_dbname":
				e.db.AuthDBName = p.value
			case "auth_query":
				e.db.AuthQuery = p.value
			case "max_db_connections":
				n, err := strconv.Atoi(p.value)
				if err != nil || n < 0 {
					return ignored, fmt.Errorf("line %d: database %s: max_db_connections %q is not a whole number from 0", l.line, l.key, p.value)
				}
				e.db.MaxDBConnections = n
			case "pool_mode":
				return ignored, fmt.Errorf("line %d: database %s: %s is not supported by pgpoolcheck per database; remove it", l.line, l.key, p.key)
			default:
				ignore(l.line, l.key+"."+p.key, "per-database settings are not supported")
			}
		}
		if strings.Contains(e.host, ",") {
			return ignored, fmt.Errorf("line %d: database %s: several hosts (%s): pgpoolcheck has one upstream server", l.line, l.key, e.host)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return ignored, nil
	}
	// One upstream: every entry must point at the same server.
	servers := map[string]int{}
	var list []string
	for _, e := range entries {
		hp := e.host + ":" + e.port
		if e.host == "" {
			hp = "(Unix socket):" + e.port
		}
		if _, ok := servers[hp]; !ok {
			servers[hp] = e.line
			list = append(list, fmt.Sprintf("%s (line %d)", hp, e.line))
		}
	}
	if len(servers) > 1 {
		return ignored, fmt.Errorf("[databases] names %d servers: %s; pgpoolcheck has one upstream, so every entry must name the same host and port", len(servers), strings.Join(list, ", "))
	}
	first := entries[0]
	u := &url.URL{Scheme: "postgres"}
	q := url.Values{}
	switch {
	case first.host == "" || strings.HasPrefix(first.host, "/"):
		if first.host != "" {
			q.Set("host", first.host)
		}
		q.Set("port", first.port)
	default:
		u.Host = net.JoinHostPort(first.host, first.port)
	}
	var user, password string
	hasPassword := false
	// The allow-list: every entry is a database clients may ask for.
	dbs := make([]pooler.DatabaseEntry, 0, len(entries))
	for _, e := range entries {
		entry := pooler.DatabaseEntry{Name: e.name, Database: e.db}
		if e.dbname != "" && e.dbname != e.name {
			if e.name == "*" {
				return ignored, fmt.Errorf("line %d: database *: dbname=%s would send every client to one database; pgpoolcheck supports dbname only on named entries", e.line, e.dbname)
			}
			entry.DBName = e.dbname
		}
		dbs = append(dbs, entry)
	}
	if err := s.Put("databases", dbs); err != nil {
		return ignored, err
	}
	for _, e := range entries {
		if e.user == "" {
			continue
		}
		switch {
		case user == "":
			user, password, hasPassword = e.user, e.password, e.hasPassword
			ignore(e.line, e.name+".user", "used as the upstream URL's user: PgBouncer logs every client of this database in to the server as "+e.user+", pgpoolcheck logs each client in as itself and uses this password when the client is "+e.user)
		case e.user != user || e.password != password:
			ignore(e.line, e.name+".user", "pgpoolcheck has one upstream user; using "+user+" from the entry on an earlier line")
		}
	}
	switch {
	case user != "" && hasPassword:
		u.User = url.UserPassword(user, password)
	case user != "":
		u.User = url.User(user)
	}
	if len(entries) == 1 && first.name != "*" {
		db := first.dbname
		if db == "" {
			db = first.name
		}
		u.Path = "/" + db
	}
	u.RawQuery = q.Encode()
	s.setString("upstream", u.String())
	return ignored, nil
}

// tlsDefaults are the values of PgBouncer's TLS protocol and cipher keys
// that mean Go's defaults, by key.
var tlsDefaults = map[string]string{
	"server_tls_protocols": "secure",
	"server_tls_ciphers":   "default",
	"server_tls13_ciphers": "default",
	"client_tls_protocols": "secure",
	"client_tls_ciphers":   "default",
	"client_tls13_ciphers": "default",
}

// defaultTLSValue reports whether v, for one of the TLS protocol or cipher
// keys, asks for no more than Go's TLS defaults give: TLS 1.2 and 1.3 with
// Go's cipher suites (PgBouncer's secure, default, fast and normal).
func defaultTLSValue(key, v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	if strings.HasSuffix(key, "_protocols") {
		return v == "secure" || v == "tlsv1.2,tlsv1.3" || v == "tlsv1.3,tlsv1.2"
	}
	return v == "default" || v == "secure" || v == "fast" || v == "normal"
}

// connParam is one key=value of a connection string.
type connParam struct{ key, value string }

// parseConnString reads a libpq-style "key=value key='quoted value'"
// string, the form of a [databases] entry.
func parseConnString(s string) ([]connParam, error) {
	var out []connParam
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		key := strings.ToLower(s[start:i])
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != '=' || key == "" {
			// Only the word itself: what follows it may be a password,
			// and so may a word right after one.
			if len(out) > 0 && out[len(out)-1].key == "password" {
				return nil, fmt.Errorf("want key=value after the password (byte %d)", start)
			}
			word := s[start:i]
			if len(word) > 32 {
				word = word[:32] + "…"
			}
			return nil, fmt.Errorf("want key=value at %q (byte %d)", word, start)
		}
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var val strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					val.WriteByte(s[i+1])
					i += 2
					continue
				}
				if c == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						val.WriteByte('\'')
						i += 2
						continue
					}
					closed = true
					i++
					break
				}
				val.WriteByte(c)
				i++
			}
			if !closed {
				return nil, errors.New("unterminated quoted value of " + key)
			}
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
				i++
			}
		}
		out = append(out, connParam{key, val.String()})
	}
}
