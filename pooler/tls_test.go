package pooler

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate for the test superuser, written as PEM files to dir.
type testPKI struct {
	dir                           string
	caFile, certFile, keyFile     string
	clientCertFile, clientKeyFile string
	pool                          *x509.CertPool
	server                        tls.Certificate
}

func newTestPKI(t testing.TB, name string) *testPKI {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(file, typ string, der []byte) string {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	writeKey := func(file string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(file, "EC PRIVATE KEY", der)
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, k *ecdsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	pk := &testPKI{dir: dir, pool: x509.NewCertPool()}
	pk.pool.AddCert(ca)
	pk.caFile = write("ca.pem", "CERTIFICATE", caDER)
	srvKey, cliKey := newKey(), newKey()
	pk.certFile = write("server.crt", "CERTIFICATE", issue(2, "pgpoolcheck", x509.ExtKeyUsageServerAuth, srvKey))
	pk.keyFile = writeKey("server.key", srvKey)
	pk.clientCertFile = write("client.crt", "CERTIFICATE", issue(3, pgtest.SuperUser, x509.ExtKeyUsageClientAuth, cliKey))
	pk.clientKeyFile = writeKey("client.key", cliKey)
	if pk.server, err = tls.LoadX509KeyPair(pk.certFile, pk.keyFile); err != nil {
		t.Fatal(err)
	}
	return pk
}

// config is the pooler's client TLS configuration for this PKI.
func (pk *testPKI) config() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{pk.server}, ClientCAs: pk.pool}
}

// tlsURL is a client URL to the proxy with the given libpq TLS settings.
func (tp *testProxy) tlsURL(params string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?%s", pgtest.SuperUser, tp.port, pgtest.Database, params)
}

