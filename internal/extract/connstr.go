package extract

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"
)

// Connection strings: the forms a PostgreSQL client is configured with,
// found in string literals and in configuration values. Only what a
// connection string sets is parsed, never where it connects: the analyzer
// looks at the parameters that become session state on the server.

// ConnForm is the syntax of a connection string.
type ConnForm uint8

// The connection string forms.
const (
	// ConnURL is a postgres:// or postgresql:// URL (libpq, pgx, lib/pq,
	// node-postgres, asyncpg), also with a SQLAlchemy driver
	// (postgresql+psycopg2://).
	ConnURL ConnForm = iota + 1
	// ConnJDBC is a jdbc:postgresql: URL (pgjdbc).
	ConnJDBC
	// ConnKeywords is a libpq keyword/value string: host=… dbname=….
	ConnKeywords
	// ConnNpgsql is an ADO.NET connection string as Npgsql reads it:
	// Host=…;Database=…;Search Path=….
	ConnNpgsql
)

func (f ConnForm) String() string {
	switch f {
	case ConnURL:
		return "URL"
	case ConnJDBC:
		return "JDBC URL"
	case ConnKeywords:
		return "keyword/value string"
	case ConnNpgsql:
		return "Npgsql connection string"
	}
	return "connection string"
}

// ConnParam is one parameter of a connection string.
type ConnParam struct {
	// Key and Value are decoded (URL escapes, quotes).
	Key, Value string
	// KeyStart is the offset of the key in the text given to ConnStrings,
	// End the offset just after the value.
	KeyStart, End int
	// vmap[i] is the text offset of Value[i]; its last entry is End.
	vmap []int
}

// ValueOffset returns the text offset of byte i of the decoded value
// (clamped to the value).
func (p *ConnParam) ValueOffset(i int) int {
	if len(p.vmap) == 0 {
		return p.End
	}
	if i < 0 {
		i = 0
	}
	if i >= len(p.vmap) {
		i = len(p.vmap) - 1
	}
	return p.vmap[i]
}

// ConnString is one connection string found in a text.
type ConnString struct {
	Form ConnForm
	// Start and End are its range in the text.
	Start, End int
	Params     []ConnParam
	// Secrets are the text ranges of passwords (URL user information,
	// password parameters), for whoever shows the text to hide them.
	Secrets [][2]int
}

// ConnStrings returns the connection strings in text, a decoded string
// literal or configuration value. URLs are found anywhere in it; a
// keyword/value or Npgsql string must be the whole text. Malformed input
// gives no connection string rather than an error, and a text without '='
// (which no parameter can be without) gives none at all.
func ConnStrings(text string) []ConnString {
	if !strings.Contains(text, "=") {
		return nil // no parameters
	}
	lower := lowerASCII(text)
	var out []ConnString
	for i := 0; i < len(text); {
		start, body, form := nextURL(lower, i)
		if start < 0 {
			break
		}
		end := urlEnd(text, start, body)
		out = append(out, parseURL(text, start, body, end, form))
		i = max(end, body)
	}
	if len(out) > 0 {
		return out
	}
	if strings.Contains(text, ";") {
		if c, ok := parseNpgsql(text); ok {
			return []ConnString{c}
		}
	}
	if c, ok := parseKeywords(text); ok {
		return []ConnString{c}
	}
	return nil
}

