package pooler

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
)

// Relay is how the pooler relays in transaction mode.
type Relay string

const (
	// RelayLoop relays on a few event loops: each waits on an epoll set
	// for all of its clients and servers, as PgBouncer's single loop does
	// (docs/design-event-loop.md).
	RelayLoop Relay = "loop"
	// RelayBridged runs the event loops with every socket bridged
	// (bridge.go), as on systems without epoll: a test knob.
	RelayBridged Relay = "bridged"
)

// Mode is how long a client keeps a server connection.
type Mode string

// Pool modes.
const (
	// ModeTransaction attaches a server for one transaction at a time.
	ModeTransaction Mode = "transaction"
	// ModeSession keeps one server per client for its whole session.
	ModeSession Mode = "session"
	// ModeRecord is session mode plus capture: each client keeps its own
	// server connection, so the application behaves as without the proxy,
	// and Config.Capture records its traffic.
	ModeRecord Mode = "record"
)

// AuthType is how clients authenticate to the pooler.
type AuthType string

// Client authentication methods.
const (
	AuthTrust AuthType = "trust"
	AuthMD5   AuthType = "md5"
	AuthSCRAM AuthType = "scram-sha-256"
	// AuthCert logs in a client whose TLS client certificate (verified
	// against Config.ClientTLS.ClientCAs: ClientTLSMode verify-ca or
	// verify-full) has the user name as its common name.
	AuthCert AuthType = "cert"
)

// TLSMode is how clients use TLS: PgBouncer's client_tls_sslmode.
type TLSMode string

// Client TLS modes.
const (
	// TLSDisable declines TLS (the answer to SSLRequest is 'N').
	TLSDisable TLSMode = "disable"
	// TLSAllow and TLSPrefer accept TLS from clients that ask for it,
	// and plaintext from the others.
	TLSAllow  TLSMode = "allow"
	TLSPrefer TLSMode = "prefer"
	// TLSRequire refuses clients that do not use TLS.
	TLSRequire TLSMode = "require"
	// TLSVerifyCA and TLSVerifyFull also require a client certificate
	// signed by one of Config.ClientTLS.ClientCAs (for a client's
	// certificate the two are the same, as in PgBouncer).
	TLSVerifyCA   TLSMode = "verify-ca"
	TLSVerifyFull TLSMode = "verify-full"
)

// requires reports whether the mode refuses plaintext clients.
func (m TLSMode) requires() bool {
	return m == TLSRequire || m == TLSVerifyCA || m == TLSVerifyFull
}

// DefaultMaxMessageSize is the largest client message accepted unless
// Config.MaxMessageSize says otherwise.
const DefaultMaxMessageSize = 64 << 20

// DefaultMaxPendingOutput is Config.MaxPendingOutput's default.
const DefaultMaxPendingOutput = 256 << 10

