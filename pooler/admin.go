package pooler

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// The admin console: a client whose startup database is AdminDatabase and
// whose user is in Config.AdminUsers (or Config.StatsUsers, for the SHOW
// commands only) talks to the pooler itself instead of a pool, in the
// simple query protocol, with PgBouncer's commands and column names (SHOW
// POOLS, STATS, CLIENTS, SERVERS, SOCKETS, FDS, MEM, CONFIG, DATABASES,
// LISTS, as monitoring tools that speak to PgBouncer expect them) plus SHOW
// HAZARDS, SHOW VERSION and SHOW HELP, PAUSE, RESUME, DISABLE, ENABLE,
// RECONNECT, WAIT_CLOSE, RELOAD, SET, KILL (adminops.go) and SHUTDOWN.
// Extended-protocol messages are refused with an error up to the next
// Sync, after which the console answers again.

// AdminDatabase is the virtual database of the admin console; it also
// answers to PgBouncer's name for its own, pgbouncerDatabase, so that
// existing tools and habits work.
const AdminDatabase = "pgpoolcheck"

const pgbouncerDatabase = "pgbouncer"

// isAdminDatabase reports whether a client's database is the console.
func isAdminDatabase(name string) bool { return name == AdminDatabase || name == pgbouncerDatabase }

// maxAdminMessage is the largest message the console reads.
const maxAdminMessage = 1 << 20

// adminLimits frame the console's messages.
var adminLimits = engine.Limits{MaxMessage: maxAdminMessage}

// Type OIDs of the console's columns, as PgBouncer's.
const (
	oidInt8 = 20
	oidText = 25
)

// isAdmin reports whether user may use the admin console.
func (p *Proxy) isAdmin(user string) bool {
	return slices.Contains(p.live.Load().AdminUsers, user)
}

// adminLogin finishes the login of an authenticated client of the admin
// console: it refuses users who are not admins, else sends the welcome.
func (c *clientConn) adminLogin(out []byte) bool {
	p := c.proxy
	if !p.isAdmin(c.user) && !p.isStatsUser(c.user) {
		c.send(append(out, fatal(codeInvalidAuth, "not allowed: user %q is not an admin or stats user of the pgpoolcheck console "+
			"(add it to --admin-users, admin_users in the ini file, or for the SHOW commands only to --stats-users, stats_users)", c.user)...))
		p.log.Info("admin console refused", "user", c.user, "addr", c.conn.RemoteAddr().String())
		return false
	}
	c.admin = true
	out = encode(out, &pgproto3.AuthenticationOk{})
	for _, kv := range [][2]string{
		{"application_name", c.appName},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"integer_datetimes", "on"},
		{"IntervalStyle", "postgres"},
		{"server_encoding", "UTF8"},
		{"server_version", "16.0 (pgpoolcheck " + version.String() + ")"},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
	} {
		out = encode(out, &pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
	}
	k := randomKey() // not registered: there is nothing to cancel
	secret := make([]byte, 4)
	binary.BigEndian.PutUint32(secret, k.secret)
	out = encode(out, &pgproto3.BackendKeyData{ProcessID: k.pid, SecretKey: secret}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := c.send(out); err != nil {
		return false
	}
	c.move(engine.Idle)
	p.log.Info("admin console login", "user", c.user, "addr", c.conn.RemoteAddr().String())
	return true
}

// serveAdmin answers an admin console client until it leaves.
func (c *clientConn) serveAdmin() {
	skip := false // refusing extended-protocol messages up to Sync
	for {
		typ, body, err := c.readAdminMessage()
		if err != nil {
			var tl *engine.TooLargeError
			if m := c.kill.Load(); m != nil {
				c.send(*m) // closed by the pooler (shutdown)
			} else if errors.As(err, &tl) {
				c.send(fatal(codeProtocolViolation, "%v", err))
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isClosed(err) {
				c.send(fatal(codeProtocolViolation, "invalid message: %v", err))
			}
			return
		}
		switch typ {
		case 'X':
			return
		case 'Q':
			if skip {
				continue
			}
			sql := strings.TrimRight(string(body), "\x00")
			out, shutdown := c.adminQuery(sql)
			out = append(out, 'Z', 0, 0, 0, 5, 'I')
			if err := c.send(out); err != nil {
				return
			}
			if shutdown {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), c.proxy.cfg.ShutdownTimeout+5*time.Second)
					defer cancel()
					c.proxy.Shutdown(ctx)
				}()
				return
			}
		case 'S':
			skip = false
			if err := c.send([]byte{'Z', 0, 0, 0, 5, 'I'}); err != nil {
				return
			}
		case 'F':
			out := errorResponse("ERROR", codeFeatureNotSupported, "the pgpoolcheck admin console does not support function calls")
			if err := c.send(append(out, 'Z', 0, 0, 0, 5, 'I')); err != nil {
				return
			}
		case 'P', 'B', 'D', 'E', 'C':
			if !skip {
				skip = true
				if err := c.send(errorResponse("ERROR", codeFeatureNotSupported,
					"the pgpoolcheck admin console supports only the simple query protocol")); err != nil {
					return
				}
			}
		default: // Flush, copy data: nothing to do
		}
	}
}

