package pooler

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
				if os.Getenv("CI") == "true" {
					t.Fatal("psql not found")
				}
				t.Skip("psql not found")
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
// that asks for md5; an md5 hash there cannot log in to the server.
func TestServerPasswordFromAuthFile(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 30*time.Second)
	tests := []struct {
		name   string
		secret string
		ok     bool
	}{
		{"plain text", pgtest.MD5Password, true},
		{"md5 hash", "md5" + md5hex(pgtest.MD5Password+pgtest.MD5User), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := startProxy(t, srv, Config{
				PoolSize: 1, AuthType: AuthMD5, Users: Userlist{pgtest.MD5User: tt.secret},
				Upstream:         srv.TCPURL(pgtest.SuperUser, ""), // the server wants md5 from md5user over TCP
				QueryWaitTimeout: 2 * time.Second,
			})
			cfg, _ := pgx.ParseConfig(tp.url(pgtest.MD5User, pgtest.MD5Password))
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