// Config is what a Proxy needs. Zero durations and sizes take the
// defaults documented on each field.
type Config struct {
	// Listen is the TCP address clients connect to.
	Listen string
	// SoReusePort sets SO_REUSEPORT on the TCP listener, so that several
	// pooler processes can listen on the same address (PgBouncer's
	// so_reuseport); each still runs all its relay loops. Linux.
	SoReusePort bool
	// UnixSocketDir, when set, is a directory where the pooler also
	// listens on a Unix-domain socket named as PostgreSQL names its own
	// (.s.PGSQL.<the Listen port>), as PgBouncer's unix_socket_dir.
	// Clients on it are local: the TLS requirement does not apply to them
	// (PostgreSQL and libpq use no TLS on Unix sockets).
	UnixSocketDir string
	// Upstream is the server's connection URL or DSN. It gives host,
	// port, TLS settings and the default user, password and database.
	Upstream string
	// Mode is transaction, session or record (default transaction).
	Mode Mode
	// PoolSize is the maximum number of server connections per
	// (database, user) (default 20).
	PoolSize int
	// MaxClientConn is the maximum number of clients at once (default 1000).
	MaxClientConn int
	// MaxDBConnections caps the server connections of one database over
	// all its pools (users); MaxUserConnections those of one user over
	// all its databases (PgBouncer's max_db_connections and
	// max_user_connections; 0: no cap). A client that needs a new server
	// beyond a cap waits in its pool's queue, within QueryWaitTimeout,
	// until a server of the database (or user) closes; an idle server of
	// another pool under the same cap is closed to make room.
	MaxDBConnections   int
	MaxUserConnections int
	// QueryTimeout closes a client whose server has owed it an answer
	// for this long since the client's last message, with FATAL "query
	// timeout"; the query is cancelled and the server closed
	// (PgBouncer's query_timeout; 0: never). Checked every second.
	QueryTimeout time.Duration
	// StatsUsers may log in to the admin console for the SHOW commands
	// only (PgBouncer's stats_users); other commands are refused.
	StatsUsers []string
	// Databases, when set, is the allow-list of databases clients may
	// connect to (pgbouncer.ini's [databases]), keyed by the name a
	// client asks for; the key "*" admits any name. A client asking for
	// a database not listed gets FATAL 3D000. Empty: any name.
	Databases map[string]Database
	// ClientLoginTimeout bounds a client's startup and authentication
	// (default 60s).
	ClientLoginTimeout time.Duration
	// IdleTransactionTimeout closes a client that has been idle inside a
	// transaction this long, with FATAL "idle transaction timeout"; its
	// server is closed, as every server whose client left inside a
	// transaction (PgBouncer's idle_transaction_timeout; 0: never).
	IdleTransactionTimeout time.Duration
	// ClientIdleTimeout closes a client that has sent nothing this long
	// outside a transaction (PgBouncer's client_idle_timeout; 0: never).
	ClientIdleTimeout time.Duration
	// MaxLoginClients bounds the connections still logging in (default
	// 512): more are refused at once with FATAL 53300. They are not
	// counted against MaxClientConn until they authenticate.
	MaxLoginClients int
	// MaxLoginsPerAddress bounds the connections of one client address
	// (TCP; Unix sockets are not counted) logging in at once (default
	// 128), so that one address cannot hold every MaxLoginClients slot.
	MaxLoginsPerAddress int
	// LoginFailureBackoff is the longest a failed login's answer is held
	// back once its address or its user failed several times in a row
	// (default 5s; 0: never).
	LoginFailureBackoff time.Duration
	// ClientTLSMode is how clients use TLS (default disable).
	ClientTLSMode TLSMode
	// ClientTLS is the pooler's TLS configuration towards clients, with
	// its certificate (Certificates or GetCertificate) and, for the
	// verify modes, ClientCAs; required unless ClientTLSMode is disable.
	// The pooler sets ClientAuth from the mode. RELOAD replaces it with
	// the one Reload returns (new certificates for new clients).
	ClientTLS *tls.Config
	// QueryWaitTimeout is how long a client may wait for a server (default 120s).
	QueryWaitTimeout time.Duration
	// ServerIdleTimeout closes servers idle this long (default 600s).
	ServerIdleTimeout time.Duration
	// ServerLifetime retires servers this old at their next release (default 3600s).
	ServerLifetime time.Duration
	// ServerConnectTimeout bounds one connection attempt (default 15s).
	ServerConnectTimeout time.Duration
	// ServerLoginRetry is the longest a pool whose server logins fail
	// for a reason that may pass (the server is down, starting or full)
	// waits between attempts (PgBouncer's server_login_retry, default
	// 15s); the waits double from 250ms up to it. Meanwhile a client that
	// finds no server in the pool gets FATAL with the server's error at
	// once, and no attempt is made that no client waits for.
	ServerLoginRetry time.Duration
	// ShutdownTimeout is how long Shutdown lets transactions finish (default 30s).
	ShutdownTimeout time.Duration
	// AuthType is how clients log in (default trust).
	AuthType AuthType
	// Users maps user names to secrets from the auth file (plain text,
	// "md5…" or "SCRAM-SHA-256$…").
	Users Userlist
	// AuthUser, when set, makes the pooler look up the secret of a user
	// that is not in Users on the server, as PgBouncer's auth_user: it
	// logs in as AuthUser (with its password from Users, or the upstream
	// URL's when it is the URL's user, or none when the server trusts it;
	// a SCRAM verifier in Users works only once a client logged in as it)
	// and runs AuthQuery with the user's name as $1. A client is checked
	// against what it returns (an md5 hash or a SCRAM verifier); an
	// unknown user gets the same answer as a wrong password. What the
	// query found is used for 10 seconds, then looked up again. A pool of
	// such a user logs in to the server with that secret (passthrough.go).
	// A Databases entry may name its own AuthUser, AuthQuery and
	// AuthDBName.
	AuthUser string
	// AuthQuery returns the user name and its secret for $1: no row, or a
	// NULL name, for no such user; a NULL secret for a user no password
	// logs in as (default DefaultAuthQuery).
	AuthQuery string
	// AuthDBName names the Databases entry (or, without Databases, the
	// server database) the lookup runs in (default: the database the
	// client asked for).
	AuthDBName string
	// InsecureTrust allows trust on a non-loopback listen address.
	InsecureTrust bool
	// MaxMessageSize is the largest client message (default 64 MiB).
	MaxMessageSize int
	// MaxPendingOutput bounds what a socket may hold back unwritten
	// before the pooler stops relaying into it (it stops reading the other
	// side) until it drains (default DefaultMaxPendingOutput).
	MaxPendingOutput int
	// MaxOwedAnswers bounds the answers a server may owe a tracked client
	// before the client's next message waits for them (default
	// engine.DefaultMaxOwed).
	MaxOwedAnswers int
	// MaxPreparedStatements bounds the protocol-level prepared statements
	// the pooler keeps per server connection in transaction mode (default
	// 200). A negative value turns the rewriting of prepared statements
	// off (the command line's 0).
	MaxPreparedStatements int
	// Logger receives the proxy's logs (default slog.Default()).
	Logger *slog.Logger
	// Classifier tells the pooler what statements do to session state;
	// with it, OnSessionState applies in transaction mode. Without it the
	// pooler passes session state through unseen.
	Classifier StateClassifier
	// OnSessionState is the session-state policy in transaction mode
	// (default preserve).
	OnSessionState Policy
	// Capture, when set, records every client session (required in
	// record mode). The proxy never closes it: the caller closes it after
	// Serve returns, which flushes it.
	Capture *capture.Writer
	// TrustedRoutines are routines the operator vouches change no session
	// state: "name" (a call of that name, qualified or not), "schema.name"
	// (a call written so), or "extension:NAME" (every routine that belongs
	// to that extension, as pg_depend records it). Calls of them are not
	// followed by a read of the server's state (routines.go). A trusted
	// routine that does change state leaks it.
	TrustedRoutines []string
	// AdminUsers may log in to the admin console, the virtual database
	// "pgpoolcheck" (admin.go); they authenticate like any client.
	AdminUsers []string
	// Reload, when set, is what the admin console's RELOAD runs: it is
	// given a copy of the running configuration to update or replace
	// (from the config files the caller read it from; proxyconfig.Load
	// builds a new one); the proxy then applies the settings the table
	// marks Reload or Live (settings.go), with the users and client
	// certificates loaded from their files, and logs the others that
	// changed as needing a restart.
	Reload func(*Config) error
	// PeerID, from 1 to MaxPeerID, makes the pooler one of several
	// behind one address (cancel.go): the cancel keys it gives carry it,
	// and a CancelRequest for another peer's key is sent on to that peer
	// at its address in Peers (host:port, or a Unix socket path). Peers
	// lists every instance, this one included (0: no peering).
	PeerID int
	Peers  map[int]string
	// Relay is how transaction mode relays (default loop; Linux only,
	// elsewhere always goroutine).
	Relay Relay
	// Loops is how many event loops the loop relay runs (default 1, as
	// PgBouncer runs one: on a machine whose cores PostgreSQL and the
	// clients share, more loops measured slower; see BENCHMARKS.md).
	Loops int
	// MetricsListen, when set with MetricsHandler, is the address of an
	// HTTP server the proxy runs from Listen to Shutdown, serving
	// MetricsHandler(proxy) on /metrics (see package pooler/metrics).
	MetricsListen  string
	MetricsHandler func(*Proxy) http.Handler

	// The settings the caller turns into the fields above (the command
	// line's loader: internal/proxyconfig): the auth file (Users), the
	// client TLS files (ClientTLS), the server TLS settings (added to
	// Upstream), logging (Logger) and the capture file (Capture). The
	// pooler only shows them (SHOW CONFIG) and compares them at RELOAD.
	AuthFile                                             string
	ClientTLSCertFile, ClientTLSKeyFile, ClientTLSCAFile string
	ClientTLSProtocols                                   string
	ServerTLSMode                                        string
	ServerTLSCAFile, ServerTLSCertFile, ServerTLSKeyFile string
	LogLevel, LogFormat                                  string
	CaptureFile                                          string
	CaptureMaxBytes                                      int
	Redact                                               bool

	// dial, when set, connects to the server instead of pgconn's dialer
	// (tests: a connection whose login write is slow).
	dial pgconn.DialFunc
}