func connectURL(ctx context.Context, t *testing.T, url string) (*pgx.Conn, error) {
	c, err := pgx.Connect(ctx, url)
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

// usesTLS reports whether the client's connection to the proxy is TLS.
func usesTLS(c *pgx.Conn) bool {
	_, ok := c.PgConn().Conn().(*tls.Conn)
	return ok
}

// TestClientTLSRequire: with require, plaintext clients are refused
// (FATAL 28000 "SSL required"), TLS clients are served in both pool
// modes, and a TLS client stays answered after a quiet gap (it is never
// made to wait on the raw socket, whose bytes tls.Conn has decrypted).
func TestClientTLSRequire(t *testing.T) {
	srv := pgtest.Shared(t)
	pk := newTestPKI(t, "require")
	for _, mode := range []Mode{ModeTransaction, ModeSession} {
		t.Run(string(mode), func(t *testing.T) {
			tp := startProxy(t, srv, Config{Mode: mode, ClientTLSMode: TLSRequire, ClientTLS: pk.config(), PoolSize: 2})
			ctx := testCtx(t, 30*time.Second)
			_, err := connectURL(ctx, t, tp.tlsURL("sslmode=disable"))
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "28000" || pgErr.Message != "SSL required" {
				t.Fatalf("plaintext client: want FATAL 28000 SSL required, got %v", err)
			}
			c, err := connectURL(ctx, t, tp.tlsURL("sslmode=verify-full&sslrootcert="+pk.caFile))
			if err != nil {
				t.Fatal(err)
			}
			if !usesTLS(c) {
				t.Fatal("the client's connection is not TLS")
			}
			for i := range 3 {
				var got int
				if err := c.QueryRow(ctx, "SELECT $1::int * 2", i).Scan(&got); err != nil || got != 2*i {
					t.Fatalf("query %d over TLS: %d, %v", i, got, err)
				}
				time.Sleep(1200 * time.Millisecond) // longer than a janitor tick
			}
			// A 100 kB statement crosses many TLS records.
			var n int
			if err := c.QueryRow(ctx, "SELECT length($1::text)", strings.Repeat("x", 100<<10)).Scan(&n); err != nil || n != 100<<10 {
				t.Fatalf("large parameter over TLS: %d, %v", n, err)
			}
		})
	}
}

// TestClientTLSDirect: a client that starts with its TLS handshake
// (PostgreSQL 17's sslnegotiation=direct) and negotiates the postgresql
// ALPN protocol is served over TLS; one without ALPN is refused, as
// PostgreSQL refuses it; a client that offers another protocol only fails
// the handshake, also after an SSLRequest.
func TestClientTLSDirect(t *testing.T) {
	srv := pgtest.Shared(t)
	pk := newTestPKI(t, "direct")
	tp := startProxy(t, srv, Config{ClientTLSMode: TLSRequire, ClientTLS: pk.config(), PoolSize: 2})
	ctx := testCtx(t, 30*time.Second)
	c, err := connectURL(ctx, t, tp.tlsURL("sslmode=verify-full&sslnegotiation=direct&sslrootcert="+pk.caFile))
	if err != nil {
		t.Fatalf("direct TLS: %v", err)
	}
	if !usesTLS(c) {
		t.Fatal("the client's connection is not TLS")
	}
	var got string
	if err := c.QueryRow(ctx, "SELECT 'direct'").Scan(&got); err != nil || got != "direct" {
		t.Fatalf("query over direct TLS: %q, %v", got, err)
	}
	roots := pk.pool
	for _, protos := range [][]string{nil, {"http/1.1"}} {
		tc, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", NextProtos: protos})
		if err != nil {
			continue // refused in the handshake
		}
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(tc)
		tc.Close()
		if len(b) != 0 {
			t.Errorf("direct TLS with ALPN %v: got %q, want the connection closed", protos, b)
		}
	}
}

// TestClientTLSVerify: verify-full requires a client certificate signed by
// the CA; prefer serves both kinds of client; data sent behind an
// SSLRequest before the handshake is refused.
func TestClientTLSVerify(t *testing.T) {
	srv := pgtest.Shared(t)
	pk := newTestPKI(t, "verify")
	tp := startProxy(t, srv, Config{ClientTLSMode: TLSVerifyFull, ClientTLS: pk.config()})
	ctx := testCtx(t, 30*time.Second)
	if _, err := connectURL(ctx, t, tp.tlsURL("sslmode=require")); err == nil {
		t.Fatal("a TLS client without a certificate was accepted under verify-full")
	}
	other := newTestPKI(t, "other")
	if _, err := connectURL(ctx, t, tp.tlsURL(fmt.Sprintf("sslmode=require&sslcert=%s&sslkey=%s", other.clientCertFile, other.clientKeyFile))); err == nil {
		t.Fatal("a client certificate from another CA was accepted")
	}
	c, err := connectURL(ctx, t, tp.tlsURL(fmt.Sprintf("sslmode=verify-full&sslrootcert=%s&sslcert=%s&sslkey=%s", pk.caFile, pk.clientCertFile, pk.clientKeyFile)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil || !usesTLS(c) {
		t.Fatalf("client with a certificate: %v (TLS %v)", err, usesTLS(c))
	}

	prefer := startProxy(t, srv, Config{ClientTLSMode: TLSPrefer, ClientTLS: pk.config()})
	plain, err := connectURL(ctx, t, prefer.tlsURL("sslmode=disable"))
	if err != nil || usesTLS(plain) {
		t.Fatalf("prefer, plaintext client: %v", err)
	}
	enc, err := connectURL(ctx, t, prefer.tlsURL("sslmode=require"))
	if err != nil || !usesTLS(enc) {
		t.Fatalf("prefer, TLS client: %v", err)
	}

	// An SSLRequest with a startup packet right behind it.
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", prefer.port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	body := []byte("user\x00" + pgtest.SuperUser + "\x00\x00")
	startup := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	startup = binary.BigEndian.AppendUint32(startup, 196608)
	sslRequest := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 80877103)
	conn.Write(append(append(sslRequest, startup...), body...))
	reply, _ := io.ReadAll(conn)
	if len(reply) == 0 || reply[0] != 'E' || !strings.Contains(string(reply), "received unencrypted data after SSL request") {
		t.Fatalf("data behind SSLRequest: got %q, want an ErrorResponse", reply)
	}
}

// TestClientTLSReload: RELOAD applies new certificates to new clients.
func TestClientTLSReload(t *testing.T) {
	srv := pgtest.Shared(t)
	first, second := newTestPKI(t, "first"), newTestPKI(t, "second")
	cfg := Config{ClientTLSMode: TLSRequire, ClientTLS: first.config()}
	cfg.Reload = func(c *Config) error { c.ClientTLS = second.config(); return nil }
	tp := startProxy(t, srv, cfg)
	ctx := testCtx(t, 30*time.Second)
	old, err := connectURL(ctx, t, tp.tlsURL("sslmode=verify-full&sslrootcert="+first.caFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := connectURL(ctx, t, tp.tlsURL("sslmode=verify-full&sslrootcert="+first.caFile)); err == nil {
		t.Fatal("after RELOAD the old certificate is still served")
	}
	if _, err := connectURL(ctx, t, tp.tlsURL("sslmode=verify-full&sslrootcert="+second.caFile)); err != nil {
		t.Fatalf("after RELOAD: %v", err)
	}
	if _, err := old.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("a client connected before RELOAD: %v", err)
	}
}

func TestClientTLSConfigChecked(t *testing.T) {
	pk := newTestPKI(t, "check")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ClientTLSMode: TLSRequire}, "needs a certificate"},
		{Config{ClientTLSMode: TLSVerifyCA, ClientTLS: &tls.Config{Certificates: []tls.Certificate{pk.server}}}, "needs CA certificates"},
		{Config{ClientTLSMode: "sometimes", ClientTLS: pk.config()}, "unknown client TLS mode"},
	} {
		tc.cfg.Upstream, tc.cfg.Listen = "postgres://x@127.0.0.1/db", "127.0.0.1:0"
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.cfg.ClientTLSMode, err, tc.want)
		}
	}
}

