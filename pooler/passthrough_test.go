package pooler

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// scramText writes a verifier as pg_authid and the userlist hold it.
func scramText(s *scramSecret) string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", s.iterations, b64(s.salt), b64(s.storedKey), b64(s.serverKey))
}

// rolpassword reads a role's secret from pg_authid.
func rolpassword(t *testing.T, ctx context.Context, direct *pgx.Conn, role string) string {
	t.Helper()
	var s string
	if err := direct.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", role).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// loginAs connects through the proxy and returns current_user.
func loginAs(ctx context.Context, tp *testProxy, user, password string) (*pgx.Conn, string, error) {
	cfg, err := pgx.ParseConfig(tp.url(user, ""))
	if err != nil {
		return nil, "", err
	}
	cfg.Password = password
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	var cu string
	if err := c.QueryRow(ctx, "SELECT current_user").Scan(&cu); err != nil {
		c.Close(ctx)
		return nil, "", err
	}
	return c, cu, nil
}

// errMessage is a login error's message, or "".
func errMessage(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	return ""
}

// TestSCRAMPassThrough: with the server's SCRAM verifier in the userlist
// and no password anywhere, a client's SCRAM login gives the pooler the
// ClientKey it logs in to the server with, for this and later server
// connections; servers it cannot log in to that way give a clear FATAL
// at once. On both relays.
func TestSCRAMPassThrough(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 90*time.Second)
	direct := directConn(t, srv)
	verifier := rolpassword(t, ctx, direct, pgtest.SCRAMUser)
	// md5user's server secret is md5: a SCRAM verifier of its password
	// logs the client in but cannot log in to the server.
	md5userVerifier, err := deriveSCRAMSecret(pgtest.MD5Password, []byte("md5user-salt-123"), scramIterations)
	if err != nil {
		t.Fatal(err)
	}
	for _, relay := range []Relay{RelayBridged, RelayLoop} {
		t.Run(string(relay), func(t *testing.T) {
			// The backends of the run before end when their processes
			// exit, which on a loaded machine takes a while: the count
			// below is of this run's.
			if !waitFor(20*time.Second, func() bool {
				var n int
				err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND backend_type = 'client backend'", pgtest.SCRAMUser).Scan(&n)
				return err == nil && n == 0
			}) {
				t.Fatalf("backends of %s left over from before", pgtest.SCRAMUser)
			}
			tp := startProxy(t, srv, Config{
				Relay: relay, PoolSize: 2, AuthType: AuthSCRAM,
				Users: Userlist{pgtest.SCRAMUser: verifier, pgtest.MD5User: scramText(md5userVerifier)},
				// Over TCP the server wants SCRAM from scramuser and md5
				// from md5user; the URL has no password.
				Upstream:         srv.TCPURL(pgtest.SuperUser, ""),
				QueryWaitTimeout: 20 * time.Second,
			})
			c1, cu, err := loginAs(ctx, tp, pgtest.SCRAMUser, pgtest.SCRAMPassword)
			if err != nil || cu != pgtest.SCRAMUser {
				t.Fatalf("login with the verifier in the userlist: %v (current_user %q)", err, cu)
			}
			defer c1.Close(ctx)
			// c1 keeps its server in a transaction, so c2 needs a second
			// server login, made with the ClientKey kept from the logins.
			if _, err := c1.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			c2, cu, err := loginAs(ctx, tp, pgtest.SCRAMUser, pgtest.SCRAMPassword)
			if err != nil || cu != pgtest.SCRAMUser {
				t.Fatalf("second server connection: %v (current_user %q)", err, cu)
			}
			var n int
			if err := c2.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND backend_type = 'client backend'", pgtest.SCRAMUser).Scan(&n); err != nil || n != 2 {
				t.Errorf("server connections of %s: %d, %v; want 2", pgtest.SCRAMUser, n, err)
			}
			c2.Close(ctx)
			if _, err := c1.Exec(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}

			if _, _, err := loginAs(ctx, tp, pgtest.SCRAMUser, "wrong"); sqlState(err) != "28P01" {
				t.Errorf("wrong password: %v, want 28P01", err)
			}

			start := time.Now()
			_, _, err = loginAs(ctx, tp, pgtest.MD5User, pgtest.MD5Password)
			if sqlState(err) != "28000" || !strings.Contains(errMessage(err), `the server asks user "md5user" for md5 and the pooler holds only a SCRAM verifier`) {
				t.Errorf("md5 server, SCRAM verifier: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the md5 server's refusal took %v", d)
			}
		})
	}
}

