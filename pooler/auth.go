package pooler

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
)

// authenticator checks client logins against the userlist. It keeps the
// SCRAM verifiers it derives from plain-text passwords, so each is derived
// once.
type authenticator struct {
	typ   AuthType
	users Userlist
	// mockKey makes the salt shown for an unknown user: the same for one
	// name every time, different between names, as PostgreSQL's mock
	// salt, so that the salt does not tell known names from unknown ones.
	mockKey [32]byte

	// mu guards users (RELOAD replaces it) and scram.
	mu    sync.Mutex
	scram map[string]*scramSecret
}

func newAuthenticator(typ AuthType, users Userlist) *authenticator {
	a := &authenticator{typ: typ, users: users, scram: make(map[string]*scramSecret)}
	rand.Read(a.mockKey[:])
	return a
}

// secret returns user's entry in the userlist.
func (a *authenticator) secret(user string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.users[user]
	return s, ok
}

// setUsers replaces the userlist (RELOAD): rotated passwords and removed
// users take effect at the next login.
func (a *authenticator) setUsers(users Userlist) {
	a.mu.Lock()
	a.users = users
	clear(a.scram)
	a.mu.Unlock()
}

// emptyPassword reports whether secret, the userlist entry of user, holds
// the empty password: PostgreSQL never accepts one, so neither does the
// pooler (plain text "", its md5 hash, or a SCRAM verifier of "").
func emptyPassword(user, secret string) bool {
	switch {
	case secret == "":
		return true
	case isMD5Secret(secret):
		return secret == "md5"+md5hex(user)
	case strings.HasPrefix(secret, "SCRAM-SHA-256$"):
		s, err := parseSCRAMSecret(secret)
		if err != nil {
			return false
		}
		e, err := deriveSCRAMSecret("", s.salt, s.iterations)
		return err == nil && subtle.ConstantTimeCompare(e.storedKey, s.storedKey) == 1
	}
	return false
}

// mockSecret is the verifier an unknown user's exchange runs against: a
// salt derived from the name, PostgreSQL's iteration count, and keys no
// password matches (a random one).
func (a *authenticator) mockSecret(user string) *scramSecret {
	salt := hmacSHA256(a.mockKey[:], "mock salt "+user)[:16]
	fake, _ := deriveSCRAMSecret(randomString(), salt, scramIterations)
	return fake
}

// errAuthFailed is a wrong password or an unknown user. The client learns
// only that the password was wrong.
var errAuthFailed = errors.New("password authentication failed")

// errCertUser is a client certificate whose common name is not the user.
var errCertUser = errors.New("certificate authentication failed")

// isMD5Secret reports whether s is "md5" and 32 hex digits.
func isMD5Secret(s string) bool {
	if len(s) != 35 || !strings.HasPrefix(s, "md5") {
		return false
	}
	_, err := hex.DecodeString(s[3:])
	return err == nil
}

// scramSecretFor returns the SCRAM verifier of user, or an error when the
// stored secret cannot verify SCRAM (an md5 hash) or the user is unknown
// (then a throwaway secret, so the exchange looks the same).
func (a *authenticator) scramSecretFor(user string) (*scramSecret, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.scram[user]; ok {
		return s, true
	}
	secret, ok := a.users[user] // a.mu is held
	var s *scramSecret
	switch {
	case !ok || isMD5Secret(secret) || emptyPassword(user, secret):
		ok = false
	case strings.HasPrefix(secret, "SCRAM-SHA-256$"):
		var err error
		if s, err = parseSCRAMSecret(secret); err != nil {
			ok = false
		}
	default:
		var err error
		if s, err = newSCRAMSecret(secret); err != nil {
			ok = false
		}
	}
	if !ok {
		return a.mockSecret(user), false
	}
	a.scram[user] = s
	return s, true
}

func randomString() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// authenticate runs the login exchange for user on conn. It returns nil
// after a successful login (AuthenticationOk not yet sent), errAuthFailed
// for a wrong password, or another error for a broken exchange.
func (a *authenticator) authenticate(c *clientConn, user string) error {
	switch a.typ {
	case AuthTrust:
		return nil
	case AuthCert:
		// The handshake verified the certificate against the CAs
		// (verify-ca/verify-full); its common name must be the user.
		tc, ok := c.conn.(*tls.Conn)
		if !ok {
			return errAuthFailed
		}
		certs := tc.ConnectionState().PeerCertificates
		if len(certs) == 0 || certs[0].Subject.CommonName != user {
			return errCertUser
		}
		return nil
	case AuthMD5:
		if s, ok := a.secret(user); ok && strings.HasPrefix(s, "SCRAM-SHA-256$") {
			return a.scramLogin(c, user) // md5 cannot check a SCRAM secret; PgBouncer upgrades too
		}
		return a.md5Login(c, user)
	default:
		return a.scramLogin(c, user)
	}
}

func (a *authenticator) md5Login(c *clientConn, user string) error {
	var salt [4]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return err
	}
	if err := c.send(encode(nil, &pgproto3.AuthenticationMD5Password{Salt: salt})); err != nil {
		return err
	}
	body, err := c.readAuthMessage()
	if err != nil {
		return err
	}
	var pm pgproto3.PasswordMessage
	if err := pm.Decode(body); err != nil {
		return err
	}
	secret, ok := a.secret(user)
	if !ok || emptyPassword(user, secret) {
		return errAuthFailed
	}
	if !isMD5Secret(secret) {
		secret = "md5" + md5hex(secret+user)
	}
	want := "md5" + md5hex(secret[3:]+string(salt[:]))
	if subtle.ConstantTimeCompare([]byte(want), []byte(pm.Password)) != 1 {
		return errAuthFailed
	}
	return nil
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (a *authenticator) scramLogin(c *clientConn, user string) error {
	secret, known := a.scramSecretFor(user)
	if err := c.send(encode(nil, &pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})); err != nil {
		return err
	}
	body, err := c.readAuthMessage()
	if err != nil {
		return err
	}
	var init pgproto3.SASLInitialResponse
	if err := init.Decode(body); err != nil {
		return err
	}
	if init.AuthMechanism != "SCRAM-SHA-256" {
		return fmt.Errorf("unsupported SASL mechanism %q", init.AuthMechanism)
	}
	x := &scramExchange{secret: secret}
	serverFirst, err := x.start(init.Data)
	if err != nil {
		return err
	}
	if err := c.send(encode(nil, &pgproto3.AuthenticationSASLContinue{Data: serverFirst})); err != nil {
		return err
	}
	if body, err = c.readAuthMessage(); err != nil {
		return err
	}
	var resp pgproto3.SASLResponse
	if err := resp.Decode(body); err != nil {
		return err
	}
	serverFinal, err := x.finish(resp.Data)
	if errors.Is(err, errSCRAMProof) || (err == nil && !known) {
		return errAuthFailed
	}
	if err != nil {
		return err
	}
	return c.send(encode(nil, &pgproto3.AuthenticationSASLFinal{Data: serverFinal}))
}