// lowerASCII lower-cases ASCII letters only, so offsets stay the same.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isAlnum(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// nextURL finds the next URL at or after from in lower (the text,
// lower-cased): it returns the offset of its scheme, the offset where what
// follows the scheme starts, and its form; start is -1 when there is none.
func nextURL(lower string, from int) (start, body int, form ConnForm) {
	for from < len(lower) {
		k := strings.Index(lower[from:], "postgres")
		if k < 0 {
			return -1, 0, 0
		}
		k += from
		from = k + len("postgres")
		j := from
		if strings.HasPrefix(lower[j:], "ql") {
			j += 2
		}
		jdbc := k >= 5 && lower[k-5:k] == "jdbc:"
		switch {
		case jdbc && j < len(lower) && lower[j] == ':' && j-k == len("postgresql"):
			return k - 5, j + 1, ConnJDBC
		case k > 0 && isAlnum(lower[k-1]):
			continue // part of a longer word (mypostgres://)
		case strings.HasPrefix(lower[j:], "://"):
			return k, j + 3, ConnURL
		case j < len(lower) && lower[j] == '+' && j-k == len("postgresql"):
			// SQLAlchemy: postgresql+psycopg2://
			d := j + 1
			for d < len(lower) && (isAlnum(lower[d]) || lower[d] == '_') {
				d++
			}
			if d > j+1 && strings.HasPrefix(lower[d:], "://") {
				return k, d + 3, ConnURL
			}
		}
	}
	return -1, 0, 0
}

// urlEnd returns where the URL at start ends. A URL that is the whole text
// (or the value of an assignment that is: DATABASE_URL=postgres://…) runs
// to the end of its line, spaces included, since some write options
// unescaped; a URL inside other text ends at a blank or a quote.
func urlEnd(text string, start, body int) int {
	whole := wholeValue(text[:start])
	i := body
	for i < len(text) {
		c := text[i]
		if c == '\n' || c == '\r' {
			break
		}
		blank := c == ' ' || c == '\t'
		if !whole && (blank || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>') {
			break
		}
		if whole && blank && nextIsURL(text[i:]) {
			break // a second URL: primary=postgres://… replica=postgres://…
		}
		i++
	}
	for i > body && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	return i
}

// nextIsURL reports whether the word after the blanks at the start of s
// holds a URL.
func nextIsURL(s string) bool {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	return strings.Contains(s, "://") || strings.Contains(lowerASCII(s), "jdbc:")
}

