package pooler

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestAuth logs in through the proxy with md5 and SCRAM-SHA-256, with
// userlist secrets in each of PgBouncer's three forms, with pgx and psql,
// right and wrong passwords.
func TestAuth(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 60*time.Second)
	direct := directConn(t, srv)
	var scramVerifier string
	if err := direct.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", pgtest.SCRAMUser).Scan(&scramVerifier); err != nil {
		t.Fatal(err)
	}
	const user, password = "alice", "wonder land'\"pw"
	if _, err := direct.Exec(ctx, "DROP ROLE IF EXISTS alice; CREATE ROLE alice LOGIN"); err != nil {
		t.Fatal(err)
	}
	users := Userlist{
		pgtest.MD5User:   "md5" + md5hex(pgtest.MD5Password+pgtest.MD5User),
		pgtest.SCRAMUser: scramVerifier,
		user:             password,
	}
	// The server trusts every user on its socket, so the pooler needs no
	// server password here.
	for _, at := range []AuthType{AuthMD5, AuthSCRAM} {
		t.Run(string(at), func(t *testing.T) {
			tp := startProxy(t, srv, Config{PoolSize: 2, AuthType: at, Users: users})
			tests := []struct {
				user, password string
				ok             bool
			}{
				{user, password, true},
				{user, "wrong", false},
				{pgtest.SCRAMUser, pgtest.SCRAMPassword, true},
				{pgtest.SCRAMUser, "wrong", false},
				{pgtest.MD5User, pgtest.MD5Password, at == AuthMD5}, // an md5 secret cannot check SCRAM
				{pgtest.MD5User, "wrong", false},
				{"nobody", "x", false},
			}
			for _, tt := range tests {
				cfg, err := pgx.ParseConfig(tp.url(tt.user, ""))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Password = tt.password
				cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
				c, err := pgx.ConnectConfig(ctx, cfg)
				if tt.ok != (err == nil) {
					t.Errorf("%s/%s: login error %v, want success %v", tt.user, tt.password, err, tt.ok)
				}
				if err != nil {
					if code := sqlState(err); code != "28P01" {
						t.Errorf("%s: error %v, want 28P01", tt.user, err)
					}
					continue
				}
				var cu string
				if err := c.QueryRow(ctx, "SELECT current_user").Scan(&cu); err != nil || cu != tt.user {
					t.Errorf("current_user = %q, %v", cu, err)
				}
				c.Close(ctx)
			}
			// psql, a libpq client.
			psql := srv.Tool("psql")
			if psql == "" {
				pgtest.Optional(t, "psql", "install PostgreSQL's client programs", "not found")
			}
			for _, tt := range []struct {
				password string
				ok       bool
			}{{password, true}, {"bad", false}} {
				cmd := exec.CommandContext(ctx, psql, "-X", "-A", "-t", "-c", "SELECT current_user", tp.url(user, ""))
				cmd.Env = append(os.Environ(), "PGPASSWORD="+tt.password)
				out, err := cmd.CombinedOutput()
				if tt.ok && (err != nil || strings.TrimSpace(string(out)) != user) {
					t.Errorf("psql: %v: %s", err, out)
				}
				if !tt.ok && (err == nil || !strings.Contains(string(out), "password authentication failed")) {
					t.Errorf("psql with a wrong password: %v: %s", err, out)
				}
			}
		})
	}
}

// TestServerPasswordFromAuthFile checks where the pooler gets a server
// password: the auth file's plain-text password works towards a server
// that asks for md5, and so does an md5 hash there (it answers the md5
// challenge by itself, passthrough.go); a hash of another password is the
// server's 28P01.
func TestServerPasswordFromAuthFile(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 30*time.Second)
	tests := []struct {
		name     string
		secret   string
		password string // the client's
		ok       bool
	}{
		{"plain text", pgtest.MD5Password, pgtest.MD5Password, true},
		{"md5 hash", "md5" + md5hex(pgtest.MD5Password+pgtest.MD5User), pgtest.MD5Password, true},
		{"md5 hash of another password", "md5" + md5hex("other"+pgtest.MD5User), "other", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := startProxy(t, srv, Config{
				PoolSize: 1, AuthType: AuthMD5, Users: Userlist{pgtest.MD5User: tt.secret},
				Upstream:         srv.TCPURL(pgtest.SuperUser, ""), // the server wants md5 from md5user over TCP
				QueryWaitTimeout: 2 * time.Second,
			})
			cfg, _ := pgx.ParseConfig(tp.url(pgtest.MD5User, ""))
			cfg.Password = tt.password
			cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
			c, err := pgx.ConnectConfig(ctx, cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("login: %v, want success %v", err, tt.ok)
			}
			if err == nil {
				if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
					t.Fatal(err)
				}
				c.Close(ctx)
			} else if code := sqlState(err); code != "28P01" {
				t.Fatalf("server login failure reached the client as %v, want the server's 28P01", err)
			}
		})
	}
}

