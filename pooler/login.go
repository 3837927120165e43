package pooler

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// A client's login: the startup packet, the allow-list of databases,
// authentication, the parameters it carries to its servers, and the
// errors it is refused with.

// ignoredStartupParams are accepted from clients and dropped, as
// PgBouncer's ignore_startup_parameters is commonly set up to do.
var ignoredStartupParams = map[string]bool{"extra_float_digits": true}

// readAuthMessage reads a PasswordMessage-type ('p') message during login.
func (c *clientConn) readAuthMessage() ([]byte, error) {
	h, err := c.r.Peek(headerLen)
	if err != nil {
		return nil, err
	}
	typ, n, err := engine.ParseHeader(h, maxStartupLen)
	if err != nil {
		return nil, err
	}
	if typ != 'p' {
		return nil, errors.New("expected a password message")
	}
	c.r.Discard(headerLen)
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// handshake reads the startup packet, counts the client in and logs it
// in; it reports whether the client may go on to the relay.
func (c *clientConn) handshake() bool {
	p := c.proxy
	nc := c.conn
	nc.SetDeadline(time.Now().Add(p.live.login()))
	pkt, err := c.readStartupPacket()
	if err != nil || pkt == nil {
		return false
	}
	if !c.login(pkt) {
		return false
	}
	nc.SetDeadline(time.Time{})
	c.startCapture(pkt)
	return true
}

// startCapture starts the client's capture session (Config.Capture),
// once: before its server is attached at login in session and record
// mode (its setup is recorded), after the login otherwise.
func (c *clientConn) startCapture(pkt *startupPacket) {
	if w := c.proxy.cfg.Capture; w != nil && !c.admin && c.rec == nil {
		c.rec = w.StartSession(capture.SessionInfo{
			ClientAddr:      c.conn.RemoteAddr().String(),
			User:            c.user,
			Database:        c.database,
			ApplicationName: c.appName,
			Params:          pkt.params,
		})
	}
}

// readStartupPacket reads startup packets until a StartupMessage: it
// answers an SSLRequest with the TLS handshake when TLS to clients is on
// (else 'N', as a GSSENCRequest), refuses a plaintext client when the
// mode requires TLS, and handles a CancelRequest. It returns nil when the
// connection is done.
func (c *clientConn) readStartupPacket() (*startupPacket, error) {
	if b, err := c.r.Peek(1); err == nil && b[0] == tlsHandshakeRecord {
		if ok, err := c.directTLS(); !ok {
			return nil, err
		}
	}
	for i := 0; ; i++ {
		pkt, err := readStartup(c.r)
		if err != nil {
			if errors.Is(err, errUnsupportedProtocol) {
				c.send(fatal(codeFeatureNotSupported, "%v", err))
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isTimeout(err) {
				c.send(fatal(codeProtocolViolation, "invalid startup packet: %v", err))
			}
			c.proxy.log.Debug("client startup failed", "addr", c.conn.RemoteAddr().String(), "err", err)
			return nil, err
		}
		switch pkt.kind {
		case startupSSL:
			if c.tls {
				c.send(fatal(codeProtocolViolation, "SSL request on a connection already using TLS"))
				return nil, nil
			}
			cfg := c.proxy.clientTLS.Load()
			if cfg == nil {
				break // declined below, as GSSENCRequest
			}
			if c.r.Buffered() > 0 {
				// Bytes sent before the handshake would be taken as if
				// they had come encrypted (CVE-2021-23222's kind).
				c.send(fatal(codeProtocolViolation, "received unencrypted data after SSL request"))
				return nil, nil
			}
			if _, err := c.conn.Write([]byte{'S'}); err != nil {
				return nil, err
			}
			tc := tls.Server(c.conn, cfg)
			if err := tc.Handshake(); err != nil {
				level := slog.LevelInfo
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					level = slog.LevelDebug // the client went away, as clients may
				}
				c.proxy.log.Log(c.proxy.ctx, level, "client TLS handshake failed", "addr", c.conn.RemoteAddr().String(), "err", err)
				return nil, err
			}
			c.conn, c.rio, c.tls = tc, tc, true
			c.r.Reset(tc)
			continue
		case startupGSSENC:
			// Declined below.
		case startupCancel:
			c.proxy.forwardCancel(&pkt.cancel)
			return nil, nil
		default:
			if c.proxy.cfg.ClientTLSMode.requires() && !c.tls && !c.local() {
				c.send(fatal(codeInvalidAuth, "SSL required"))
				c.proxy.log.Info("client refused: TLS required", "addr", c.conn.RemoteAddr().String())
				return nil, nil
			}
			return pkt, nil
		}
		switch pkt.kind {
		case startupSSL, startupGSSENC:
			// Encryption is declined, so a client may send its startup
			// packet right behind the request without waiting for the
			// 'N' (nothing would be read as encrypted): buffered data is
			// fine. More than a few requests in a row is not.
			if i > 2 {
				c.send(fatal(codeProtocolViolation, "unexpected data after encryption request"))
				return nil, nil
			}
			if _, err := c.conn.Write([]byte{'N'}); err != nil {
				return nil, err
			}
		}
	}
}

// holdBack waits d before a failed login is answered (loginEnded), or
// until the pooler shuts down.
func (c *clientConn) holdBack(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.proxy.ctx.Done():
	}
}