// wholeValue reports whether the text before a URL leaves the URL the
// whole value: nothing but blanks, optionally after a NAME= or NAME:
// assignment.
func wholeValue(before string) bool {
	s := strings.TrimLeft(before, " \t\r\n")
	if s == "" {
		return true
	}
	i := 0
	for i < len(s) && (isAlnum(s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-') {
		i++
	}
	if i == 0 || !(isAlnum(s[0]) || s[0] == '_') {
		return false
	}
	rest := strings.TrimLeft(s[i:], " \t")
	if rest == "" || rest[0] != '=' && rest[0] != ':' {
		return false
	}
	return strings.TrimLeft(rest[1:], " \t") == ""
}

// parseURL parses the URL at text[start:end] whose scheme ends at body.
func parseURL(text string, start, body, end int, form ConnForm) ConnString {
	c := ConnString{Form: form, Start: start, End: end}
	i := body
	if form == ConnJDBC && strings.HasPrefix(text[i:end], "//") {
		i += 2
	}
	// The authority (user information and hosts) runs to the first '/',
	// '?' or '#'.
	a := i
	for a < end && text[a] != '/' && text[a] != '?' && text[a] != '#' {
		a++
	}
	if at := strings.LastIndexByte(text[i:a], '@'); at >= 0 {
		if colon := strings.IndexByte(text[i:i+at], ':'); colon >= 0 && colon+1 < at {
			c.Secrets = append(c.Secrets, [2]int{i + colon + 1, i + at})
		}
	}
	q := strings.IndexByte(text[a:end], '?')
	if q < 0 {
		return c
	}
	qs := a + q + 1
	qe := end
	if h := strings.IndexByte(text[qs:end], '#'); h >= 0 {
		qe = qs + h
	}
	for p := qs; p < qe; {
		e := p
		for e < qe && text[e] != '&' {
			e++
		}
		if eq := strings.IndexByte(text[p:e], '='); eq > 0 {
			key, _ := urlDecode(text, p, p+eq)
			val, vmap := urlDecode(text, p+eq+1, e)
			c.Params = append(c.Params, ConnParam{Key: key, Value: val, KeyStart: p, End: e, vmap: vmap})
			if strings.EqualFold(key, "password") && e > p+eq+1 {
				c.Secrets = append(c.Secrets, [2]int{p + eq + 1, e})
			}
		}
		p = e + 1
	}
	return c
}

// urlDecode decodes the URL query text[from:to]: %XX escapes, and '+' as
// a blank (as pgx, pgjdbc and most URL libraries read a query; libpq would
// keep the '+', which means nothing in the parameters analysed). It also
// returns the text offset of every decoded byte, and to after the last.
func urlDecode(text string, from, to int) (string, []int) {
	b := make([]byte, 0, to-from)
	m := make([]int, 0, to-from+1)
	for i := from; i < to; {
		c := text[i]
		switch {
		case c == '%' && i+2 < to && isHex(text[i+1]) && isHex(text[i+2]):
			b = append(b, byte(hexVal(text[i+1])<<4|hexVal(text[i+2])))
			m = append(m, i)
			i += 3
		case c == '+':
			b = append(b, ' ')
			m = append(m, i)
			i++
		default:
			b = append(b, c)
			m = append(m, i)
			i++
		}
	}
	m = append(m, to)
	return string(b), m
}

// libpqKeywords are the keywords of libpq's connection strings; anything
// else in a keyword/value string is a run-time parameter, which lib/pq
// passes on as a startup parameter and libpq refuses.
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "require_auth": true, "channel_binding": true, "connect_timeout": true,
	"client_encoding": true, "options": true, "application_name": true, "fallback_application_name": true,
	"keepalives": true, "keepalives_idle": true, "keepalives_interval": true, "keepalives_count": true,
	"tcp_user_timeout": true, "replication": true, "gssencmode": true, "sslmode": true,
	"sslnegotiation": true, "sslcompression": true, "sslcert": true, "sslkey": true, "sslpassword": true,
	"sslcertmode": true, "sslrootcert": true, "sslcrl": true, "sslcrldir": true, "sslsni": true,
	"requirepeer": true, "ssl_min_protocol_version": true, "ssl_max_protocol_version": true,
	"min_protocol_version": true, "max_protocol_version": true, "krbsrvname": true, "gsslib": true,
	"gssdelegation": true, "service": true, "target_session_attrs": true, "load_balance_hosts": true,
	"oauth_issuer": true, "oauth_client_id": true, "oauth_client_secret": true, "oauth_scope": true,
	// lib/pq's own.
	"disable_prepared_binary_result": true, "binary_parameters": true, "krbspn": true,
}

// connAnchors are keywords one of which a keyword/value string must have
// to be taken for a connection string.
var connAnchors = map[string]bool{"host": true, "hostaddr": true, "dbname": true, "user": true, "port": true, "service": true}

// RuntimeParams are run-time parameters (lower-case) that drivers passing
// unknown connection parameters on (pgx, lib/pq, asyncpg, node-postgres)
// send as startup parameters: the settings people put in connection
// strings. Only these are taken from URLs and keyword/value strings, so
// that a driver's or framework's own URL parameters are never mistaken for
// server settings.
var RuntimeParams = map[string]bool{
	"search_path": true, "statement_timeout": true, "lock_timeout": true,
	"idle_in_transaction_session_timeout": true, "idle_session_timeout": true, "transaction_timeout": true,
	"default_transaction_isolation": true, "default_transaction_read_only": true,
	"default_transaction_deferrable": true, "extra_float_digits": true, "work_mem": true,
	"maintenance_work_mem": true, "temp_buffers": true, "role": true, "session_replication_role": true,
	"row_security": true, "client_min_messages": true, "synchronous_commit": true, "timezone": true,
	"datestyle": true, "intervalstyle": true, "jit": true, "plan_cache_mode": true, "bytea_output": true,
	"lc_messages": true, "lc_monetary": true, "lc_numeric": true, "lc_time": true,
	"default_text_search_config": true, "temp_tablespaces": true, "default_tablespace": true,
	"standard_conforming_strings": true, "log_min_duration_statement": true, "log_statement": true,
	"geqo": true, "random_page_cost": true, "effective_cache_size": true, "enable_seqscan": true,
}