func TestTrustOnlyOnLoopback(t *testing.T) {
	tests := []struct {
		listen   string
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:6432", false, true},
		{"[::1]:6432", false, true},
		{"localhost:6432", false, true},
		{"0.0.0.0:6432", false, false},
		{":6432", false, false},
		{"10.1.2.3:6432", false, false},
		{"0.0.0.0:6432", true, true},
	}
	for _, tt := range tests {
		_, err := New(Config{Listen: tt.listen, Upstream: "postgres://x@localhost/db", InsecureTrust: tt.insecure})
		if (err == nil) != tt.ok {
			t.Errorf("%s insecure=%v: err %v, want ok %v", tt.listen, tt.insecure, err, tt.ok)
		}
	}
	if _, err := New(Config{Listen: "127.0.0.1:1", Upstream: "postgres://x@localhost/db", AuthType: AuthSCRAM}); err == nil {
		t.Error("scram without an auth file was accepted")
	}
	_ = context.Background
}

// TestTrustHonoursAuthFile: under trust an auth file lists who may log
// in, as PgBouncer; a user not in it is refused before the server is
// asked (which may trust anyone).
func TestTrustHonoursAuthFile(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 30*time.Second)
	listed := startProxy(t, srv, Config{AuthType: AuthTrust, Users: Userlist{pgtest.SuperUser: "SCRAM-SHA-256$unused"}})
	c, _, err := loginAs(ctx, listed, pgtest.SuperUser, "")
	if err != nil {
		t.Fatalf("a listed user: %v", err)
	}
	c.Close(ctx)
	_, _, err = loginAs(ctx, listed, pgtest.MD5User, "")
	if sqlState(err) != "28000" || errMessage(err) != `"trust" authentication failed` {
		t.Errorf("a user not in the auth file: %v, want 28000 \"trust\" authentication failed", err)
	}
	open := startProxy(t, srv, Config{AuthType: AuthTrust})
	c, _, err = loginAs(ctx, open, pgtest.SuperUser, "")
	if err != nil {
		t.Fatalf("trust without an auth file: %v", err)
	}
	c.Close(ctx)
}

// TestEmptyPasswordRefused: a userlist entry holding the empty password,
// in any of its three forms, never logs in (PostgreSQL refuses empty
// passwords), with md5 or SCRAM.
func TestEmptyPasswordRefused(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 30*time.Second)
	empty, err := deriveSCRAMSecret("", []byte("0123456789abcdef"), scramIterations)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	users := Userlist{
		"e_plain": "",
		"e_md5":   "md5" + md5hex("e_md5"),
		"e_scram": fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", empty.iterations, b64(empty.salt), b64(empty.storedKey), b64(empty.serverKey)),
	}
	for user, secret := range users {
		if !emptyPassword(user, secret) {
			t.Errorf("%s: the empty password is not recognized in %q", user, secret)
		}
	}
	if emptyPassword("x", "md5"+md5hex("pwx")) || emptyPassword("x", "pw") {
		t.Error("a non-empty password taken for empty")
	}
	for _, at := range []AuthType{AuthMD5, AuthSCRAM} {
		tp := startProxy(t, srv, Config{AuthType: at, Users: users})
		for user := range users {
			cfg, err := pgx.ParseConfig(tp.url(user, ""))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Password = ""
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err == nil {
				c.Close(ctx)
				t.Errorf("%s/%s: logged in with the empty password", at, user)
			} else if code := sqlState(err); code != "28P01" {
				t.Errorf("%s/%s: %v, want 28P01", at, user, err)
			}
		}
	}
}