// tlsHandshakeRecord is the first byte of a TLS ClientHello, which no
// startup packet starts with (its length would exceed any startup
// packet's).
const tlsHandshakeRecord = 0x16

// directTLS runs the TLS handshake of a client that starts with it, with
// no SSLRequest (PostgreSQL 17's sslnegotiation=direct): the client must
// negotiate PostgreSQL's ALPN protocol, as PostgreSQL requires. ok says
// that the startup packet follows over TLS.
func (c *clientConn) directTLS() (ok bool, err error) {
	cfg := c.proxy.clientTLS.Load()
	if cfg == nil {
		// No certificate to answer with: a TLS client cannot be
		// answered in words it reads.
		c.proxy.log.Info("client refused: direct TLS without client TLS configured", "addr", c.conn.RemoteAddr().String())
		return false, nil
	}
	raw, isRaw := c.conn.(*rawIO)
	if !isRaw {
		return false, nil
	}
	// The ClientHello's first bytes are in c.r: the handshake reads them
	// from the socket's own reader again.
	head, _ := c.r.Peek(c.r.Buffered())
	raw.unread(append([]byte(nil), head...))
	c.r.Reset(raw)
	tc := tls.Server(raw, cfg)
	if err := tc.Handshake(); err != nil {
		c.proxy.log.Info("client TLS handshake failed", "addr", c.conn.RemoteAddr().String(), "err", err)
		return false, err
	}
	if tc.ConnectionState().NegotiatedProtocol != alpnPostgres || len(raw.pre) > 0 {
		c.proxy.log.Info("client refused: direct TLS without the postgresql ALPN protocol", "addr", c.conn.RemoteAddr().String())
		tc.Close()
		return false, nil
	}
	c.conn, c.rio, c.tls = tc, tc, true
	c.r.Reset(tc)
	return true, nil
}

