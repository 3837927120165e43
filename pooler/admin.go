package pooler

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
		c.send(append(out, fatal(codeInvalidAuth, "not allowed: user %q is not an admin or stats user of the pgpoolcheck console", c.user)...))
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
			if errors.As(err, &tl) {
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

// resultSet is a console answer: text and int8 columns.
// showItems are the console's SHOW items.
const showItems = "HELP|POOLS|STATS|STATS_TOTALS|STATS_AVERAGES|TOTALS|USERS|CLIENTS|SERVERS|SOCKETS|FDS|MEM|CONFIG|HAZARDS|DATABASES|LISTS|VERSION"

// project keeps the first column and those named prefix…, without the
// prefix: SHOW STATS_TOTALS and STATS_AVERAGES are SHOW STATS split so.
func (r *resultSet) project(prefix string) *resultSet {
	keep := []int{0}
	out := &resultSet{cols: []string{r.cols[0]}, types: []uint32{r.types[0]}}
	for i, c := range r.cols {
		if rest, ok := strings.CutPrefix(c, prefix); ok {
			keep = append(keep, i)
			out.cols, out.types = append(out.cols, rest), append(out.types, r.types[i])
		}
	}
	for _, row := range r.rows {
		vals := make([]string, len(keep))
		for j, i := range keep {
			vals[j] = row[i]
		}
		out.add(vals...)
	}
	return out
}

// totals sums each numeric column of SHOW STATS over the databases, as
// name/value rows (SHOW TOTALS).
func (r *resultSet) totals() *resultSet {
	out := columns("name:t", "value:i")
	for i := 1; i < len(r.cols); i++ {
		var sum int64
		for _, row := range r.rows {
			n, _ := strconv.ParseInt(row[i], 10, 64)
			sum += n
		}
		out.add(r.cols[i], itoa(sum))
	}
	return out
}

// showUsers lists the users of the auth file and of the pools, with the
// pool mode, max_user_connections and the user's server connections now
// (SHOW USERS).
func (p *Proxy) showUsers() *resultSet {
	rs := columns("name:t", "pool_mode:t", "max_user_connections:i", "current_connections:i")
	p.mu.Lock()
	names := map[string]bool{}
	live := p.live.Load()
	for u := range live.Users {
		names[u] = true
	}
	for k := range p.pools {
		names[k.user] = true
	}
	mode := string(p.cfg.Mode)
	max := strconv.Itoa(live.MaxUserConnections)
	conns := map[string]int64{}
	for u, c := range p.userCaps {
		conns[u] = c.n.Load()
	}
	p.mu.Unlock()
	for _, u := range slices.Sorted(maps.Keys(names)) {
		rs.add(u, mode, max, itoa(conns[u]))
	}
	return rs
}

type resultSet struct {
	cols  []string
	types []uint32
	rows  [][]string
}

func (r *resultSet) add(vals ...string) { r.rows = append(r.rows, vals) }

// encode appends RowDescription, DataRows and CommandComplete with tag.
func (r *resultSet) encode(dst []byte, tag string) []byte {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(r.cols))}
	for i, name := range r.cols {
		size := int16(-1)
		if r.types[i] == oidInt8 {
			size = 8
		}
		rd.Fields[i] = pgproto3.FieldDescription{Name: []byte(name), DataTypeOID: r.types[i], DataTypeSize: size, TypeModifier: -1}
	}
	dst = encode(dst, rd)
	for _, row := range r.rows {
		dr := &pgproto3.DataRow{Values: make([][]byte, len(row))}
		for i, v := range row {
			dr.Values[i] = []byte(v)
		}
		dst = encode(dst, dr)
	}
	return encode(dst, &pgproto3.CommandComplete{CommandTag: []byte(tag)})
}

