package pooler

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

func TestMaxClientConn(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2, MaxClientConn: 2})
	ctx := testCtx(t, 20*time.Second)
	tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	_, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
	if sqlState(err) != "53300" {
		t.Fatalf("third client: want 53300, got %v", err)
	}
	// The clients already in are unaffected; when one leaves, a new one fits.
	if _, err := b.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	b.Close(ctx)
	if !waitFor(2*time.Second, func() bool { return tp.clientCount() == 1 }) {
		t.Fatal("client count did not drop")
	}
	c, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
}

func TestQueryWaitTimeout(t *testing.T) {
	srv := pgtest.Shared(t)
	// The limit also bounds a's server login: long enough for a loaded
	// machine.
	tp := startProxy(t, srv, Config{PoolSize: 1, QueryWaitTimeout: 2 * time.Second})
	ctx := testCtx(t, 20*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := a.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Exec(ctx, "SELECT 1")
	if sqlState(err) != "08P01" {
		t.Fatalf("want 08P01 query_wait_timeout, got %v", err)
	}
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	// The waiter that timed out did not take the slot with it.
	c := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// TestQueryWaitTimeoutEach: each waiter has its own deadline. B waits
// first and times out; C, queued later, is still waiting when the server
// comes free and gets it.
func TestQueryWaitTimeoutEach(t *testing.T) {
	srv := pgtest.Shared(t)
	// Wide margins: on a loaded machine a COMMIT or a server login has
	// taken over half a second.
	tp := startProxy(t, srv, Config{PoolSize: 1, QueryWaitTimeout: 2400 * time.Millisecond})
	ctx := testCtx(t, 20*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	c := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := a.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	bErr := make(chan error, 1)
	go func() { _, err := b.Exec(ctx, "SELECT 1"); bErr <- err }()
	time.Sleep(1200 * time.Millisecond)
	cErr := make(chan error, 1)
	go func() { _, err := c.Exec(ctx, "SELECT 2"); cErr <- err }()
	if err := <-bErr; sqlState(err) != "08P01" {
		t.Fatalf("first waiter: want 08P01 query_wait_timeout, got %v", err)
	}
	// B's deadline passed (2.4 s); C's is 1.2 s later.
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-cErr; err != nil {
		t.Fatalf("second waiter, served before its deadline: %v", err)
	}
}

// rawConn dials the proxy.
func rawConn(t *testing.T, tp *testProxy) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestMalformedStartup sends broken and unsupported startup packets; each
// gets an ErrorResponse (or, for encryption requests, 'N') and only that
// client is closed.
func TestMalformedStartup(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	be32 := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
		return b
	}
	startup := func(version uint32, body string) []byte {
		return append(be32(uint32(8+len(body)), version), body...)
	}
	tests := []struct {
		name     string
		packet   []byte
		wantCode string
	}{
		{"length too small", be32(4), "08P01"},
		{"length too large", be32(1 << 30), "08P01"},
		{"negative length", be32(0xfffffff0), "08P01"},
		{"protocol 2.0", startup(2<<16, "user\x00x\x00\x00"), "0A000"},
		{"protocol 4.0", startup(4<<16, "user\x00x\x00\x00"), "0A000"},
		{"no user", startup(3<<16, "\x00"), "08P01"},
		{"unterminated parameters", startup(3<<16, "user\x00x"), "08P01"},
		{"bytes after the terminator", startup(3<<16, "user\x00x\x00\x00junk"), "08P01"},
		{"unsupported parameter", startup(3<<16, "user\x00postgres\x00replication\x00true\x00\x00"), "08P01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := rawConn(t, tp)
			conn.Write(tt.packet)
			fe := pgproto3.NewFrontend(conn, conn)
			e := receiveError(t, fe)
			if e.Code != tt.wantCode {
				t.Fatalf("got %s %q, want %s", e.Code, e.Message, tt.wantCode)
			}
			if _, err := fe.Receive(); err == nil {
				t.Fatal("connection still open after the error")
			}
		})
	}
	t.Run("Terminate before the startup packet closes without a word", func(t *testing.T) {
		conn := rawConn(t, tp)
		conn.Write([]byte{'X', 0, 0, 0, 4})
		b, err := io.ReadAll(conn)
		if err != nil || len(b) != 0 {
			t.Fatalf("answer %q, %v; want the connection closed", b, err)
		}
	})
	// A client that goes away while it connects is closed without a
	// word, as PostgreSQL does: a half-sent startup packet, or nothing
	// after the answer to its SSLRequest.
	for _, early := range []struct {
		name string
		sent []byte
		// answer is what the pooler says before the client leaves.
		answer string
	}{
		{"a half-sent startup packet", startup(3<<16, "user\x00postgres\x00\x00")[:10], ""},
		{"a half-sent length", be32(8)[:2], ""},
		{"nothing after the SSLRequest's answer", be32(8, 80877103), "N"},
	} {
		t.Run(early.name+" closes without a word", func(t *testing.T) {
			conn := rawConn(t, tp)
			conn.Write(early.sent)
			if early.answer != "" {
				b := make([]byte, len(early.answer))
				if _, err := io.ReadFull(conn, b); err != nil || string(b) != early.answer {
					t.Fatalf("answer %q, %v; want %q", b, err, early.answer)
				}
			}
			tc, ok := conn.(interface{ CloseWrite() error })
			if !ok {
				t.Fatalf("%T cannot half-close", conn)
			}
			tc.CloseWrite()
			b, err := io.ReadAll(conn)
			if err != nil || len(b) != 0 {
				t.Fatalf("answer %q, %v; want the connection closed", b, err)
			}
		})
	}
	t.Run("SSLRequest and GSSENCRequest get N", func(t *testing.T) {
		conn := rawConn(t, tp)
		for _, code := range []uint32{80877103, 80877104} {
			conn.Write(be32(8, code))
			b := make([]byte, 1)
			if _, err := io.ReadFull(conn, b); err != nil || b[0] != 'N' {
				t.Fatalf("answer %q, %v", b, err)
			}
		}
	})
	t.Run("a startup packet sent right behind the SSLRequest", func(t *testing.T) {
		conn := rawConn(t, tp)
		params := "user\x00" + pgtest.SuperUser + "\x00database\x00" + pgtest.Database + "\x00\x00"
		pkt := append(be32(uint32(8+len(params)), 196608), params...)
		conn.Write(append(be32(8, 80877103), pkt...))
		b := make([]byte, 1)
		if _, err := io.ReadFull(conn, b); err != nil || b[0] != 'N' {
			t.Fatalf("answer %q, %v", b, err)
		}
		fe := pgproto3.NewFrontend(conn, conn)
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := msg.(*pgproto3.ErrorResponse); ok {
				t.Fatalf("login refused: %s", e.Message)
			}
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	})
	// The proxy still serves everyone else.
	c := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := c.Exec(testCtx(t, 10*time.Second), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// TestMalformedMessages sends oversized and invalid messages after login,
// idle and inside a transaction; only that client is closed and the
// server it had is not handed on dirty.
func TestMalformedMessages(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1, MaxMessageSize: 1 << 20})
	ctx := testCtx(t, 30*time.Second)
	tests := []struct {
		name     string
		inTx     bool
		header   []byte
		wantCode string
	}{
		{"oversized query", false, []byte{'Q', 0, 0x20, 0, 0}, "08P01"},
		{"oversized in transaction", true, []byte{'Q', 0x10, 0, 0, 0}, "08P01"},
		{"length below 4", false, []byte{'Q', 0, 0, 0, 2}, "08P01"},
		{"unknown type", true, []byte{'z', 0, 0, 0, 4}, "08P01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe, conn := rawLogin(t, tp, nil)
			defer conn.Close()
			if tt.inTx {
				fe.Send(&pgproto3.Query{String: "BEGIN; CREATE TEMP TABLE dirty (x int)"})
				fe.Flush()
				expectTypes(t, fe, "CommandComplete", "CommandComplete", "ReadyForQuery")
			}
			conn.Write(tt.header)
			e := receiveError(t, fe)
			if e.Code != tt.wantCode {
				t.Fatalf("got %s %q", e.Code, e.Message)
			}
			if _, err := fe.Receive(); err == nil {
				t.Fatal("client still open")
			}
			c := tp.connect(t, pgx.QueryExecModeExec)
			var st *string
			if err := c.QueryRow(ctx, "SELECT to_regclass('pg_temp.dirty')::text").Scan(&st); err != nil {
				t.Fatal(err)
			}
			if st != nil || c.PgConn().TxStatus() != 'I' {
				t.Fatalf("next client got a dirty server (temp table %v, status %q)", *st, c.PgConn().TxStatus())
			}
		})
	}
	// A large message under the limit works.
	c := tp.connect(t, pgx.QueryExecModeExec)
	big := make([]byte, 700<<10)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT length($1::text)", string(big)).Scan(&n); err != nil || n != len(big) {
		t.Fatalf("large message: %d, %v", n, err)
	}
}

