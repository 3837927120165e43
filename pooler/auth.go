package pooler

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// authenticator checks client logins against the userlist, and with
// auth_query against the secrets PostgreSQL stores for the users not in
// it. It keeps the SCRAM verifiers it derives from plain-text passwords, so
// each is derived once, and the ClientKeys recovered from SCRAM logins,
// with which pools log in to the server (passthrough.go).
type authenticator struct {
	typ AuthType
	// list is the userlist in force: RELOAD swaps in a new one whole
	// (setUsers), and logins read it without a lock.
	list atomic.Pointer[userSnap]
	// lookup, when set, finds the secret of a user not in users on the
	// server (auth_query) for a client of database: found is false for
	// no such user.
	lookup   func(database, user string) (secret string, found bool, err error)
	cacheTTL time.Duration

	// mu guards the caches below.
	mu    sync.Mutex
	scram map[string]derivedSecret
	// clientKeys are the ClientKeys of users whose secret is a SCRAM
	// verifier, with that verifier: kept in memory only, for server
	// logins; a key whose verifier is no longer the user's is not used.
	clientKeys map[string]clientKey
	// found are the secrets lookup found, by database and user, and when;
	// lastFound the last secret found per user, for server logins.
	found     map[[2]string]foundSecret
	lastFound map[string]string
	// lookups are the lookups under way, so that clients logging in at
	// once as one user wait for one query.
	lookups map[[2]string]*lookupCall
}

// userSnap is one userlist, never changed once made.
type userSnap struct {
	users Userlist
	// mockKey makes the mock secret of an unknown user: its salt is the
	// same for one name every time, across restarts too, and different
	// between names, as PostgreSQL's mock salt, so that the salt does not
	// tell known names from unknown ones (mockKeyFor).
	mockKey [32]byte
}

type lookupCall struct {
	// waiting counts the logins waiting for it besides the one running it.
	waiting int
	done    chan struct{}
	secret  string
	ok      bool
	err     error
}

type derivedSecret struct {
	from string
	s    *scramSecret
}

type clientKey struct {
	verifier string
	key      []byte
}

type foundSecret struct {
	secret string
	ok     bool
	at     time.Time
}

// defaultAuthCacheTTL is how long a secret auth_query found (or a user it
// did not find) is used before the query runs again.
const defaultAuthCacheTTL = 10 * time.Second

func newAuthenticator(typ AuthType, users Userlist) *authenticator {
	a := &authenticator{typ: typ, scram: make(map[string]derivedSecret),
		clientKeys: make(map[string]clientKey), found: make(map[[2]string]foundSecret),
		lastFound: make(map[string]string), lookups: make(map[[2]string]*lookupCall),
		cacheTTL: defaultAuthCacheTTL}
	a.list.Store(&userSnap{users: users, mockKey: mockKeyFor(users)})
	return a
}

// secret returns user's entry in the userlist.
func (a *authenticator) secret(user string) (string, bool) {
	s, ok := a.list.Load().users[user]
	return s, ok
}

// find returns the secret a client of database logging in as user is
// checked against: its userlist entry, else (with auth_query) the one the
// server stores, looked up at most once per cacheTTL.
func (a *authenticator) find(database, user string) (string, bool, error) {
	if s, ok := a.secret(user); ok || a.lookup == nil {
		return s, ok, nil
	}
	k := [2]string{database, user}
	a.mu.Lock()
	if f, ok := a.found[k]; ok && time.Since(f.at) < a.cacheTTL {
		a.mu.Unlock()
		return f.secret, f.ok, nil
	}
	if call, ok := a.lookups[k]; ok {
		call.waiting++
		a.mu.Unlock()
		<-call.done
		return call.secret, call.ok, call.err
	}
	call := &lookupCall{done: make(chan struct{})}
	a.lookups[k] = call
	a.mu.Unlock()
	call.secret, call.ok, call.err = a.lookup(database, user)
	a.mu.Lock()
	delete(a.lookups, k)
	close(call.done)
	secret, ok, err := call.secret, call.ok, call.err
	if err != nil {
		a.mu.Unlock()
		return "", false, err
	}
	for fk, fv := range a.found {
		if time.Since(fv.at) >= a.cacheTTL {
			delete(a.found, fk)
		}
	}
	a.found[k] = foundSecret{secret: secret, ok: ok, at: time.Now()}
	if ok {
		a.lastFound[user] = secret
	} else {
		delete(a.lastFound, user)
		delete(a.clientKeys, user)
	}
	a.mu.Unlock()
	return secret, ok, nil
}

// setUsers replaces the userlist (RELOAD): rotated passwords and removed
// users take effect at the next login; secrets looked up on the server
// are looked up again.
func (a *authenticator) setUsers(users Userlist) {
	snap := &userSnap{users: users, mockKey: mockKeyFor(users)}
	a.mu.Lock()
	a.list.Store(snap)
	clear(a.scram)
	clear(a.found)
	// ClientKeys go with the verifier they were proved against.
	for u, k := range a.clientKeys {
		if users[u] != k.verifier && a.lastFound[u] != k.verifier {
			delete(a.clientKeys, u)
		}
	}
	a.mu.Unlock()
}

// rememberClientKey keeps the ClientKey a client proved against verifier.
func (a *authenticator) rememberClientKey(user, verifier string, key []byte) {
	a.mu.Lock()
	a.clientKeys[user] = clientKey{verifier: verifier, key: key}
	a.mu.Unlock()
}