// columns builds a resultSet from "name:type" pairs, type i (int8) or t.
func columns(spec ...string) *resultSet {
	rs := &resultSet{}
	for _, s := range spec {
		name, typ, _ := strings.Cut(s, ":")
		rs.cols = append(rs.cols, name)
		if typ == "i" {
			rs.types = append(rs.types, oidInt8)
		} else {
			rs.types = append(rs.types, oidText)
		}
	}
	return rs
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func showPools(s Snapshot) *resultSet {
	rs := columns("database:t", "user:t", "cl_active:i", "cl_waiting:i", "cl_active_cancel_req:i",
		"cl_waiting_cancel_req:i", "sv_active:i", "sv_active_cancel:i", "sv_being_canceled:i", "sv_idle:i",
		"sv_used:i", "sv_tested:i", "sv_login:i", "maxwait:i", "maxwait_us:i", "pool_mode:t",
		"cl_pinned:i", "sv_pinned:i")
	for _, ps := range s.Pools {
		sec := int64(ps.MaxWait / time.Second)
		us := int64((ps.MaxWait % time.Second) / time.Microsecond)
		rs.add(ps.Database, ps.User, itoa(int64(ps.ClientsActive)), itoa(int64(ps.ClientsWaiting)), "0", "0",
			itoa(int64(ps.ServersActive)), "0", "0", itoa(int64(ps.ServersIdle)), itoa(int64(ps.ServersUsed)), "0",
			itoa(int64(ps.ServersLogin)), itoa(sec), itoa(us), string(ps.Mode),
			itoa(int64(ps.ClientsPinned)), itoa(int64(ps.ServersPinned)))
	}
	return rs
}

// showStats is PgBouncer's SHOW STATS, one row per database: the total_*
// columns now, the avg_* ones over the last complete stats period (a
// minute, as PgBouncer's default stats_period; until one has passed, since
// the proxy started). avg_*_count, avg_recv and avg_sent are per second,
// avg_xact_time and avg_query_time per transaction and query, and
// avg_wait_time per server assignment, in µs.
func (p *Proxy) showStats() *resultSet {
	rs := columns("database:t", "total_server_assignment_count:i", "total_xact_count:i", "total_query_count:i",
		"total_received:i", "total_sent:i", "total_xact_time:i", "total_query_time:i", "total_wait_time:i",
		"total_client_parse_count:i", "total_server_parse_count:i", "total_bind_count:i",
		"avg_server_assignment_count:i", "avg_xact_count:i", "avg_query_count:i", "avg_recv:i", "avg_sent:i",
		"avg_xact_time:i", "avg_query_time:i", "avg_wait_time:i",
		"avg_client_parse_count:i", "avg_server_parse_count:i", "avg_bind_count:i")
	now := p.dbTotals()
	from, to, period := p.statsWindow(now)
	var dbs []string
	for db := range now {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	secs := max(int64(period/time.Second), 1)
	for _, db := range dbs {
		t := now[db]
		a, b := from[db], to[db]
		per := func(f func(*PoolTotals) int64) string { return itoa((f(&b) - f(&a)) / secs) }
		avg := func(f, n func(*PoolTotals) int64) string {
			if d := n(&b) - n(&a); d > 0 {
				return itoa((f(&b) - f(&a)) / d)
			}
			return "0"
		}
		assign := func(t *PoolTotals) int64 { return t.ServerAssignments }
		xacts := func(t *PoolTotals) int64 { return t.Transactions }
		queries := func(t *PoolTotals) int64 { return t.Queries }
		rs.add(db, itoa(t.ServerAssignments), itoa(t.Transactions), itoa(t.Queries),
			itoa(t.BytesReceived), itoa(t.BytesSent), itoa(t.XactTimeUs), itoa(t.QueryTimeUs), itoa(t.WaitTimeUs),
			itoa(t.ClientParses), itoa(t.ServerParses), itoa(t.Binds),
			per(assign), per(xacts), per(queries),
			per(func(t *PoolTotals) int64 { return t.BytesReceived }), per(func(t *PoolTotals) int64 { return t.BytesSent }),
			avg(func(t *PoolTotals) int64 { return t.XactTimeUs }, xacts),
			avg(func(t *PoolTotals) int64 { return t.QueryTimeUs }, queries),
			avg(func(t *PoolTotals) int64 { return t.WaitTimeUs }, assign),
			per(func(t *PoolTotals) int64 { return t.ClientParses }), per(func(t *PoolTotals) int64 { return t.ServerParses }),
			per(func(t *PoolTotals) int64 { return t.Binds }))
	}
	return rs
}

// connColumns are PgBouncer's columns of SHOW CLIENTS and SHOW SERVERS,
// plus pinned.
func connColumns() *resultSet {
	return columns("type:t", "user:t", "database:t", "replication:t", "state:t", "addr:t", "port:i",
		"local_addr:t", "local_port:i", "connect_time:t", "request_time:t", "wait:i", "wait_us:i",
		"close_needed:i", "ptr:t", "link:t", "remote_pid:i", "tls:t", "application_name:t",
		"prepared_statements:i", "id:i", "pinned:t")
}

func showClients(s Snapshot) *resultSet {
	rs := connColumns()
	for _, ci := range s.Clients {
		link := ""
		if ci.ServerPID != 0 {
			link = fmt.Sprintf("%x", ci.ServerPID)
		}
		rs.add("C", ci.User, ci.Database, "none", ci.State, ci.Addr, itoa(int64(ci.Port)),
			ci.LocalAddr, itoa(int64(ci.LocalPort)), timeText(ci.ConnectTime), timeText(ci.ConnectTime), "0", "0",
			"0", fmt.Sprintf("%x", ci.Key), link, "0", "", ci.ApplicationName,
			itoa(int64(ci.PreparedStatements)), itoa(int64(ci.Key)), yesNo(ci.Pinned))
	}
	return rs
}

func showServers(s Snapshot) *resultSet {
	rs := connColumns()
	for _, si := range s.Servers {
		link := ""
		if si.ClientKey != 0 {
			link = fmt.Sprintf("%x", si.ClientKey)
		}
		req := si.IdleSince
		if req.IsZero() {
			req = si.ConnectTime
		}
		rs.add("S", si.User, si.Database, "none", si.State, si.Addr, itoa(int64(si.Port)),
			si.LocalAddr, itoa(int64(si.LocalPort)), timeText(si.ConnectTime), timeText(req), "0", "0",
			"0", fmt.Sprintf("%x", si.PID), link, itoa(int64(si.PID)), "", si.ApplicationName,
			itoa(int64(si.PreparedStatements)), itoa(int64(si.PID)), yesNo(si.Pinned))
	}
	return rs
}

// showDatabases is PgBouncer's SHOW DATABASES: one row per database that
// has a pool (all on the one upstream server), and the console's.
func (p *Proxy) showDatabases(s Snapshot) *resultSet {
	rs := columns("name:t", "host:t", "port:i", "database:t", "force_user:t", "pool_size:i", "min_pool_size:i",
		"reserve_pool:i", "server_lifetime:i", "pool_mode:t", "max_connections:i", "current_connections:i",
		"paused:i", "disabled:i")
	conns := map[string]int{}
	var names []string
	size := map[string]int{}
	for _, ps := range s.Pools {
		if _, ok := conns[ps.Database]; !ok {
			names = append(names, ps.Database)
		}
		conns[ps.Database] += ps.ServersActive + ps.ServersIdle + ps.ServersLogin + ps.ServersUsed
		size[ps.Database] = ps.Size
	}
	sort.Strings(names)
	caps := make(map[string]int, len(names))
	p.mu.Lock()
	for _, db := range names {
		caps[db] = p.dbCapMax(db)
	}
	p.mu.Unlock()
	host := p.upstream.Host
	paused := func(db string) string {
		if s.Paused || contains(s.PausedDatabases, db) {
			return "1"
		}
		return "0"
	}
	disabled := func(db string) string {
		if p.isDisabled(db) {
			return "1"
		}
		return "0"
	}
	for _, db := range names {
		rs.add(db, host, strconv.Itoa(int(p.upstream.Port)), db, "", strconv.Itoa(size[db]), "0", "0",
			itoa(int64(p.live.lifetime()/time.Second)), string(p.cfg.Mode), strconv.Itoa(caps[db]), strconv.Itoa(conns[db]), paused(db), disabled(db))
	}
	rs.add(AdminDatabase, "", "0", AdminDatabase, "", "0", "0", "0", "0", "statement", "0", "0", "0", "0")
	return rs
}

// showLists is PgBouncer's SHOW LISTS.
func showLists(s Snapshot) *resultSet {
	rs := columns("list:t", "items:i")
	dbs := map[string]bool{}
	users := map[string]bool{}
	var usedServers, freeServers, loginServers int
	for _, ps := range s.Pools {
		dbs[ps.Database] = true
		users[ps.User] = true
		usedServers += ps.ServersActive + ps.ServersUsed
		freeServers += ps.ServersIdle
		loginServers += ps.ServersLogin
	}
	for _, r := range [][2]string{
		{"databases", strconv.Itoa(len(dbs))},
		{"users", strconv.Itoa(len(users))},
		{"pools", strconv.Itoa(len(s.Pools))},
		{"free_clients", "0"},
		{"used_clients", strconv.Itoa(len(s.Clients))},
		{"login_clients", "0"},
		{"free_servers", strconv.Itoa(freeServers)},
		{"used_servers", strconv.Itoa(usedServers + loginServers)},
		{"dns_names", "0"},
		{"dns_zones", "0"},
		{"dns_queries", "0"},
		{"dns_pending", "0"},
	} {
		rs.add(r[0], r[1])
	}
	return rs
}

func showHazards(hs []HazardCount) *resultSet {
	rs := columns("rule:t", "action:t", "count:i", "clients:i", "application_name:t", "fingerprint:t", "last_seen:t")
	for _, h := range hs {
		rs.add(h.Rule, h.Action, itoa(h.Count), itoa(h.Clients), h.ApplicationName, h.Fingerprint, timeText(h.LastSeen))
	}
	return rs
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// redactURL hides the password of a connection URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		if strings.Contains(s, "password") {
			return "(hidden: contains a password)"
		}
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// resize changes the pool size; waiters get the new slots.
func (p *pool) resize(n int) {
	p.lock()
	p.size = n
	var grant []*waiter
	for p.open < p.size && !p.closed && p.waiters.Len() > 0 && p.takeCaps() {
		w := p.popWaiter()
		p.open++
		grant = append(grant, w)
	}
	p.unlock()
	for _, w := range grant {
		w.give(nil)
	}
}

// pauseState is the console's PAUSE: all databases, or some.
type pauseState struct {
	// on is set while anything is paused (acquire's only check).
	on      atomic.Bool
	mu      sync.Mutex
	all     bool
	dbs     map[string]bool
	resumed chan struct{}
}

// pausedNow returns whether everything is paused and the databases paused
// one by one.
func (p *Proxy) pausedNow() (bool, []string) {
	ps := &p.pause
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var dbs []string
	for db := range ps.dbs {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	return ps.all, dbs
}

// pauseDB pauses db ("" for all databases).
func (p *Proxy) pauseDB(db string) error {
	ps := &p.pause
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case ps.all:
		return &adminError{code: "55000", msg: "already paused"}
	case db != "" && ps.dbs[db]:
		return &adminError{code: "55000", msg: fmt.Sprintf("database %q is already paused", db)}
	case isAdminDatabase(db):
		return adminErrorf("cannot pause the admin console")
	}
	if ps.resumed == nil {
		ps.resumed = make(chan struct{})
	}
	if db == "" {
		ps.all = true
	} else {
		if ps.dbs == nil {
			ps.dbs = make(map[string]bool)
		}
		ps.dbs[db] = true
	}
	ps.on.Store(true)
	return nil
}

// resumeDB resumes db ("" for everything).
func (p *Proxy) resumeDB(db string) error {
	ps := &p.pause
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case db == "" && !ps.all && len(ps.dbs) == 0:
		return &adminError{code: "55000", msg: "nothing is paused"}
	case db != "" && ps.all:
		return &adminError{code: "55000", msg: "all databases are paused: RESUME without a database name"}
	case db != "" && !ps.dbs[db]:
		return &adminError{code: "55000", msg: fmt.Sprintf("database %q is not paused", db)}
	}
	if db == "" {
		ps.all, ps.dbs = false, nil
	} else {
		delete(ps.dbs, db)
	}
	close(ps.resumed)
	ps.resumed = nil
	if ps.all || len(ps.dbs) > 0 {
		ps.resumed = make(chan struct{})
	} else {
		ps.on.Store(false)
	}
	return nil
}

// waitPaused waits, up to the shutdown timeout, until no server of a
// paused pool is attached to a client; it returns how many still are.
func (p *Proxy) waitPaused(db string) int {
	deadline := time.Now().Add(p.cfg.ShutdownTimeout)
	for {
		n := 0
		for _, ps := range p.Snapshot().Pools {
			if db == "" || ps.Database == db {
				n += ps.ServersActive + ps.ServersUsed
			}
		}
		if n == 0 || time.Now().After(deadline) || p.closing.Load() {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pauseWait holds a client that wants a server of a paused pool until it
// is resumed, the deadline passes, ctx ends or KILL kicks its waiter w
// (nil: none).
func (pl *pool) pauseWait(ctx context.Context, deadline time.Time, w *waiter) error {
	ps := &pl.proxy.pause
	var t *time.Timer
	counted := false
	defer func() {
		if t != nil {
			t.Stop()
		}
		if counted {
			pl.ctr.pauseWaiting.Add(-1)
		}
	}()
	for {
		ps.mu.Lock()
		ch := ps.resumed
		paused := ps.all || ps.dbs[pl.key.database]
		ps.mu.Unlock()
		if w != nil && w.kicked.Load() {
			return errKilled
		}
		if !paused || ch == nil {
			return nil
		}
		if t == nil {
			t = time.NewTimer(time.Until(deadline))
			counted = true
			pl.ctr.pauseWaiting.Add(1)
		}
		select {
		case <-ch:
		case <-t.C:
			return errWaitTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// setDisabled refuses (or admits again) new logins to db; its connected
// clients stay.
func (p *Proxy) setDisabled(db string, off bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !off {
		delete(p.disabled, db)
		return
	}
	if p.disabled == nil {
		p.disabled = make(map[string]bool)
	}
	p.disabled[db] = true
}

func (p *Proxy) isDisabled(db string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disabled[db]
}

// matchingPools returns the pools of db ("" for all).
func (p *Proxy) matchingPools(db string) []*pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pool
	for k, pl := range p.pools {
		if db == "" || k.database == db {
			out = append(out, pl)
		}
	}
	return out
}

// reconnect closes the servers of db ("" for all) connected before now:
// the idle ones at once, the others when their clients give them back
// (PgBouncer's RECONNECT, after the server moved or its settings changed).
func (p *Proxy) reconnect(db string, now time.Time) {
	for _, pl := range p.matchingPools(db) {
		pl.lock()
		pl.reconnectBefore = now
		pl.unlock()
		pl.reap(time.Now())
	}
}

// waitClosed waits until the servers a RECONNECT of db asked to close are
// closed, at most the shutdown timeout, and returns how many are left.
func (p *Proxy) waitClosed(db string) int {
	deadline := time.Now().Add(p.cfg.ShutdownTimeout)
	for {
		before := map[poolKey]time.Time{}
		for _, pl := range p.matchingPools(db) {
			pl.lock()
			before[pl.key] = pl.reconnectBefore
			pl.unlock()
		}
		n := 0
		for _, s := range p.Snapshot().Servers {
			if t, ok := before[poolKey{database: s.Database, user: s.User}]; ok && s.ConnectTime.Before(t) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) || p.closing.Load() {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