// The [databases] allow-list: listed names only (3D000 otherwise, as
// PgBouncer answers), an alias connects to its server database, an entry's
// pool size applies to its pools, "*" admits the rest, and RELOAD applies
// a changed list at once.
func TestDatabaseAllowList(t *testing.T) {
	srv := pgtest.Shared(t)
	dbs := map[string]Database{
		"app":           {DBName: pgtest.Database, PoolSize: 1},
		pgtest.Database: {},
	}
	cfg := Config{Databases: dbs}
	cfg.Reload = func(c *Config) error {
		c.Databases = map[string]Database{"app": {DBName: pgtest.Database, PoolSize: 3}, "*": {}}
		return nil
	}
	tp := startProxy(t, srv, cfg)
	ctx := testCtx(t, 20*time.Second)
	connectTo := func(db string) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.SuperUser, tp.port, db))
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return c, err
	}
	sizeOf := func(db string) int {
		for _, pl := range tp.Snapshot().Pools {
			if pl.Database == db {
				return pl.Size
			}
		}
		return -1
	}
	app, err := connectTo("app")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := app.QueryRow(ctx, "SELECT current_database()").Scan(&got); err != nil || got != pgtest.Database {
		t.Fatalf("alias app: current_database() = %q, %v; want %s", got, err, pgtest.Database)
	}
	if n := sizeOf("app"); n != 1 {
		t.Errorf("pool app: size %d, want the entry's 1", n)
	}
	if _, err := connectTo(pgtest.Database); err != nil {
		t.Fatal(err)
	}
	if n := sizeOf(pgtest.Database); n != 20 {
		t.Errorf("pool %s: size %d, want the default 20", pgtest.Database, n)
	}
	_, err = connectTo("template1")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" || pgErr.Message != "no such database: template1" {
		t.Fatalf("template1 (not listed): want FATAL 3D000 no such database, got %v", err)
	}
	for _, pl := range tp.Snapshot().Pools {
		if pl.Database == "template1" {
			t.Errorf("a refused database got a pool: %+v", pl)
		}
	}
	if err := tp.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := sizeOf("app"); n != 3 {
		t.Errorf("pool app after RELOAD: size %d, want 3", n)
	}
	t1, err := connectTo("template1")
	if err != nil {
		t.Fatalf("template1 after RELOAD added *: %v", err)
	}
	if err := t1.QueryRow(ctx, "SELECT current_database()").Scan(&got); err != nil || got != "template1" {
		t.Fatalf("template1: current_database() = %q, %v", got, err)
	}
}

