package pooler

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The console's operations beyond SHOW and PAUSE: SET, KILL, the read-only
// stats users, and SHOW MEM, SOCKETS and FDS.

// isStatsUser reports whether user may use the console's SHOW commands.
func (p *Proxy) isStatsUser(user string) bool {
	return slices.Contains(p.live.Load().StatsUsers, user)
}

// readOnlyVerbs are the console commands a stats user may run.
var readOnlyVerbs = []string{"SHOW"}

// adminInsufficientPrivilege is PostgreSQL's insufficient_privilege.
const adminInsufficientPrivilege = "42501"

// checkConsoleRights refuses a command a stats user may not run; admins
// are looked up at each command, so that RELOAD and SET of admin_users
// take effect on open sessions.
func (c *clientConn) checkConsoleRights(verb string) error {
	if c.proxy.isAdmin(c.user) || slices.Contains(readOnlyVerbs, verb) {
		return nil
	}
	return &adminError{code: adminInsufficientPrivilege,
		msg: fmt.Sprintf("%s: admin access needed (user %q is a stats user: SHOW commands only)", verb, c.user)}
}

// parseSet reads "SET key = value" (or TO); the value may be quoted.
func parseSet(cmd string) (key, value string, err error) {
	rest := strings.TrimSpace(cmd[len("SET"):])
	i := strings.IndexAny(rest, "= \t")
	if i <= 0 {
		return "", "", adminErrorf("usage: SET key = value")
	}
	key = strings.ToLower(strings.TrimSpace(rest[:i]))
	rest = strings.TrimSpace(rest[i:])
	switch {
	case strings.HasPrefix(rest, "="):
		rest = rest[1:]
	case len(rest) >= 2 && strings.EqualFold(rest[:2], "TO"):
		rest = rest[2:]
	default:
		return "", "", adminErrorf("usage: SET key = value")
	}
	value = strings.TrimSpace(rest)
	if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
		value = strings.ReplaceAll(value[1:len(value)-1], "''", "'")
	}
	if value == "" {
		return "", "", adminErrorf("SET %s: no value", key)
	}
	return key, value, nil
}

// kill is the console's KILL db: db is paused (until RESUME, as
// PgBouncer's), its clients are closed at once with a FATAL, waiting ones
// included, and its servers are closed (an idle one now, a busy one as its
// client goes: a running query is cancelled).
func (p *Proxy) kill(db string) (int, error) {
	if db == "" || isAdminDatabase(db) {
		return 0, adminErrorf("usage: KILL <db> (not the console)")
	}
	if err := p.pauseDB(db); err != nil {
		// A database paused already (alone or with all) stays paused.
		if all, dbs := p.pausedNow(); !all && !slices.Contains(dbs, db) {
			return 0, err
		}
	}
	p.reconnect(db, time.Now())
	p.mu.Lock()
	var victims []*clientConn
	for c := range p.clients {
		if !c.admin && c.database == db {
			victims = append(victims, c)
		}
	}
	p.mu.Unlock()
	msg := fatal(codeAdminShutdown, "database %q was killed on the pooler's admin console (KILL)", db)
	for _, c := range victims {
		c.end(&msg)
	}
	p.pause.kick()
	for _, pl := range p.matchingPools(db) {
		pl.lock()
		var waiters []*waiter
		for w := pl.popWaiter(); w != nil; w = pl.popWaiter() {
			waiters = append(waiters, w)
		}
		pl.unlock()
		for _, w := range waiters {
			w.give(waitExpired)
		}
	}
	return len(victims), nil
}

// showMem is SHOW MEM: PgBouncer lists its slab caches (name, size of an
// item, items used and free, bytes); the Go runtime has no fixed-size
// caches, so the rows are its memory classes in bytes (size 1).
func showMem() *resultSet {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rs := columns("name:t", "size:i", "used:i", "free:i", "memtotal:i")
	row := func(name string, used, free, total uint64) {
		rs.add(name, "1", strconv.FormatUint(used, 10), strconv.FormatUint(free, 10), strconv.FormatUint(total, 10))
	}
	row("heap", m.HeapInuse, m.HeapIdle-m.HeapReleased, m.HeapSys-m.HeapReleased)
	row("stack", m.StackInuse, 0, m.StackSys)
	row("mspan", m.MSpanInuse, m.MSpanSys-m.MSpanInuse, m.MSpanSys)
	row("mcache", m.MCacheInuse, m.MCacheSys-m.MCacheInuse, m.MCacheSys)
	row("gc_metadata", m.GCSys, 0, m.GCSys)
	row("other", m.OtherSys+m.BuckHashSys, 0, m.OtherSys+m.BuckHashSys)
	rs.add("goroutines", "1", strconv.Itoa(runtime.NumGoroutine()), "0", "0")
	return rs
}