// TestSCRAMPassThroughRefusals: a server whose verifier has another salt
// than the userlist's, and a SCRAM server login before any client logged
// in with SCRAM, are clear errors.
func TestSCRAMPassThroughRefusals(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 60*time.Second)
	// The right password with another salt: the client logs in, the
	// server's challenge has a salt the verifier does not match.
	other, err := deriveSCRAMSecret(pgtest.SCRAMPassword, []byte("another-salt-456"), scramIterations)
	if err != nil {
		t.Fatal(err)
	}
	tp := startProxy(t, srv, Config{
		AuthType: AuthSCRAM, Users: Userlist{pgtest.SCRAMUser: scramText(other)},
		Upstream: srv.TCPURL(pgtest.SuperUser, ""), QueryWaitTimeout: 20 * time.Second,
	})
	_, _, err = loginAs(ctx, tp, pgtest.SCRAMUser, pgtest.SCRAMPassword)
	if sqlState(err) != "28000" || !strings.Contains(errMessage(err), "another salt or iteration count") {
		t.Errorf("another verifier on the server: %v", err)
	}

	// trust: no client proves anything, so no ClientKey exists.
	direct := directConn(t, srv)
	tp = startProxy(t, srv, Config{
		AuthType: AuthTrust, Users: Userlist{pgtest.SCRAMUser: rolpassword(t, ctx, direct, pgtest.SCRAMUser)},
		Upstream: srv.TCPURL(pgtest.SuperUser, ""), QueryWaitTimeout: 20 * time.Second,
	})
	_, _, err = loginAs(ctx, tp, pgtest.SCRAMUser, "")
	if sqlState(err) != "28000" || !strings.Contains(errMessage(err), "no client has logged in with SCRAM yet") {
		t.Errorf("no ClientKey yet: %v", err)
	}
	// A user with no secret at all, whom the server asks for one.
	tp = startProxy(t, srv, Config{Upstream: srv.TCPURL(pgtest.SuperUser, ""), QueryWaitTimeout: 20 * time.Second})
	_, _, err = loginAs(ctx, tp, pgtest.MD5User, "")
	if sqlState(err) != "28000" || !strings.Contains(errMessage(err), `the server asks user "md5user" for a password (md5) and the pooler has none`) {
		t.Errorf("no secret: %v", err)
	}
}

// lookupQuery is the auth query of the tests, on createLookup's function.
const lookupQuery = "SELECT uname, phash FROM public.pgpc_lookup($1)"

// createLookup makes the function an auth user that is no superuser reads
// pg_authid through (SECURITY DEFINER, as PgBouncer's docs advise).
func createLookup(t *testing.T, ctx context.Context, direct *pgx.Conn) {
	t.Helper()
	if _, err := direct.Exec(ctx, `
CREATE OR REPLACE FUNCTION public.pgpc_lookup(i_user text, OUT uname text, OUT phash text) RETURNS record
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog AS
$$ SELECT rolname::text, rolpassword FROM pg_authid WHERE rolname = i_user AND rolcanlogin $$;
REVOKE ALL ON FUNCTION public.pgpc_lookup(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.pgpc_lookup(text) TO `+pgtest.LookupUser); err != nil {
		t.Fatal(err)
	}
}