func TestParseDatabase(t *testing.T) {
	for _, tc := range []struct {
		spec, name string
		db         Database
		err        string
	}{
		{spec: "app", name: "app"},
		{spec: "app=real", name: "app", db: Database{DBName: "real"}},
		{spec: "app:5", name: "app", db: Database{PoolSize: 5}},
		{spec: " app = real : 7 ", name: "app", db: Database{DBName: "real", PoolSize: 7}},
		{spec: "app=app", name: "app"},
		{spec: "*", name: "*"},
		{spec: "*:4", name: "*", db: Database{PoolSize: 4}},
		{spec: "*=x", err: "cannot name a server database"},
		{spec: "app:0", err: "pool size"},
		{spec: "app:x", err: "pool size"},
		{spec: "=x", err: "want NAME"},
		{spec: "app=", err: "want NAME"},
		{spec: "", err: "want NAME"},
		{spec: "app=real:3?auth_user=pgb&auth_dbname=authdb", name: "app", db: Database{DBName: "real", PoolSize: 3, AuthUser: "pgb", AuthDBName: "authdb"}},
		{spec: "*?auth_query=SELECT+u%2C+p+FROM+f%28%241%29", name: "*", db: Database{AuthQuery: "SELECT u, p FROM f($1)"}},
		{spec: "app?auth_user=a&auth_user=b", err: "given 2 times"},
		{spec: "app?pool_mode=session", err: "unknown setting"},
		{spec: "app:0:10", name: "app", db: Database{MaxDBConnections: 10}},
		{spec: "app=real:5:8", name: "app", db: Database{DBName: "real", PoolSize: 5, MaxDBConnections: 8}},
		{spec: "app=real:5:8?auth_user=pgb", name: "app", db: Database{DBName: "real", PoolSize: 5, MaxDBConnections: 8, AuthUser: "pgb"}},
		{spec: "app:5:-1", err: "not a whole number"},
		{spec: "a:1:2:3", err: "want NAME"},
	} {
		name, db, err := ParseDatabase(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDatabase(%q) error = %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || name != tc.name || db != tc.db {
			t.Errorf("ParseDatabase(%q) = %q, %+v, %v; want %q, %+v", tc.spec, name, db, err, tc.name, tc.db)
		}
	}
}

// TestLoginsPerAddress: one address cannot hold every login slot: past
// MaxLoginsPerAddress its connections are refused at once with 53300,
// and a client from another address still logs in.
func TestLoginsPerAddress(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{MaxLoginClients: 8, MaxLoginsPerAddress: 4, ClientLoginTimeout: 30 * time.Second})
	from := func(ip string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// Silent sockets from 127.0.0.2: four are let in to log in, the
	// rest are refused.
	refused := 0
	for range 12 {
		c := from("127.0.0.2")
		c.Write([]byte{0})
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		reply, _ := io.ReadAll(c)
		if len(reply) > 0 {
			if reply[0] != 'E' || !strings.Contains(string(reply), "53300") || !strings.Contains(string(reply), "max_logins_per_address") {
				t.Fatalf("refused with %q, want FATAL 53300 max_logins_per_address", reply)
			}
			refused++
		}
	}
	if refused != 8 || tp.Snapshot().LoggingIn != 4 {
		t.Fatalf("%d refused and %d logging in, want 8 and 4", refused, tp.Snapshot().LoggingIn)
	}
	// Another address logs in.
	ctx := testCtx(t, 10*time.Second)
	cfg, err := pgx.ParseConfig(tp.url(pgtest.SuperUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
		return d.DialContext(ctx, network, addr)
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("a client of another address: %v", err)
	}
	c.Close(ctx)
}

// TestLoginFailureBackoff: after a few failed logins in a row, each next
// failure's answer is held back longer; a login with the right password
// is answered at once and ends the run.
func TestLoginFailureBackoff(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AuthType: AuthMD5, Users: Userlist{pgtest.MD5User: pgtest.MD5Password},
		Upstream: srv.TCPURL(pgtest.SuperUser, ""), LoginFailureBackoff: time.Second})
	ctx := testCtx(t, 30*time.Second)
	fail := func() time.Duration {
		start := time.Now()
		if _, _, err := loginAs(ctx, tp, pgtest.MD5User, "wrong"); sqlState(err) != "28P01" {
			t.Fatalf("a wrong password: %v, want 28P01", err)
		}
		return time.Since(start)
	}
	for range 3 {
		fail()
	}
	if d := fail(); d < 100*time.Millisecond {
		t.Errorf("the fourth failure in a row answered after %s, want at least 100ms", d)
	}
	if d := fail(); d < 200*time.Millisecond {
		t.Errorf("the fifth failure in a row answered after %s, want at least 200ms", d)
	}
	c, _, err := loginAs(ctx, tp, pgtest.MD5User, pgtest.MD5Password)
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	c.Close(ctx)
	// The run is over: the next failure is answered at once again (the
	// first three always are).
	start := time.Now()
	fail()
	if d := time.Since(start); d >= time.Second {
		t.Errorf("a failure after a success held back %s", d)
	}
}