// login checks the startup parameters, authenticates the client and sends
// the welcome. It reports whether the client may go on.
func (c *clientConn) login(pkt *startupPacket) bool {
	p := c.proxy
	if p.closing.Load() {
		c.send(fatal(codeCannotConnectNow, "the pooler is shutting down"))
		return false
	}
	var out []byte
	if pkt.minor > 0 {
		// Offer 3.0 and list the protocol options it does not know.
		var unknown []string
		for k := range pkt.params {
			if strings.HasPrefix(k, "_pq_.") {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		out = encode(out, &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
	}
	c.user = pkt.params["user"]
	c.database = pkt.params["database"]
	if c.database == "" {
		c.database = c.user
	}
	tracked := make(map[string]string)
	var startup []engine.Setting
	// carry: the client's other startup parameters are set on every
	// server it gets. In session and record mode it has a server of its
	// own, which gets them at attach (DISCARD ALL resets them when the
	// client leaves); in transaction mode under preserve and reset they
	// follow the client as its SETs do (set at each attach, reset at each
	// release). Under allow, or with the classification off, transaction
	// mode refuses them, as PgBouncer does.
	carry := p.cfg.Mode != ModeTransaction || p.cfg.Classifier != nil &&
		(p.cfg.OnSessionState == PolicyPreserve || p.cfg.OnSessionState == PolicyReset)
	for k, v := range pkt.params {
		switch {
		case k == "user" || k == "database" || strings.HasPrefix(k, "_pq_.") || ignoredStartupParams[k]:
		case engine.IsTracked(k):
			tracked[pgparams.Canonical(k)] = v
		case carry && validParamName(k):
			startup = append(startup, engine.Setting{Name: k, Value: v})
		case carry && k == "options":
			// PGOPTIONS / options=-c name=value: the same settings.
			// The server's reading (pgparams.Options); other command-line
			// switches are refused: a pooler cannot give them to a server
			// it shares or has already started.
			sets, err := pgparams.Settings(v, validParamName)
			if err != nil {
				c.send(append(out, fatal(codeProtocolViolation, "unsupported startup parameter options: %v", err)...))
				return false
			}
			for _, st := range sets {
				if engine.IsTracked(st.Name) {
					tracked[pgparams.Canonical(st.Name)] = st.Value
				} else {
					startup = append(startup, engine.Setting(st))
				}
			}
		case p.cfg.Mode == ModeTransaction:
			c.send(append(out, fatal(codeProtocolViolation, "unsupported startup parameter: %s (in transaction mode a startup parameter is carried per client under --on-session-state preserve or reset; this pooler runs %s)", k, sessionStateText(p.cfg))...))
			return false
		default:
			c.send(append(out, fatal(codeProtocolViolation, "unsupported startup parameter: %s", k)...))
			return false
		}
	}
	c.appName = tracked["application_name"]
	c.params = &paramSet{m: tracked, sig: paramsSig(tracked)}
	c.eng.Startup = startup
	if len(out) > 0 {
		if err := c.send(out); err != nil {
			return false
		}
		out = out[:0]
	}
	if err := p.auth.authenticate(c, c.database, c.user); err != nil {
		if errors.Is(err, errAuthFailed) || errors.Is(err, errTrustUnknown) || errors.Is(err, errCertUser) {
			c.holdBack(p.loginEnded(clientHost(c.conn), c.user, false))
		}
		var le *errLookup
		if errors.As(err, &le) {
			c.send(fatal(codeInvalidAuth, "authentication failed: the pooler could not look the user up on the server"))
			p.log.Warn("client login: auth_query failed", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String(), "err", err)
		} else if errors.Is(err, errTrustUnknown) {
			c.send(fatal(codeInvalidAuth, "%v", err))
			p.log.Info("client login failed: trust, user not in the auth file", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		} else if errors.Is(err, errCertUser) {
			c.send(fatal(codeInvalidAuth, "certificate authentication failed for user %q", c.user))
			p.log.Info("client login failed: certificate", "user", c.user, "addr", c.conn.RemoteAddr().String())
		} else if errors.Is(err, errAuthFailed) {
			c.send(fatal(codeInvalidPassword, "password authentication failed for user %q", c.user))
			p.log.Info("client login failed", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		} else if !errors.Is(err, io.EOF) {
			c.send(fatal(codeInvalidAuth, "authentication failed: %v", err))
			p.log.Info("client authentication error", "user", c.user, "addr", c.conn.RemoteAddr().String(), "err", err)
		}
		return false
	}
	p.loginEnded(clientHost(c.conn), c.user, true)
	// Counted against max_client_conn once authenticated, so that logins
	// that stall cannot fill it (they are bounded by MaxLoginClients and
	// the login timeout); an admin user may take one connection more, so
	// that the console works when clients are at the limit.
	if !p.addClient(c, isAdminDatabase(c.database) && p.isAdmin(c.user)) {
		c.send(fatal(codeTooManyConnections, "no more connections allowed (max_client_conn)"))
		p.log.Info("client refused: max_client_conn reached", "user", c.user, "addr", c.conn.RemoteAddr().String())
		return false
	}
	if isAdminDatabase(c.database) {
		return c.adminLogin(out)
	}
	if !p.admits(c.database) {
		// PgBouncer's words, after authentication as there.
		c.send(fatal(codeInvalidCatalogName, "no such database: %s", c.database))
		p.log.Info("client refused: database not in the allow-list", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		return false
	}
	if p.isDisabled(c.database) {
		// PostgreSQL's words for a database that allows no connections.
		c.send(fatal(codeObjectNotInPrerequisiteState, "database \"%s\" is not currently accepting connections (DISABLE on the pooler's console)", c.database))
		p.log.Info("client refused: database disabled", "user", c.user, "database", c.database, "addr", c.conn.RemoteAddr().String())
		return false
	}
	c.pool = p.poolFor(c)
	c.eng.SetPolicy(p.cfg.OnSessionState, p.cfg.Mode == ModeTransaction && p.cfg.Classifier != nil,
		p.cfg.Mode == ModeTransaction && p.cfg.MaxPreparedStatements > 0)
	c.eng.SetReacher(c)
	ctx, cancel := context.WithTimeout(p.ctx, p.live.waitLimit())
	defer cancel()
	defaults, err := c.pool.welcomeParams(ctx, time.Now().Add(p.live.waitLimit()))
	if err != nil {
		c.send(c.failure(err))
		p.log.Warn("client login: no server", "user", c.user, "database", c.database, "err", err)
		return false
	}
	out = encode(out, &pgproto3.AuthenticationOk{})
	names := make([]string, 0, len(defaults))
	for k := range defaults {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range engine.TrackedParams {
		if _, ok := tracked[k]; !ok {
			if v, ok := defaults[k]; ok {
				tracked[k] = v
			}
		}
	}
	for _, k := range names {
		v := defaults[k]
		if cv, ok := tracked[k]; ok {
			v = cv
		}
		out = encode(out, &pgproto3.ParameterStatus{Name: k, Value: v})
	}
	c.params = p.params.intern(tracked)
	var pid uint32
	if p.cfg.Mode != ModeTransaction {
		// One server per client: it is attached now, so that the client
		// is told its real process ID (pg_terminate_backend, joins with
		// pg_stat_activity work as without the pooler); the cancel
		// secret stays the pooler's.
		c.move(engine.Idle)
		c.startCapture(pkt)
		s, err := c.attachAtLogin()
		if err != nil {
			c.send(c.failure(err))
			p.log.Warn("client login: no server", "user", c.user, "database", c.database, "err", err)
			return false
		}
		pid = s.pid
	}
	c.key = p.registerCancelKey(c, pid)
	sent := false
	defer func() {
		if !sent {
			p.unregisterCancelKey(c.key)
		}
	}()
	secret := make([]byte, 4)
	binary.BigEndian.PutUint32(secret, c.key.secret)
	out = encode(out, &pgproto3.BackendKeyData{ProcessID: c.key.pid, SecretKey: secret}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := c.send(out); err != nil {
		return false
	}
	sent = true
	if c.place == engine.LoggingIn {
		c.move(engine.Idle)
	}
	p.log.Debug("client logged in", "user", c.user, "database", c.database, "application_name", c.appName, "addr", c.conn.RemoteAddr().String())
	return true
}

// connectReason is the last part of a connection error (dial tcp
// 127.0.0.1:5432: connect: connection refused → connection refused):
// the cause, without the host names and users that pgconn's text lists.
func connectReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// failure is the FATAL a client that gets no server is sent: its kill
// message (taken, so that it is sent once) when KILL ended its wait, else
// serverFailure's.
func (c *clientConn) failure(err error) []byte {
	if errors.Is(err, errKilled) {
		if m := c.kill.Swap(nil); m != nil {
			return *m
		}
	}
	return serverFailure(err)
}

// serverFailure turns a failure to get a server into a FATAL for the
// client: the server's own error when it sent one.
func serverFailure(err error) []byte {
	var pgErr *pgconn.PgError
	var se *serverError
	switch {
	case errors.Is(err, errKilled):
		return fatal(codeAdminShutdown, "the database was killed on the pooler's admin console (KILL)")
	case errors.Is(err, errWaitTimeout):
		return fatal(codeProtocolViolation, "query_wait_timeout")
	case errors.Is(err, errPoolClosed):
		return fatal(codeAdminShutdown, "the pooler is shutting down")
	case isServerAuthError(err):
		return fatal(codeInvalidAuth, "server login failed: %v", err)
	case errors.As(err, &pgErr):
		var down *serverDownError
		if errors.As(err, &down) {
			return fatal(pgErr.Code, "server login failed: %s (server down)", pgErr.Message)
		}
		return fatal(pgErr.Code, "server login failed: %s", pgErr.Message)
	case errors.As(err, &se):
		f := parseErrorFields(se.body)
		return fatal(f['C'], "could not apply the client's settings on the server: %s", f['M'])
	default:
		var down *serverDownError
		if errors.As(err, &down) {
			return fatal(codeConnectionFailure, "could not connect to the server: %s (server down)", connectReason(down.err))
		}
		return fatal(codeConnectionFailure, "could not connect to the server")
	}
}

// randomKey returns a random cancel key.
func randomKey() cancelKey {
	var b [8]byte
	rand.Read(b[:])
	return cancelKey{pid: binary.BigEndian.Uint32(b[:4])&0x7fffffff | 1, secret: binary.BigEndian.Uint32(b[4:])}
}

// validParamName reports whether a startup parameter name looks like a
// run-time parameter (letters, digits, _ and a dot for custom settings).
// "options" is not one: its -c switches are not taken apart.
func validParamName(k string) bool {
	if k == "" || k == "options" || k == "replication" {
		return false
	}
	for i := 0; i < len(k); i++ {
		ch := k[i]
		if !(ch == '_' || ch == '.' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}