// TestAuthQuery: with only the auth user in the userlist, users are
// looked up on the server: a SCRAM user and an md5 user log in (and their
// pools log in to the server with the secrets found), an unknown user gets
// the wrong-password answer, and a user dropped on the server is refused
// once the cached secret expires. On both relays.
func TestAuthQuery(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 120*time.Second)
	direct := directConn(t, srv)
	createLookup(t, ctx, direct)
	for _, relay := range []Relay{RelayBridged, RelayLoop} {
		t.Run(string(relay), func(t *testing.T) {
			temp := "aq_temp_" + string(relay)
			if _, err := direct.Exec(ctx, fmt.Sprintf("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN PASSWORD 'temp-pw'", temp, temp)); err != nil {
				t.Fatal(err)
			}
			tp := startProxyWith(t, srv, Config{
				Relay: relay, PoolSize: 2, AuthType: AuthMD5,
				Users:     Userlist{pgtest.LookupUser: pgtest.LookupPassword},
				AuthUser:  pgtest.LookupUser,
				AuthQuery: lookupQuery,
				Upstream:  srv.TCPURL(pgtest.SuperUser, ""), QueryWaitTimeout: 20 * time.Second,
			}, func(p *Proxy) { p.auth.cacheTTL = 500 * time.Millisecond })
			for _, u := range []struct{ user, password string }{
				{pgtest.SCRAMUser, pgtest.SCRAMPassword},
				{pgtest.MD5User, pgtest.MD5Password},
				{temp, "temp-pw"},
			} {
				c, cu, err := loginAs(ctx, tp, u.user, u.password)
				if err != nil || cu != u.user {
					t.Fatalf("%s: %v (current_user %q)", u.user, err, cu)
				}
				c.Close(ctx)
				if _, _, err := loginAs(ctx, tp, u.user, "wrong"); sqlState(err) != "28P01" {
					t.Errorf("%s with a wrong password: %v, want 28P01", u.user, err)
				}
			}
			_, _, wrong := loginAs(ctx, tp, pgtest.SCRAMUser, "wrong")
			_, _, unknown := loginAs(ctx, tp, "nobody_here", "wrong")
			want := strings.Replace(errMessage(wrong), pgtest.SCRAMUser, "nobody_here", 1)
			if sqlState(unknown) != "28P01" || errMessage(unknown) != want {
				t.Errorf("unknown user: %v, want the wrong-password answer %q", unknown, want)
			}

			if _, err := direct.Exec(ctx, "DROP ROLE "+temp); err != nil {
				t.Fatal(err)
			}
			time.Sleep(600 * time.Millisecond)
			_, _, err := loginAs(ctx, tp, temp, "temp-pw")
			if sqlState(err) != "28P01" || errMessage(err) != fmt.Sprintf("password authentication failed for user %q", temp) {
				t.Errorf("user dropped on the server: %v, want 28P01", err)
			}
		})
	}
}

// TestAuthQueryPerDatabase: a [databases] entry's own auth_user and
// auth_query look its clients up; clients of an entry without them (and
// no global auth user) are checked against the userlist only. Many
// clients logging in at once for one user run one lookup.
func TestAuthQueryPerDatabase(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 60*time.Second)
	createLookup(t, ctx, directConn(t, srv))
	// No cache: the logins share the one lookup because they overlap. It
	// waits until all of them are logging in.
	var lookups atomic.Int64
	release := make(chan struct{})
	tp := startProxyWith(t, srv, Config{
		AuthType: AuthMD5, PoolSize: 4,
		Users: Userlist{pgtest.LookupUser: pgtest.LookupPassword},
		Databases: map[string]Database{
			pgtest.Database: {AuthUser: pgtest.LookupUser, AuthQuery: lookupQuery},
			"other":         {DBName: "template1"},
		},
		Upstream: srv.TCPURL(pgtest.SuperUser, ""), QueryWaitTimeout: 20 * time.Second,
	}, func(p *Proxy) {
		p.auth.cacheTTL = 0
		lookup := p.auth.lookup
		p.auth.lookup = func(database, user string) (string, bool, error) {
			lookups.Add(1)
			<-release
			return lookup(database, user)
		}
	})
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			c, cu, err := loginAs(ctx, tp, pgtest.SCRAMUser, pgtest.SCRAMPassword)
			if err == nil {
				c.Close(ctx)
				if cu != pgtest.SCRAMUser {
					err = fmt.Errorf("current_user %q", cu)
				}
			}
			errs <- err
		}()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		tp.auth.mu.Lock()
		n := 0
		for _, call := range tp.auth.lookups {
			n += 1 + call.waiting
		}
		tp.auth.mu.Unlock()
		if n == cap(errs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d clients waiting for a lookup", n, cap(errs))
		}
	}
	close(release)
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("login through the entry's auth user: %v", err)
		}
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("%d lookups for %d logins of one user at once, want 1", n, cap(errs))
	}
	cfg, err := pgx.ParseConfig(strings.Replace(tp.url(pgtest.SCRAMUser, ""), "/"+pgtest.Database+"?", "/other?", 1))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = pgtest.SCRAMPassword
	if _, err := pgx.ConnectConfig(ctx, cfg); sqlState(err) != "28P01" {
		t.Errorf("a client of an entry without auth_user: %v, want 28P01", err)
	}
}