// serverCreds returns what the pooler holds to log user in to the server
// when it has no plain-text password for it: the md5 hash or SCRAM
// verifier of its userlist entry (else the secret auth_query last found),
// with the ClientKey of the last client that logged in against that
// verifier.
func (a *authenticator) serverCreds(user string) serverCreds {
	a.mu.Lock()
	defer a.mu.Unlock()
	secret, ok := a.list.Load().users[user]
	if !ok {
		secret, ok = a.lastFound[user]
	}
	var c serverCreds
	switch {
	case !ok || emptyPassword(user, secret):
	case isMD5Secret(secret):
		c.md5 = secret
	case isSCRAMSecret(secret):
		s, err := parseSCRAMSecret(secret)
		if err != nil {
			break
		}
		c.scram = s
		if k, ok := a.clientKeys[user]; ok && k.verifier == secret {
			c.clientKey = k.key
		}
	default:
		c.password = secret
	}
	return c
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

// mockSecret is the verifier an unknown user's exchange runs against: a salt derived from the name, PostgreSQL's iteration count, and
// keys no password matches. It costs two HMACs, no key derivation, so
// that an unknown user's first answer comes as fast as a known user's
// (whose verifier is kept) and costs the pooler as little.
func (a *authenticator) mockSecret(user string) *scramSecret {
	key := a.list.Load().mockKey
	return &scramSecret{
		iterations: scramIterations,
		salt:       hmacSHA256(key[:], "mock salt "+user)[:16],
		storedKey:  hmacSHA256(key[:], "mock stored key "+user),
		serverKey:  hmacSHA256(key[:], "mock server key "+user),
	}
}

// mockKeyFor derives the key of the mock secrets from the userlist: the
// same across restarts while the list is, and known to no one who does
// not know its secrets. Without a list it is random (the mock salts then
// change at each start).
func mockKeyFor(users Userlist) [32]byte {
	var k [32]byte
	if len(users) == 0 {
		rand.Read(k[:])
		return k
	}
	h := sha256.New()
	h.Write([]byte("pgpoolcheck mock secrets\x00"))
	for _, name := range slices.Sorted(maps.Keys(users)) {
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(users[name]))
		h.Write([]byte{0})
	}
	copy(k[:], h.Sum(nil))
	return k
}

// errAuthFailed is a wrong password or an unknown user. The client learns
// only that the password was wrong.
var errAuthFailed = errors.New("password authentication failed")

// errTrustUnknown is a trust login of a user that the auth file does not
// list (nor the server know, with an auth user).
var errTrustUnknown = errors.New(`"trust" authentication failed`)

// trusts reports whether a trust login of user, a client of database, may
// go on: with an auth file or an auth user, only for a user it lists or
// the server has (as PgBouncer); without either, for anyone.
func (a *authenticator) trusts(database, user string) (bool, error) {
	listed := a.list.Load().users != nil
	if !listed && a.lookup == nil {
		return true, nil
	}
	_, found, err := a.find(database, user)
	return found, err
}

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

// scramSecretFor returns the SCRAM verifier of user's secret, or false
// when the secret cannot verify SCRAM (an md5 hash, the empty password)
// or the user is unknown: then a throwaway secret, so that the exchange
// looks the same.
func (a *authenticator) scramSecretFor(user, secret string, found bool) (*scramSecret, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d, ok := a.scram[user]; ok && found && d.from == secret {
		return d.s, true
	}
	ok := found
	var s *scramSecret
	switch {
	case !ok || isMD5Secret(secret) || emptyPassword(user, secret):
		ok = false
	case isSCRAMSecret(secret):
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
	a.scram[user] = derivedSecret{from: secret, s: s}
	return s, true
}

// errLookup is an auth_query that failed (the server is down, the query
// is wrong): the client cannot be checked.
type errLookup struct{ err error }

func (e *errLookup) Error() string {
	return "looking the user up on the server failed: " + e.err.Error()
}
func (e *errLookup) Unwrap() error { return e.err }

// authenticate runs the login exchange for user, a client of database, on
// conn. It returns nil after a successful login (AuthenticationOk not yet
// sent), errAuthFailed for a wrong password or an unknown user, or another
// error for a broken exchange or a failed lookup.
func (a *authenticator) authenticate(c *clientConn, database, user string) error {
	switch a.typ {
	case AuthTrust:
		known, err := a.trusts(database, user)
		if err != nil {
			return &errLookup{err}
		}
		if !known {
			return errTrustUnknown
		}
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
	}
	secret, found, err := a.find(database, user)
	if err != nil {
		return &errLookup{err}
	}
	if a.typ == AuthMD5 && !(found && isSCRAMSecret(secret)) {
		return a.md5Login(c, user, secret, found)
	}
	// md5 cannot check a SCRAM secret; PgBouncer upgrades too.
	return a.scramLogin(c, user, secret, found)
}

func (a *authenticator) md5Login(c *clientConn, user, secret string, found bool) error {
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
	if !found || emptyPassword(user, secret) {
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

func (a *authenticator) scramLogin(c *clientConn, user, stored string, found bool) error {
	secret, known := a.scramSecretFor(user, stored, found)
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
	if isSCRAMSecret(stored) {
		a.rememberClientKey(user, stored, x.clientKey)
	}
	return c.send(encode(nil, &pgproto3.AuthenticationSASLFinal{Data: serverFinal}))
}