// parseKeywords parses text as a libpq keyword/value string (as libpq's
// conninfo parser does: blanks separate pairs, a value is single-quoted or
// runs to the next blank, a backslash escapes the next character). It
// fails unless every pair is well formed, every keyword is a libpq keyword
// or a run-time parameter, and one keyword names the server or database.
func parseKeywords(text string) (ConnString, bool) {
	c := ConnString{Form: ConnKeywords, Start: -1}
	anchored := false
	i := 0
	for {
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if i >= len(text) {
			break
		}
		ks := i
		for i < len(text) && text[i] != '=' && !isBlank(text[i]) {
			i++
		}
		key := text[ks:i]
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if i >= len(text) || text[i] != '=' || !isKeyword(key) {
			return ConnString{}, false
		}
		i++
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		var val []byte
		var vmap []int
		if i < len(text) && text[i] == '\'' {
			i++
			closed := false
			for i < len(text) {
				if text[i] == '\'' {
					closed = true
					i++
					break
				}
				if text[i] == '\\' && i+1 < len(text) {
					i++
				}
				val = append(val, text[i])
				vmap = append(vmap, i)
				i++
			}
			if !closed {
				return ConnString{}, false
			}
		} else {
			for i < len(text) && !isBlank(text[i]) {
				if text[i] == ';' {
					return ConnString{}, false // ADO.NET's separator, not libpq's
				}
				if text[i] == '\\' && i+1 < len(text) {
					i++
				}
				val = append(val, text[i])
				vmap = append(vmap, i)
				i++
			}
		}
		vmap = append(vmap, i)
		lk := strings.ToLower(key)
		if !libpqKeywords[lk] && !RuntimeParams[lk] {
			return ConnString{}, false
		}
		anchored = anchored || connAnchors[lk]
		if c.Start < 0 {
			c.Start = ks
		}
		c.End = i
		c.Params = append(c.Params, ConnParam{Key: key, Value: string(val), KeyStart: ks, End: i, vmap: vmap})
		if lk == "password" && len(val) > 0 {
			c.Secrets = append(c.Secrets, [2]int{vmap[0], i})
		}
	}
	if !anchored {
		return ConnString{}, false
	}
	return c, true
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isKeyword(k string) bool {
	if k == "" || !(isAlnum(k[0]) && !isDigit(k[0]) || k[0] == '_') {
		return false
	}
	for i := 1; i < len(k); i++ {
		if !isAlnum(k[i]) && k[i] != '_' {
			return false
		}
	}
	return true
}

// NpgsqlKey normalises an Npgsql connection string keyword for comparison:
// lower case without blanks ("Search Path" and "SearchPath" are one).
func NpgsqlKey(k string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(k), " ", ""))
}