// TestMockSalt: the SCRAM salt an unknown user is shown is the same on
// every attempt and differs between names, so that it does not reveal
// which names exist; the iteration count is PostgreSQL's.
func TestMockSalt(t *testing.T) {
	srv := pgtest.Shared(t)
	users := Userlist{"known": "secret", "other": "SCRAM-SHA-256$4096:c2FsdHNhbHRzYWx0c2FsdA==$c3RvcmVka2V5c3RvcmVka2V5c3RvcmVka2V5c3RvcmU=:c2VydmVya2V5c2VydmVya2V5c2VydmVya2V5c2VydmU="}
	tp := startProxy(t, srv, Config{AuthType: AuthSCRAM, Users: users})
	serverFirst := func(user string) string { return scramServerFirst(t, tp, user) }
	a1, a2, b := serverFirst("ghost_a"), serverFirst("ghost_a"), serverFirst("ghost_b")
	if a1 != a2 {
		t.Errorf("unknown user: salt changed between attempts: %q, %q", a1, a2)
	}
	if a1 == b {
		t.Errorf("two unknown users got the same salt %q", a1)
	}
	if !strings.HasSuffix(a1, ",i=4096") {
		t.Errorf("unknown user: %q, want PostgreSQL's 4096 iterations", a1)
	}
	if k := serverFirst("known"); !strings.HasSuffix(k, ",i=4096") || k == a1 {
		t.Errorf("known user: %q", k)
	}
	// A restart with the same auth file shows the same mock salt, as a
	// real user's verifier keeps its salt.
	again := startProxy(t, srv, Config{AuthType: AuthSCRAM, Users: users})
	if a3 := scramServerFirst(t, again, "ghost_a"); a3 != a1 {
		t.Errorf("unknown user: salt changed across a restart: %q, then %q", a1, a3)
	}
}

// scramServerFirst starts a SCRAM login as user on tp and returns the
// server-first-message without its nonce: the salt and iteration count.
func scramServerFirst(t testing.TB, tp *testProxy, user string) string {
	{
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fe := pgproto3.NewFrontend(conn, conn)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": user, "database": pgtest.Database}})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		if m, err := fe.Receive(); err != nil {
			t.Fatal(err)
		} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
			t.Fatalf("%s: got %T, want AuthenticationSASL", user, m)
		}
		fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abcdefghijklmnop")})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		c, ok := m.(*pgproto3.AuthenticationSASLContinue)
		if !ok {
			t.Fatalf("%s: got %T, want AuthenticationSASLContinue", user, m)
		}
		// r=<nonce>,s=<salt>,i=<iterations>: drop the nonce, which is new
		// each time.
		_, rest, _ := strings.Cut(string(c.Data), ",")
		return rest
	}
}

// BenchmarkSCRAMFirstAnswer: how long a SCRAM login waits for the
// server-first-message, and the CPU the process spends per login (the
// client's share is the same in both), for a user in the auth file and an
// unknown one: the two should not tell names apart. Not a test: run with
// go test ./pooler -run XXX -bench SCRAMFirstAnswer.
func BenchmarkSCRAMFirstAnswer(b *testing.B) {
	srv := pgtest.Shared(b)
	users := Userlist{"known": "SCRAM-SHA-256$4096:c2FsdHNhbHRzYWx0c2FsdA==$c3RvcmVka2V5c3RvcmVka2V5c3RvcmVka2V5c3RvcmU=:c2VydmVya2V5c2VydmVya2V5c2VydmVya2V5c2VydmU="}
	tp := startProxy(b, srv, Config{AuthType: AuthSCRAM, Users: users})
	for _, user := range []string{"known", "unknown"} {
		b.Run(user, func(b *testing.B) {
			var r0, r1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			for i := 0; i < b.N; i++ {
				name := user
				if user == "unknown" {
					name = fmt.Sprintf("ghost_%d", i) // no name seen twice
				}
				scramServerFirst(b, tp, name)
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
			cpu := time.Duration(syscall.TimevalToNsec(r1.Utime) - syscall.TimevalToNsec(r0.Utime) + syscall.TimevalToNsec(r1.Stime) - syscall.TimevalToNsec(r0.Stime))
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/login")
		})
	}
}