// Database is an entry of Config.Databases.
type Database struct {
	// DBName is the server database the entry's clients get ("": the
	// name they asked for; otherwise the name is an alias).
	DBName string
	// PoolSize is the entry's pool size per user (0: Config.PoolSize).
	PoolSize int
	// AuthUser, AuthQuery and AuthDBName replace Config's for the
	// clients of the entry ("": Config's).
	AuthUser, AuthQuery, AuthDBName string
	// MaxDBConnections caps the entry's server connections over all its
	// users (0: Config.MaxDBConnections).
	MaxDBConnections int
}

// DefaultAuthQuery is PgBouncer's default auth_query: the secret of a
// user that may log in, NULL once its password expired.
const DefaultAuthQuery = "SELECT rolname, CASE WHEN rolvaliduntil < now() THEN NULL ELSE rolpassword END FROM pg_authid WHERE rolname=$1 AND rolcanlogin"

// ParseDatabase reads an allow-list entry as the command line writes it:
// NAME, NAME=DBNAME, NAME:POOL_SIZE or NAME=DBNAME:POOL_SIZE, optionally
// followed by :MAX_DB_CONNECTIONS (NAME:0:10 keeps the default pool size
// and caps the database at 10 server connections); NAME "*" admits any
// database name. A URL query may follow, with the entry's auth_user,
// auth_dbname and auth_query, URL-encoded:
// app?auth_user=pgbouncer&auth_query=SELECT+...
func ParseDatabase(spec string) (string, Database, error) {
	var d Database
	rest := strings.TrimSpace(spec)
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, err := url.ParseQuery(rest[i+1:])
		if err != nil {
			return "", d, fmt.Errorf("database %q: %v", spec, err)
		}
		for k, v := range q {
			if len(v) != 1 {
				return "", d, fmt.Errorf("database %q: %s given %d times", spec, k, len(v))
			}
			switch k {
			case "auth_user":
				d.AuthUser = v[0]
			case "auth_dbname":
				d.AuthDBName = v[0]
			case "auth_query":
				d.AuthQuery = v[0]
			default:
				return "", d, fmt.Errorf("database %q: unknown setting %q (want auth_user, auth_dbname or auth_query)", spec, k)
			}
		}
		rest = strings.TrimSpace(rest[:i])
	}
	var nums []int
	for range 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(strings.TrimSpace(rest[i+1:]))
		if err != nil || n < 0 {
			return "", d, fmt.Errorf("database %q: %q is not a whole number (pool size or max_db_connections)", spec, rest[i+1:])
		}
		nums, rest = append([]int{n}, nums...), rest[:i]
	}
	switch len(nums) {
	case 1:
		if nums[0] < 1 {
			return "", d, fmt.Errorf("database %q: pool size %d: want a whole number from 1", spec, nums[0])
		}
		d.PoolSize = nums[0]
	case 2:
		d.PoolSize, d.MaxDBConnections = nums[0], nums[1]
	}
	name, dbname, alias := strings.Cut(rest, "=")
	name, dbname = strings.TrimSpace(name), strings.TrimSpace(dbname)
	if name == "" || alias && dbname == "" || strings.Contains(rest, ":") {
		return "", d, fmt.Errorf("database %q: want NAME, NAME=DBNAME, NAME:POOL_SIZE or NAME=DBNAME:POOL_SIZE, optionally followed by :MAX_DB_CONNECTIONS", spec)
	}
	if name == "*" && alias {
		return "", d, fmt.Errorf("database %q: the entry * cannot name a server database", spec)
	}
	if dbname != name {
		d.DBName = dbname
	}
	return name, d, nil
}