// parseNpgsql parses text as an ADO.NET connection string: pairs
// separated by ';', a value optionally quoted with " or ' (a doubled quote
// stands for itself). It fails unless every part is a pair with a keyword
// of letters, digits and blanks, one keyword names the server (Host or
// Server) and another is one of npgsqlCore.
func parseNpgsql(text string) (ConnString, bool) {
	c := ConnString{Form: ConnNpgsql, Start: -1}
	server := false
	pairs := 0
	for i := 0; i < len(text); {
		for i < len(text) && (isBlank(text[i]) || text[i] == ';') {
			i++
		}
		if i >= len(text) {
			break
		}
		ks := i
		for i < len(text) && text[i] != '=' && text[i] != ';' {
			i++
		}
		if i >= len(text) || text[i] != '=' {
			return ConnString{}, false
		}
		key := strings.TrimSpace(text[ks:i])
		if !npgsqlKeyword(key) {
			return ConnString{}, false
		}
		i++
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		var val []byte
		var vmap []int
		if i < len(text) && (text[i] == '"' || text[i] == '\'') {
			q := text[i]
			i++
			closed := false
			for i < len(text) {
				if text[i] == q {
					if i+1 < len(text) && text[i+1] == q {
						val = append(val, q)
						vmap = append(vmap, i)
						i += 2
						continue
					}
					closed = true
					i++
					break
				}
				val = append(val, text[i])
				vmap = append(vmap, i)
				i++
			}
			if !closed {
				return ConnString{}, false
			}
			for i < len(text) && text[i] != ';' {
				if !isBlank(text[i]) {
					return ConnString{}, false // text after the closing quote
				}
				i++
			}
		} else {
			vs := i
			for i < len(text) && text[i] != ';' {
				i++
			}
			ve := i
			for ve > vs && isBlank(text[ve-1]) {
				ve--
			}
			for k := vs; k < ve; k++ {
				val = append(val, text[k])
				vmap = append(vmap, k)
			}
		}
		end := i
		if len(vmap) > 0 {
			end = vmap[len(vmap)-1] + 1
		}
		vmap = append(vmap, end)
		nk := NpgsqlKey(key)
		server = server || nk == "host" || nk == "server"
		if npgsqlCore[nk] {
			pairs++
		}
		if c.Start < 0 {
			c.Start = ks
		}
		c.End = end
		c.Params = append(c.Params, ConnParam{Key: key, Value: string(val), KeyStart: ks, End: end, vmap: vmap})
		if (nk == "password" || nk == "pwd") && len(val) > 0 {
			c.Secrets = append(c.Secrets, [2]int{vmap[0], end})
		}
	}
	if !server || pairs < 1 {
		return ConnString{}, false
	}
	return c, true
}

// npgsqlCore are Npgsql keywords (normalised by NpgsqlKey) one of which a
// connection string must have besides the server, so that any other
// "key=value;host=…" text is not taken for one.
var npgsqlCore = map[string]bool{
	"port": true, "database": true, "db": true, "username": true, "userid": true, "user": true,
	"uid": true, "password": true, "pwd": true, "searchpath": true, "options": true,
	"maxautoprepare": true, "applicationname": true, "pooling": true, "sslmode": true,
	"timeout": true, "commandtimeout": true, "maxpoolsize": true, "maximumpoolsize": true,
	"minpoolsize": true, "minimumpoolsize": true, "timezone": true, "integratedsecurity": true,
}

func npgsqlKeyword(k string) bool {
	if k == "" || !isAlnum(k[0]) || isDigit(k[0]) {
		return false
	}
	for i := 1; i < len(k); i++ {
		if !isAlnum(k[i]) && k[i] != ' ' && k[i] != '_' {
			return false
		}
	}
	return true
}

// OptionSetting is one run-time setting of a startup options string.
type OptionSetting struct {
	// Name is lower-case with '-' turned into '_', as the server reads it.
	Name, Value string
	// Start and End are the range of the switch (-c name=value,
	// --name=value) in the options string.
	Start, End int
}

// OptionSettings returns the settings of a startup options string (the
// "options" connection parameter), read as the server reads it
// (pgparams.Options): -c name=value, -cname=value and --name=value. Other
// switches and malformed settings are left out.
func OptionSettings(opts string) []OptionSetting {
	var out []OptionSetting
	for _, o := range pgparams.Options(opts, settingName) {
		if o.Err == nil {
			out = append(out, OptionSetting{Name: strings.ToLower(o.Name), Value: o.Value, Start: o.Start, End: o.End})
		}
	}
	return out
}

// settingName reports whether n, with its dashes read as underscores, can
// name a run-time parameter (custom settings have a dot).
func settingName(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !isAlnum(c) && c != '_' && c != '.' {
			return false
		}
	}
	return true
}