// showSockets is SHOW SOCKETS: the rows of SHOW CLIENTS and SHOW SERVERS
// in one list, with each socket's descriptor (PgBouncer's packet buffer
// columns are left out: the pooler keeps no per-socket packet buffer).
func showSockets(s Snapshot) *resultSet {
	rs := connColumns()
	rs.cols, rs.types = append(rs.cols, "fd"), append(rs.types, oidInt8)
	cl, sv := showClients(s), showServers(s)
	for i, row := range cl.rows {
		rs.add(append(row, itoa(int64(s.Clients[i].FD)))...)
	}
	for i, row := range sv.rows {
		rs.add(append(row, itoa(int64(s.Servers[i].FD)))...)
	}
	return rs
}

// showFDs is SHOW FDS: the pooler's sockets, listeners, clients and
// servers. PgBouncer's list serves its online restart and carries session
// settings and secrets; this one names the sockets only (no password or
// key is ever shown).
func (p *Proxy) showFDs(s Snapshot) *resultSet {
	rs := columns("fd:i", "task:t", "user:t", "database:t", "addr:t", "port:i", "cancel:i", "link:i")
	for _, ln := range []net.Listener{p.ln, p.unixLn} {
		if ln == nil {
			continue
		}
		addr, port := splitAddr(ln.Addr())
		rs.add(itoa(int64(listenerFD(ln))), "pooler", "", "", addr, itoa(int64(port)), "0", "0")
	}
	for _, c := range s.Clients {
		rs.add(itoa(int64(c.FD)), "client", c.User, c.Database, c.Addr, itoa(int64(c.Port)), itoa(int64(c.Key)), itoa(int64(c.ServerPID)))
	}
	for _, sv := range s.Servers {
		rs.add(itoa(int64(sv.FD)), "server", sv.User, sv.Database, sv.Addr, itoa(int64(sv.Port)), itoa(int64(sv.PID)), itoa(int64(sv.ClientKey)))
	}
	return rs
}

// connFD returns the descriptor of a client's or server's socket (-1 when
// it is closed or has none).
func connFD(nc net.Conn) int {
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	if r, ok := nc.(*rawIO); ok {
		// Its owner asks, or anyone for a socket no loop takes (rawIO).
		switch {
		case r.br != nil:
			return syscallFD(r.br.nc) // the socket under the bridge
		case r.nb:
			if r.closed {
				return -1
			}
			return r.fd
		case r.nc == nil:
			return -1
		}
		nc = r.nc
	}
	return syscallFD(nc)
}

func listenerFD(ln net.Listener) int { return syscallFD(ln) }

func syscallFD(x any) int {
	sc, ok := x.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(u uintptr) { fd = int(u) }) != nil {
		return -1
	}
	return fd
}

// consoleCommand runs the commands of this file; ok is false for a verb
// that is not one of them.
func (c *clientConn) consoleCommand(verb, cmd string, args []string) (out []byte, ok bool, err error) {
	p := c.proxy
	switch verb {
	case "SET":
		key, value, err := parseSet(cmd)
		if err != nil {
			return nil, true, err
		}
		if err := p.set(key, value); err != nil {
			return nil, true, err
		}
		// The value is not logged: a list of users is fine, but SET is
		// the one command that takes free text.
		p.log.Info("admin console: SET", "user", c.user, "key", key)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte("SET")}), true, nil
	case "KILL":
		if len(args) != 1 {
			return nil, true, adminErrorf("usage: KILL <db>")
		}
		db := strings.Trim(args[0], `"`)
		n, err := p.kill(db)
		if err != nil {
			return nil, true, err
		}
		p.log.Warn("admin console: KILL", "user", c.user, "database", db, "clients_closed", n)
		return encode(nil, &pgproto3.CommandComplete{CommandTag: []byte("KILL")}), true, nil
	}
	return nil, false, nil
}

// errKilled ends the wait of a client that KILL closed; the client gets
// its kill message (clientConn.kill) as it goes.
var errKilled = errors.New("database killed")

// kick wakes every client waiting for a paused database, which waits
// again unless KILL closed it.
func (ps *pauseState) kick() {
	for {
		old := ps.cur.Load()
		if old == nil {
			return
		}
		// The same pause, with a channel of its own; dbs is shared, as
		// no snapshot's is ever changed.
		next := &pauseSnap{all: old.all, dbs: old.dbs, resumed: make(chan struct{})}
		if ps.cur.CompareAndSwap(old, next) {
			close(old.resumed)
			return
		}
	}
}