// withDefaults returns c with every setting it leaves unset at its
// default (the settings table's).
func (c *Config) withDefaults() Config {
	d := *c
	applyDefaults(&d)
	if d.OnSessionState == PolicyOff {
		d.Classifier = nil
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d
}

// validate checks the configuration and parses the upstream URL.
func (c *Config) validate() (*pgconn.Config, error) {
	if err := c.checkClientTLS(); err != nil {
		return nil, err
	}
	if err := c.checkPeers(); err != nil {
		return nil, err
	}
	if err := checkSettings(c); err != nil {
		return nil, err
	}
	if c.AuthType == AuthCert && c.ClientTLSMode != TLSVerifyCA && c.ClientTLSMode != TLSVerifyFull {
		return nil, errors.New("auth type cert needs client TLS mode verify-ca or verify-full (client certificates verified against a CA)")
	}
	if c.Mode == ModeTransaction && c.OnSessionState == PolicyReject && c.MaxPreparedStatements < 0 {
		// A refused Parse is answered in its place among the answers of
		// a pipeline, which only the prepared-statement tracking can
		// place: without it, statements prepared with the extended
		// protocol would pass unrefused.
		return nil, errors.New("on_session_state reject needs max_prepared_statements above 0 (without tracking, statements prepared with the extended protocol could not be refused)")
	}
	if c.Mode == ModeRecord && c.Capture == nil {
		return nil, errors.New("record mode needs a capture file")
	}
	if c.AuthType != AuthTrust && c.AuthType != AuthCert && c.Users == nil && !c.usesAuthQuery() {
		return nil, fmt.Errorf("auth type %s needs an auth file or an auth user", c.AuthType)
	}
	if c.usesAuthQuery() && c.AuthType != AuthMD5 && c.AuthType != AuthSCRAM {
		return nil, fmt.Errorf("an auth user (auth_query) needs auth type md5 or scram-sha-256, not %s", c.AuthType)
	}
	if c.AuthDBName != "" && len(c.Databases) > 0 {
		if _, ok := c.Databases[c.AuthDBName]; !ok {
			return nil, fmt.Errorf("auth dbname %s is not a database entry", c.AuthDBName)
		}
	}
	if c.AuthType == AuthTrust && !c.InsecureTrust && !isLoopback(c.Listen) {
		return nil, fmt.Errorf("trust authentication on non-loopback address %s: use md5 or scram-sha-256, or --insecure-trust", c.Listen)
	}
	if c.Upstream == "" {
		return nil, errors.New("no upstream")
	}
	pc, err := pgconn.ParseConfig(c.Upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %s", capture.SafeUpstream(c.Upstream), WithoutPassword(err.Error(), c.Upstream))
	}
	return pc, nil
}

// WithoutPassword returns msg, an error about the connection string conn,
// with the password conn holds masked: pgconn's errors quote the string
// they could not read, password included.
func WithoutPassword(msg, conn string) string {
	var pws []string
	if _, rest, ok := strings.Cut(conn, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				pws = append(pws, pw)
				if u, err := url.PathUnescape(pw); err == nil && u != pw {
					pws = append(pws, u)
				}
			}
		}
	}
	for _, f := range strings.FieldsFunc(conn, func(r rune) bool { return r == ' ' || r == '&' || r == '?' }) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(strings.TrimSpace(k), "password") && v != "" {
			pws = append(pws, strings.Trim(v, "'"))
		}
	}
	for _, pw := range pws {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
		if q := strconv.Quote(pw); len(q) > 2 {
			// Go's quoting of a string with special characters.
			msg = strings.ReplaceAll(msg, q[1:len(q)-1], "xxxxx")
		}
	}
	return msg
}