// TestLoginBounds: connections that never finish logging in are bounded
// (MaxLoginClients; more are refused at once with 53300), end at the
// login timeout, do not count against max_client_conn, and do not hold up
// shutdown; an admin gets in when clients are at the limit.
func TestLoginBounds(t *testing.T) {
	srv := pgtest.Shared(t)
	users := Userlist{pgtest.SuperUser: "pw", pgtest.MD5User: "pw"}
	tp := startProxy(t, srv, Config{AuthType: AuthSCRAM, Users: users, MaxClientConn: 2, MaxLoginClients: 4,
		ClientLoginTimeout: 1500 * time.Millisecond, AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 30*time.Second)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// Two stall at the SASL challenge, two after one byte.
	for range 2 {
		c := dial()
		fe := pgproto3.NewFrontend(c, c)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": pgtest.MD5User, "database": pgtest.Database}})
		fe.Flush()
		if m, err := fe.Receive(); err != nil {
			t.Fatal(err)
		} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
			t.Fatalf("got %T, want the SASL challenge", m)
		}
	}
	for range 2 {
		dial().Write([]byte{0})
	}
	if !waitFor(2*time.Second, func() bool { return tp.Snapshot().LoggingIn == 4 }) {
		t.Fatalf("%d connections logging in, want 4", tp.Snapshot().LoggingIn)
	}
	// The fifth is refused at once.
	c := dial()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	reply, _ := io.ReadAll(c)
	if len(reply) == 0 || reply[0] != 'E' || !strings.Contains(string(reply), "53300") || !strings.Contains(string(reply), "max_login_clients") {
		t.Fatalf("fifth connection: %q, want FATAL 53300 max_login_clients", reply)
	}
	// The stalled ones end at the login timeout; then two clients log in
	// (max_client_conn 2), the stalled ones never having counted.
	if !waitFor(3*time.Second, func() bool { return tp.Snapshot().LoggingIn == 0 }) {
		t.Fatalf("%d connections still logging in after the login timeout", tp.Snapshot().LoggingIn)
	}
	for range 2 {
		c, err := pgx.Connect(ctx, tp.url(pgtest.MD5User, "pw"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	if _, err := pgx.Connect(ctx, tp.url(pgtest.MD5User, "pw")); sqlState(err) != "53300" {
		t.Fatalf("third client: %v, want 53300", err)
	}
	// The admin's reserved connection.
	admin, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:pw@127.0.0.1:%d/pgpoolcheck?sslmode=disable", pgtest.SuperUser, tp.port))
	if err != nil {
		t.Fatalf("admin at the client limit: %v", err)
	}
	admin.Close(ctx)
	// Shutdown does not wait for a login in progress.
	dial().Write([]byte{0})
	waitFor(2*time.Second, func() bool { return tp.Snapshot().LoggingIn == 1 })
	start := time.Now()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tp.Shutdown(sctx)
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown with a login in progress took %v", d)
	}
}

// TestPoolsComeAndGo: logins to databases the server does not have leave
// no pool behind (SHOW POOLS and the metrics read the same list), while a
// pool in use stays.
func TestPoolsComeAndGo(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{})
	ctx := testCtx(t, 60*time.Second)
	keep := tp.connect(t, pgx.QueryExecModeExec)
	if _, err := keep.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		_, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@127.0.0.1:%d/nosuchdb_%d?sslmode=disable", pgtest.SuperUser, tp.port, i))
		if sqlState(err) != "3D000" {
			t.Fatalf("made-up database %d: %v, want the server's 3D000", i, err)
		}
	}
	ok := waitFor(3*time.Second, func() bool { return len(tp.Snapshot().Pools) == 1 })
	if pools := tp.Snapshot().Pools; !ok || pools[0].Database != pgtest.Database {
		t.Fatalf("pools after 30 logins to made-up databases: %+v, want only %s", pools, pgtest.Database)
	}
	if _, err := keep.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("the pool in use: %v", err)
	}
}