func isClosed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "use of closed network connection")
}

// readAdminMessage reads one whole message.
func (c *clientConn) readAdminMessage() (byte, []byte, error) {
	h, err := c.r.Peek(headerLen)
	if err != nil {
		return 0, nil, err
	}
	f := (&engine.Client{Limits: &adminLimits}).Frame(h)
	if f.Act == engine.Violation {
		return 0, nil, f.Err
	}
	typ, n := f.Type, f.Len
	c.r.Discard(headerLen)
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return 0, nil, err
	}
	return typ, body, nil
}

// adminError is a console command's failure, sent as an ErrorResponse.
type adminError struct{ code, msg string }

func (e *adminError) Error() string { return e.msg }

func adminErrorf(format string, args ...any) error {
	return &adminError{code: "42601", msg: fmt.Sprintf(format, args...)}
}

// adminQuery runs the console commands in sql (separated by semicolons)
// and returns their answers without the ReadyForQuery, and whether the
// proxy is to shut down.
func (c *clientConn) adminQuery(sql string) (out []byte, shutdown bool) {
	var cmds []string
	for _, part := range strings.Split(sql, ";") {
		if s := strings.TrimSpace(part); s != "" {
			cmds = append(cmds, s)
		}
	}
	if len(cmds) == 0 {
		return encode(out, &pgproto3.EmptyQueryResponse{}), false
	}
	for _, cmd := range cmds {
		b, stop, err := c.adminCommand(cmd)
		if err != nil {
			code := "42601"
			var ae *adminError
			if errors.As(err, &ae) {
				code = ae.code
			}
			return append(out, errorResponse("ERROR", code, "%s", err.Error())...), false
		}
		out = append(out, b...)
		if stop {
			return out, true
		}
	}
	return out, false
}