// usesAuthQuery reports whether some clients are looked up on the server.
func (c *Config) usesAuthQuery() bool {
	if c.AuthUser != "" {
		return true
	}
	for _, db := range c.Databases {
		if db.AuthUser != "" {
			return true
		}
	}
	return false
}

// checkPeers checks PeerID against Peers.
func (c *Config) checkPeers() error {
	if c.PeerID < 0 || c.PeerID > MaxPeerID {
		return fmt.Errorf("peer id %d: want 1 to %d (0: no peering)", c.PeerID, MaxPeerID)
	}
	if c.PeerID == 0 {
		if len(c.Peers) > 0 {
			return errors.New("peers are listed but this instance has no peer id: set one (the list names every instance, this one included)")
		}
		return nil
	}
	if _, ok := c.Peers[c.PeerID]; !ok && len(c.Peers) > 0 {
		return fmt.Errorf("peer id %d is not in the peer list (the list names every instance, this one included)", c.PeerID)
	}
	for id, addr := range c.Peers {
		if id < 1 || id > MaxPeerID {
			return fmt.Errorf("peer %d: want an id from 1 to %d", id, MaxPeerID)
		}
		if strings.HasPrefix(addr, "/") {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("peer %d: address %q: want host:port or a Unix socket path", id, addr)
		}
	}
	return nil
}

