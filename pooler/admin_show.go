package pooler

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The console's SHOW commands: result sets built from Proxy.Snapshot,
// with PgBouncer's column names where the concept is the same.

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
	for _, db := range names {
		caps[db] = p.dbCapMax(db)
	}
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

// hazardsNote says, in the modes where the pooler judges no session state,
// why SHOW HAZARDS has no rows and where the hazards are found instead.
func hazardsNote(m Mode) string {
	switch m {
	case ModeRecord:
		return "SHOW HAZARDS counts what transaction mode does with session state; in record mode every client keeps " +
			"its own server connection and nothing is judged here: run pgpoolcheck analyze on the capture (--capture FILE) " +
			"for the session state the clients relied on"
	case ModeSession:
		return "SHOW HAZARDS counts what transaction mode does with session state; in session mode every client keeps " +
			"its own server connection and nothing is judged here: record the traffic (--mode record --capture FILE) " +
			"and run pgpoolcheck analyze on it"
	}
	return ""
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