// adminCommand runs one console command.
func (c *clientConn) adminCommand(cmd string) ([]byte, bool, error) {
	p := c.proxy
	words := strings.Fields(cmd)
	verb := strings.ToUpper(words[0])
	args := words[1:]
	if err := c.checkConsoleRights(verb); err != nil {
		return nil, false, err
	}
	if out, ok, err := c.consoleCommand(verb, cmd, args); ok {
		return out, false, err
	}
	arg := func() (string, error) {
		switch len(args) {
		case 0:
			return "", nil
		case 1:
			return strings.Trim(args[0], `"`), nil
		}
		return "", adminErrorf("%s takes at most one database name", verb)
	}
	switch verb {
	case "SHOW":
		if len(args) != 1 {
			return nil, false, adminErrorf("usage: SHOW " + showItems)
		}
		what := strings.ToUpper(args[0])
		var rs *resultSet
		switch what {
		case "POOLS":
			rs = showPools(p.Snapshot())
		case "STATS":
			rs = p.showStats()
		case "STATS_TOTALS":
			rs = p.showStats().project("total_")
		case "STATS_AVERAGES":
			rs = p.showStats().project("avg_")
		case "TOTALS":
			rs = p.showStats().totals()
		case "USERS":
			rs = p.showUsers()
		case "CLIENTS":
			rs = showClients(p.Snapshot())
		case "SERVERS":
			rs = showServers(p.Snapshot())
		case "CONFIG":
			rs = p.showConfig()
		case "HAZARDS":
			rs = showHazards(p.Hazards())
			if note := hazardsNote(p.cfg.Mode); note != "" {
				return rs.encode(noticeResponse(nil, note), "SHOW"), false, nil
			}
		case "VERSION":
			rs = &resultSet{cols: []string{"version"}, types: []uint32{oidText}}
			rs.add("pgpoolcheck " + version.String())
		case "DATABASES":
			rs = p.showDatabases(p.Snapshot())
		case "LISTS":
			rs = showLists(p.Snapshot())
		case "MEM":
			rs = showMem()
		case "SOCKETS":
			rs = showSockets(p.Snapshot())
		case "FDS":
			rs = p.showFDs(p.Snapshot())
		case "HELP":
			out := noticeResponse(nil, "Console usage\n\tSHOW "+showItems+"\n\tPAUSE [<db>]\n\tRESUME [<db>]\n\tDISABLE <db>\n\tENABLE <db>\n\tRECONNECT [<db>]\n\tWAIT_CLOSE [<db>]\n\tRELOAD\n\tSET key = value\n\tKILL <db>\n\tSHUTDOWN")
			return encode(out, &pgproto3.CommandComplete{CommandTag: []byte("SHOW")}), false, nil
		default:
			return nil, false, adminErrorf("unknown SHOW item %q (see SHOW HELP)", args[0])
		}
		return rs.encode(nil, "SHOW"), false, nil
	case "PAUSE":
		db, err := arg()
		if err != nil {
			return nil, false, err
		}
		if err := p.pauseDB(db); err != nil {
			return nil, false, err
		}
		p.log.Info("admin console: PAUSE", "user", c.user, "database", db)
		var out []byte
		if n := p.waitPaused(db); n > 0 {
			out = noticeResponse(out, fmt.Sprintf("%d server connections still active after %s; new transactions wait", n, p.cfg.ShutdownTimeout))
		}
		return encode(out, &pgproto3.CommandComplete{CommandTag: []byte("PAUSE")}), false, nil
	case "RESUME":
		db, err := arg()
		if err != nil {
			return nil, false, err
		}
		if err := p.resumeDB(db); err != nil {
			return nil, false, err
		}
		p.log.Info("admin console: RESUME", "user", c.user, "database", db)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte("RESUME")}), false, nil
	case "DISABLE", "ENABLE":
		db, err := arg()
		if err != nil {
			return nil, false, err
		}
		if db == "" || isAdminDatabase(db) {
			return nil, false, adminErrorf("usage: %s <db> (not the console)", verb)
		}
		p.setDisabled(db, verb == "DISABLE")
		p.log.Info("admin console: "+verb, "user", c.user, "database", db)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte(verb)}), false, nil
	case "RECONNECT":
		db, err := arg()
		if err != nil {
			return nil, false, err
		}
		p.reconnect(db, time.Now())
		p.log.Info("admin console: RECONNECT", "user", c.user, "database", db)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte("RECONNECT")}), false, nil
	case "WAIT_CLOSE":
		db, err := arg()
		if err != nil {
			return nil, false, err
		}
		var out []byte
		if n := p.waitClosed(db); n > 0 {
			out = noticeResponse(out, fmt.Sprintf("%d server connections to close still in use after %s", n, p.cfg.ShutdownTimeout))
		}
		return encode(out, &pgproto3.CommandComplete{CommandTag: []byte("WAIT_CLOSE")}), false, nil
	case "RELOAD":
		if len(args) > 0 {
			return nil, false, adminErrorf("RELOAD takes no arguments")
		}
		if err := p.reload(); err != nil {
			return nil, false, err
		}
		p.log.Info("admin console: RELOAD", "user", c.user)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte("RELOAD")}), false, nil
	case "SHUTDOWN":
		if len(args) > 0 {
			return nil, false, adminErrorf("SHUTDOWN takes no arguments")
		}
		p.log.Info("admin console: SHUTDOWN", "user", c.user)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte("SHUTDOWN")}), true, nil
	}
	return nil, false, adminErrorf("unknown command %q (the pgpoolcheck console knows SHOW, PAUSE, RESUME, DISABLE, ENABLE, RECONNECT, WAIT_CLOSE, RELOAD, SET, KILL and SHUTDOWN)", words[0])
}

// noticeResponse appends a NoticeResponse.
func noticeResponse(dst []byte, msg string) []byte {
	return encode(dst, &pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: msg})
}