// ParsePeer reads a peer as the command line writes it: ID=HOST:PORT (or
// ID=/path/to/socket).
func ParsePeer(spec string) (int, string, error) {
	id, addr, ok := strings.Cut(spec, "=")
	n, err := strconv.Atoi(strings.TrimSpace(id))
	if !ok || err != nil || strings.TrimSpace(addr) == "" {
		return 0, "", fmt.Errorf("peer %q: want ID=HOST:PORT", spec)
	}
	return n, strings.TrimSpace(addr), nil
}

// checkClientTLS checks ClientTLSMode against ClientTLS.
func (c *Config) checkClientTLS() error {
	switch c.ClientTLSMode {
	case TLSDisable:
		return nil
	case TLSAllow, TLSPrefer, TLSRequire, TLSVerifyCA, TLSVerifyFull:
	default:
		return fmt.Errorf("unknown client TLS mode %q (want disable, allow, prefer, require, verify-ca or verify-full)", c.ClientTLSMode)
	}
	t := c.ClientTLS
	if t == nil || len(t.Certificates) == 0 && t.GetCertificate == nil && t.GetConfigForClient == nil {
		return fmt.Errorf("client TLS mode %s needs a certificate and its key", c.ClientTLSMode)
	}
	if (c.ClientTLSMode == TLSVerifyCA || c.ClientTLSMode == TLSVerifyFull) && t.ClientCAs == nil {
		return fmt.Errorf("client TLS mode %s needs CA certificates to verify client certificates", c.ClientTLSMode)
	}
	return nil
}

// serverTLS returns the TLS configuration the pooler uses towards
// clients: t with ClientAuth set from the mode, or nil when TLS is off.
func serverTLS(mode TLSMode, t *tls.Config) *tls.Config {
	if mode == TLSDisable || t == nil {
		return nil
	}
	t = t.Clone()
	switch {
	case mode == TLSVerifyCA || mode == TLSVerifyFull:
		t.ClientAuth = tls.RequireAndVerifyClientCert
	case t.ClientCAs != nil:
		t.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		t.ClientAuth = tls.NoClientCert
	}
	if t.MinVersion == 0 {
		t.MinVersion = tls.VersionTLS12
	}
	// PostgreSQL's ALPN protocol: a client that offers ALPN must offer
	// it (as PostgreSQL 17 requires), and direct TLS needs it.
	t.NextProtos = []string{alpnPostgres}
	return t
}

// alpnPostgres is PostgreSQL's ALPN protocol name.
const alpnPostgres = "postgresql"

// isLoopback reports whether a listen address only accepts local clients.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