// FuzzStartupNegotiation runs the startup negotiation with TLS offered
// (prefer) over arbitrary client bytes: SSLRequests, GSSENCRequests,
// handshake records, startup packets. It must end (the connection closes
// after the input) without a panic, and a client that never completed a
// handshake is never taken as using TLS.
func FuzzStartupNegotiation(f *testing.F) {
	pk := newTestPKI(f, "fuzz")
	p, err := New(Config{Listen: "127.0.0.1:0", Upstream: "postgres://x@127.0.0.1/db",
		ClientTLSMode: TLSPrefer, ClientTLS: pk.config(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	ssl := []byte{0, 0, 0, 8, 4, 210, 22, 47}
	gss := []byte{0, 0, 0, 8, 4, 210, 22, 48}
	f.Add(ssl)
	f.Add(append(append([]byte{}, gss...), ssl...))
	f.Add(append(append([]byte{}, ssl...), startupBytes(3<<16, "user", "bob")...))
	f.Add(append(append([]byte{}, ssl...), 0x16, 3, 1, 0, 5, 1, 0, 0, 1, 0))
	f.Add(startupBytes(3<<16, "user", "bob", "database", "db"))
	f.Add([]byte{0x16, 3, 1, 0, 5, 1, 0, 0, 1, 0}) // direct TLS
	f.Fuzz(func(t *testing.T, b []byte) {
		server, client := net.Pipe()
		defer server.Close()
		go func() {
			// The client sends its bytes, reads whatever the pooler
			// answers, and leaves.
			client.SetDeadline(time.Now().Add(200 * time.Millisecond))
			go io.Copy(io.Discard, client)
			client.Write(b)
			client.Close()
		}()
		c := &clientConn{proxy: p, conn: server, r: bufio.NewReader(server), rio: server}
		server.SetDeadline(time.Now().Add(500 * time.Millisecond))
		pkt, _ := c.readStartupPacket()
		if pkt != nil && pkt.kind != startupMessage {
			t.Fatalf("readStartupPacket returned a %v packet", pkt.kind)
		}
		if c.tls {
			if _, ok := c.conn.(*tls.Conn); !ok {
				t.Fatal("tls set without a tls.Conn")
			}
		}
	})
}

// TestAuthCert: auth_type cert logs in the user named by the verified
// client certificate's common name, and nobody else with it.
func TestAuthCert(t *testing.T) {
	srv := pgtest.Shared(t)
	pk := newTestPKI(t, "cert")
	tp := startProxy(t, srv, Config{AuthType: AuthCert, ClientTLSMode: TLSVerifyFull, ClientTLS: pk.config()})
	ctx := testCtx(t, 30*time.Second)
	withCert := fmt.Sprintf("sslmode=verify-full&sslrootcert=%s&sslcert=%s&sslkey=%s", pk.caFile, pk.clientCertFile, pk.clientKeyFile)
	c, err := connectURL(ctx, t, tp.tlsURL(withCert))
	if err != nil {
		t.Fatalf("the certificate's user: %v", err)
	}
	var user string
	if err := c.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != pgtest.SuperUser {
		t.Fatalf("current_user %q, %v", user, err)
	}
	other := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?%s", pgtest.MD5User, tp.port, pgtest.Database, withCert)
	_, err = connectURL(ctx, t, other)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28000" || !strings.Contains(pgErr.Message, "certificate authentication failed") {
		t.Fatalf("another user with the certificate: %v, want 28000", err)
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", Upstream: "postgres://x@127.0.0.1/db", AuthType: AuthCert,
		ClientTLSMode: TLSRequire, ClientTLS: pk.config()}); err == nil || !strings.Contains(err.Error(), "verify-ca or verify-full") {
		t.Errorf("cert without verify mode: %v", err)
	}
}