// TestUnixSocket: with UnixSocketDir the pooler also listens where libpq
// looks (psql -h DIR -p PORT), in both relays' paths, exempt from the TLS
// requirement (local clients), and removes the socket when it stops.
func TestUnixSocket(t *testing.T) {
	srv := pgtest.Shared(t)
	dir := t.TempDir()
	pk := newTestPKI(t, "unix")
	tp := startProxy(t, srv, Config{UnixSocketDir: dir, PoolSize: 2, ClientTLSMode: TLSRequire, ClientTLS: pk.config()})
	ctx := testCtx(t, 20*time.Second)
	url := fmt.Sprintf("host=%s port=%d user=%s dbname=%s", dir, tp.port, pgtest.SuperUser, pgtest.Database)
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("over the Unix socket: %v", err)
	}
	defer c.Close(ctx)
	for i := range 3 {
		var n int
		if err := c.QueryRow(ctx, "SELECT $1::int", i).Scan(&n); err != nil || n != i {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	sock := filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", tp.port))
	if ln, err := listenUnix(dir, &net.TCPAddr{Port: tp.port}); err == nil || !strings.Contains(err.Error(), "another process listens") {
		if ln != nil {
			ln.Close()
		}
		t.Errorf("a second pooler on the same socket: %v", err)
	}
	c.Close(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tp.Shutdown(sctx)
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket file is left after shutdown: %v", err)
	}
}

// TestSoReusePort: two poolers with SoReusePort listen on one address and
// both serve clients (the kernel spreads the connections); without it the
// second cannot listen.
func TestSoReusePort(t *testing.T) {
	srv := pgtest.Shared(t)
	a := startProxy(t, srv, Config{SoReusePort: true})
	addr := fmt.Sprintf("127.0.0.1:%d", a.port)
	b, err := New(Config{Listen: addr, Upstream: srv.SocketURL(pgtest.SuperUser), SoReusePort: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Listen(); err != nil {
		t.Fatalf("second pooler with SO_REUSEPORT: %v", err)
	}
	go b.Serve(context.Background())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	}()
	ctx := testCtx(t, 30*time.Second)
	for range 40 {
		c, err := pgx.Connect(ctx, a.url(pgtest.SuperUser, ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
		if b.Snapshot().ServersOpened > 0 && a.Snapshot().ServersOpened > 0 {
			break
		}
	}
	if b.Snapshot().ServersOpened == 0 || a.Snapshot().ServersOpened == 0 {
		t.Errorf("clients reached only one pooler: a opened %d servers, b %d", a.Snapshot().ServersOpened, b.Snapshot().ServersOpened)
	}
	c, err := New(Config{Listen: addr, Upstream: srv.SocketURL(pgtest.SuperUser)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("a pooler without SO_REUSEPORT on the same address: %v, want EADDRINUSE", err)
	}
}