// TestAuthQueryDefault runs PgBouncer's default auth_query as a superuser
// auth user whose md5 hash in the userlist logs it in, in the database
// auth_dbname names.
func TestAuthQueryDefault(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := testCtx(t, 60*time.Second)
	tp := startProxy(t, srv, Config{
		AuthType:   AuthSCRAM,
		Users:      Userlist{pgtest.MD5User: "md5" + md5hex(pgtest.MD5Password+pgtest.MD5User)},
		AuthUser:   pgtest.MD5User,
		Databases:  map[string]Database{pgtest.Database: {}, "lookups": {DBName: "template1"}},
		AuthDBName: "lookups",
		Upstream:   srv.TCPURL(pgtest.SuperUser, ""), QueryWaitTimeout: 20 * time.Second,
	})
	c, cu, err := loginAs(ctx, tp, pgtest.SCRAMUser, pgtest.SCRAMPassword)
	if err != nil || cu != pgtest.SCRAMUser {
		t.Fatalf("login: %v (current_user %q)", err, cu)
	}
	c.Close(ctx)
	if _, _, err := loginAs(ctx, tp, pgtest.SCRAMUser, "wrong"); sqlState(err) != "28P01" {
		t.Errorf("wrong password: %v", err)
	}
}

// serveTLS makes srv speak TLS with a certificate of a new test PKI, and
// waits until it does.
func serveTLS(t *testing.T, ctx context.Context, srv *pgtest.Server) *testPKI {
	t.Helper()
	pk := newTestPKI(t, "server")
	// The server reads its key as the postgres OS user: copy the files
	// into its directory, owned as it is.
	fi, err := os.Stat(srv.Dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	for _, f := range []string{pk.certFile, pk.keyFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(srv.Dir, filepath.Base(f))
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dst, int(st.Uid), int(st.Gid)); err != nil && os.Geteuid() == 0 {
			t.Fatal(err)
		}
	}
	for _, sql := range []string{
		fmt.Sprintf("ALTER SYSTEM SET ssl_cert_file = '%s'", filepath.Join(srv.Dir, filepath.Base(pk.certFile))),
		fmt.Sprintf("ALTER SYSTEM SET ssl_key_file = '%s'", filepath.Join(srv.Dir, filepath.Base(pk.keyFile))),
		"ALTER SYSTEM SET ssl = on",
		"SELECT pg_reload_conf()",
	} {
		if err := srv.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	// The reload is asynchronous: wait until the server speaks TLS.
	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=verify-full&sslrootcert=%s", pgtest.SuperUser, srv.Port, pgtest.Database, pk.caFile)
	for i := 0; ; i++ {
		c, err := pgconn.Connect(ctx, url)
		if err == nil {
			c.Close(ctx)
			return pk
		}
		if i == 50 {
			t.Fatalf("the server does not speak TLS: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSCRAMPassThroughTLS: over TLS pgconn uses SCRAM-SHA-256-PLUS
// (channel_binding=require in the upstream URL makes sure of it), and the
// pass-through signs the channel binding data with the rest.
func TestSCRAMPassThroughTLS(t *testing.T) {
	srv := pgtest.New(t)
	ctx := testCtx(t, 90*time.Second)
	pk := serveTLS(t, ctx, srv)
	tlsURL := func(user string) string {
		return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=verify-full&sslrootcert=%s&channel_binding=require",
			user, srv.Port, pgtest.Database, pk.caFile)
	}
	direct, err := pgx.Connect(ctx, srv.SocketURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	tp := startProxy(t, srv, Config{
		AuthType: AuthSCRAM, Users: Userlist{pgtest.SCRAMUser: rolpassword(t, ctx, direct, pgtest.SCRAMUser)},
		Upstream: tlsURL(pgtest.SuperUser), QueryWaitTimeout: 20 * time.Second,
	})
	c, cu, err := loginAs(ctx, tp, pgtest.SCRAMUser, pgtest.SCRAMPassword)
	if err != nil || cu != pgtest.SCRAMUser {
		t.Fatalf("login over TLS with channel binding: %v (current_user %q)", err, cu)
	}
	defer c.Close(ctx)
	var ssl bool
	if err := c.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || !ssl {
		t.Errorf("server connection TLS: %v, %v", ssl, err)
	}
}

// FuzzAuthRelay feeds a server's login messages to the pass-through relay,
// with pgconn's answers written in between as it would write them: no
// input may panic it, and what it hands on is what the server sent,
// rewritten only in length-preserving fields.
func FuzzAuthRelay(f *testing.F) {
	v, err := deriveSCRAMSecret("pw", []byte("0123456789abcdef"), 4096)
	if err != nil {
		f.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	auth := func(code uint32, data string) []byte {
		return encode(nil, &rawAuth{code: code, data: []byte(data)})
	}
	sasl := auth(10, "SCRAM-SHA-256\x00\x00")
	cont := auth(11, "r=cnonce-snonce,s="+b64(v.salt)+",i=4096")
	f.Add(append(append(append([]byte{}, sasl...), cont...), auth(12, "v="+b64(make([]byte, 32)))...))
	f.Add(append(auth(5, "salt"), auth(0, "")...))
	f.Add(append(auth(3, ""), 'Z', 0, 0, 0, 5, 'I'))
	f.Add(append(auth(0, ""), 'S', 0, 0, 0, 4))
	f.Add(append(append([]byte{}, sasl...), auth(11, "r=x,s=!!,i=-1")...))
	f.Fuzz(func(t *testing.T, server []byte) {
		creds := serverCreds{md5: "md5" + md5hex("pwu"), scram: v, clientKey: make([]byte, 32)}
		var sent bytes.Buffer
		r := &authRelay{r: bytes.NewReader(server), w: &sent, user: "u", creds: creds}
		r.Write([]byte{0, 0, 0, 8, 0, 3, 0, 0}) // the startup message
		var got []byte
		buf := make([]byte, 7)
		for range 1000 {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
			r.mu.Lock()
			state := r.state
			r.mu.Unlock()
			switch state {
			case 5:
				r.Write(encode(nil, &pgproto3.PasswordMessage{Password: "md5" + md5hex("x")}))
			case 10:
				r.Write(encode(nil, &pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=cnonce")}))
			case 11:
				r.Write(encode(nil, &pgproto3.SASLResponse{Data: []byte("c=biws,r=cnonce-snonce,p=" + b64(make([]byte, 32)))}))
			}
		}
		if len(got) > len(server) {
			t.Fatalf("relay handed on %d bytes of %d", len(got), len(server))
		}
	})
}

// rawAuth is an Authentication message with any code and body.
type rawAuth struct {
	code uint32
	data []byte
}

func (*rawAuth) Backend()            {}
func (*rawAuth) Decode([]byte) error { return errors.New("not decoded") }
func (m *rawAuth) Encode(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 'R', 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, m.code)
	dst = append(dst, m.data...)
	binary.BigEndian.PutUint32(dst[start+1:], uint32(len(dst)-start-1))
	return dst, nil
}
