package pooler

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// This file logs a pool in to PostgreSQL as a user whose password the
// pooler does not know, from the secret it holds instead, as PgBouncer
// does:
//
//   - an md5 hash ("md5" + md5(password+user)) answers an md5 challenge by
//     itself: the response is md5(hash-without-prefix + salt);
//   - a SCRAM-SHA-256 verifier cannot compute a proof, but the ClientKey
//     recovered from a client's SCRAM login against it can
//     (ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage)), and the
//     verifier's ServerKey checks the server's signature. This works when
//     the server stores the same verifier (same salt and iteration count).
//
// pgconn logs in as usual with a placeholder password; a relay between
// its protocol reader and writer and the connection (above TLS, so the
// channel binding data is in the messages it sees) rewrites what depends
// on the password: the md5 response, the SCRAM proof, and the server's
// signature, which pgconn checks against the placeholder after the relay
// checked the real one against ServerKey. Every rewritten field keeps its
// length.

// placeholderPassword is what pgconn computes its answers with when the
// relay supplies the real ones.
const placeholderPassword = "pgpoolcheck-pass-through"

// placeholderKeys caches the ServerKey of the placeholder password by
// salt and iteration count: one per verifier the pooler logs in with.
var placeholderKeys sync.Map

// placeholderServerKey returns the ServerKey pgconn derives from the
// placeholder password with salt and iter, deriving it once.
func placeholderServerKey(salt []byte, iter int) ([]byte, error) {
	k := strconv.Itoa(iter) + ":" + string(salt)
	if v, ok := placeholderKeys.Load(k); ok {
		return v.([]byte), nil
	}
	salted, err := pbkdf2.Key(sha256.New, placeholderPassword, salt, iter, sha256.Size)
	if err != nil {
		return nil, err
	}
	key := hmacSHA256(salted, "Server Key")
	placeholderKeys.Store(k, key)
	return key, nil
}

// serverCreds are what the pooler holds for a user with no plain-text
// password: an md5 hash, or a SCRAM verifier and the ClientKey of a client
// that logged in against it (nil until one did).
type serverCreds struct {
	// password is a plain-text secret auth_query found.
	password  string
	md5       string
	scram     *scramSecret
	clientKey []byte
}

// serverAuthError is a server login the pooler cannot complete with the
// secret it holds. It is not retried: it will not pass by itself.
type serverAuthError struct{ msg string }

func (e *serverAuthError) Error() string { return e.msg }

// authRelay sits between pgconn's protocol reader and writer and the
// server connection during the login and rewrites the password-dependent
// fields; after AuthenticationOk it passes everything through.
type authRelay struct {
	r     io.Reader
	w     io.Writer
	user  string
	creds serverCreds

	// pending (read from the server, not yet given to pgconn) belongs to
	// the reader, unwritten (written by pgconn, not yet a whole message)
	// and started (the startup message went through) to the writer.
	// pgconn may read on a goroutine of its own while it writes, so the
	// exchange's state below is under mu, which is never held during I/O.
	pending   []byte
	unwritten []byte
	started   bool

	mu   sync.Mutex
	done bool // AuthenticationOk seen
	// state is the last authentication request: 5 md5, 10 SASL, 11
	// SASLContinue.
	state           uint32
	md5Salt         [4]byte
	clientFirstBare string
	serverFirst     string
	authMessage     string
	salt            []byte
	iterations      int
	err             error
}

func (r *authRelay) fail(format string, args ...any) error {
	r.err = &serverAuthError{msg: fmt.Sprintf(format, args...)}
	return r.err
}

// noPassword is the error for a server that wants a password the pooler
// cannot answer with.
func (r *authRelay) noPassword(method string) error {
	switch {
	case r.creds.scram != nil && r.creds.clientKey == nil && method == "SCRAM-SHA-256":
		return r.fail("the server asks user %q for SCRAM-SHA-256 and the pooler holds only a SCRAM verifier for it: no client has logged in with SCRAM yet to make its client key known", r.user)
	case r.creds.scram != nil || r.creds.md5 != "":
		held := "a SCRAM verifier"
		if r.creds.md5 != "" {
			held = "an md5 hash"
		}
		return r.fail("the server asks user %q for %s and the pooler holds only %s for it: store the same kind of secret on both, or put the plain-text password in the auth file", r.user, method, held)
	}
	return r.fail("the server asks user %q for a password (%s) and the pooler has none: put it in the auth file or the upstream URL", r.user, method)
}

func (r *authRelay) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	r.mu.Lock()
	done, err := r.done, r.err
	r.mu.Unlock()
	if done {
		return r.r.Read(p)
	}
	if err != nil {
		return 0, err
	}
	var h [5]byte
	if _, err := io.ReadFull(r.r, h[:]); err != nil {
		return 0, err
	}
	n := int(binary.BigEndian.Uint32(h[1:]))
	if n < 4 || n > maxSmallMessage {
		r.mu.Lock()
		defer r.mu.Unlock()
		return 0, r.fail("server login: bad message length %d", n)
	}
	msg := make([]byte, 5+n-4)
	copy(msg, h[:])
	if _, err := io.ReadFull(r.r, msg[5:]); err != nil {
		return 0, err
	}
	if h[0] == 'R' && len(msg) >= 9 {
		r.mu.Lock()
		err := r.authRequest(msg)
		r.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
	r.pending = msg
	return r.Read(p)
}

// authRequest looks at an Authentication message from the server and
// rewrites it when it must. r.mu is held.
func (r *authRelay) authRequest(msg []byte) error {
	code := binary.BigEndian.Uint32(msg[5:9])
	body := msg[9:]
	switch code {
	case 0: // AuthenticationOk
		r.done = true
	case 3:
		return r.noPassword("a clear-text password")
	case 5:
		if r.creds.md5 == "" {
			return r.noPassword("md5")
		}
		copy(r.md5Salt[:], body)
	case 10:
		if r.creds.scram == nil || r.creds.clientKey == nil {
			return r.noPassword("SCRAM-SHA-256")
		}
	case 11:
		if r.state != 10 {
			return r.fail("server login: unexpected SASL continue")
		}
		r.serverFirst = string(body)
		if err := r.parseServerFirst(); err != nil {
			return err
		}
	case 12:
		if r.state != 11 || r.authMessage == "" {
			return r.fail("server login: unexpected SASL final")
		}
		v, ok := strings.CutPrefix(string(body), "v=")
		sig, err := base64.StdEncoding.DecodeString(v)
		if !ok || err != nil {
			return r.fail("malformed SCRAM server-final-message for user %q", r.user)
		}
		want := hmacSHA256(r.creds.scram.serverKey, r.authMessage)
		if subtle.ConstantTimeCompare(sig, want) != 1 {
			return r.fail("the server's SCRAM signature for user %q does not match the verifier the pooler holds (the server stores another one)", r.user)
		}
		// pgconn checks the signature against the placeholder password.
		key, err := placeholderServerKey(r.salt, r.iterations)
		if err != nil {
			return err
		}
		fake := hmacSHA256(key, r.authMessage)
		copy(body[2:], base64.StdEncoding.EncodeToString(fake))
	default:
		return r.noPassword("authentication method " + strconv.Itoa(int(code)))
	}
	r.state = code
	return nil
}

// parseServerFirst reads the salt and iteration count of the server's
// SCRAM challenge: they must be the verifier's, or no proof can work.
func (r *authRelay) parseServerFirst() error {
	for _, attr := range strings.Split(r.serverFirst, ",") {
		switch {
		case strings.HasPrefix(attr, "s="):
			s, err := base64.StdEncoding.DecodeString(attr[2:])
			if err != nil {
				return r.fail("malformed SCRAM salt for user %q", r.user)
			}
			r.salt = s
		case strings.HasPrefix(attr, "i="):
			n, err := strconv.Atoi(attr[2:])
			if err != nil || n < 1 {
				return r.fail("malformed SCRAM iteration count for user %q", r.user)
			}
			r.iterations = n
		}
	}
	if !hmac.Equal(r.salt, r.creds.scram.salt) || r.iterations != r.creds.scram.iterations {
		return r.fail("the server's SCRAM verifier for user %q has another salt or iteration count than the one the pooler holds (was the password set again on the server?)", r.user)
	}
	return nil
}

func (r *authRelay) Write(p []byte) (int, error) {
	if !r.started {
		// The startup message: no type byte, nothing to rewrite.
		r.started = true
		return r.w.Write(p)
	}
	r.mu.Lock()
	if r.done && len(r.unwritten) == 0 {
		r.mu.Unlock()
		return r.w.Write(p)
	}
	if r.err != nil {
		r.mu.Unlock()
		return 0, r.err
	}
	r.unwritten = append(r.unwritten, p...)
	var out []byte
	for len(r.unwritten) >= 5 {
		n := int(binary.BigEndian.Uint32(r.unwritten[1:5]))
		if n < 4 || len(r.unwritten) < 1+n {
			break
		}
		msg := r.unwritten[:1+n]
		if msg[0] == 'p' {
			if err := r.password(msg); err != nil {
				r.mu.Unlock()
				return 0, err
			}
		}
		out = append(out, msg...)
		r.unwritten = r.unwritten[1+n:]
	}
	r.mu.Unlock()
	if len(out) > 0 {
		if _, err := r.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// password rewrites a PasswordMessage, SASLInitialResponse or
// SASLResponse (all 'p') in place. r.mu is held.
func (r *authRelay) password(msg []byte) error {
	body := msg[5:]
	switch r.state {
	case 5:
		// "md5" + 32 hex digits + NUL, as pgconn wrote it.
		resp := "md5" + md5hex(r.creds.md5[3:]+string(r.md5Salt[:]))
		if len(body) != len(resp)+1 {
			return r.fail("server login: unexpected md5 response length")
		}
		copy(body, resp)
	case 10:
		// SASLInitialResponse: mechanism, NUL, int32 length, client-first.
		i := strings.IndexByte(string(body), 0)
		if i < 0 || len(body) < i+5 {
			return r.fail("server login: malformed SASLInitialResponse")
		}
		first := string(body[i+5:])
		// gs2-header is "flag,authzid," and the bare message follows.
		parts := strings.SplitN(first, ",", 3)
		if len(parts) != 3 {
			return r.fail("server login: malformed SCRAM client-first-message")
		}
		r.clientFirstBare = parts[2]
	case 11:
		// SASLResponse: client-final-message, whose proof is replaced.
		s := string(body)
		i := strings.LastIndex(s, ",p=")
		if i < 0 || r.clientFirstBare == "" {
			return r.fail("server login: malformed SCRAM client-final-message")
		}
		r.authMessage = r.clientFirstBare + "," + r.serverFirst + "," + s[:i]
		sig := hmacSHA256(r.creds.scram.storedKey, r.authMessage)
		proof := make([]byte, sha256.Size)
		for k := range proof {
			proof[k] = r.creds.clientKey[k] ^ sig[k]
		}
		enc := base64.StdEncoding.EncodeToString(proof)
		if len(s)-(i+3) != len(enc) {
			return r.fail("server login: unexpected SCRAM proof length")
		}
		copy(body[i+3:], enc)
	}
	return nil
}

// passThrough sets cfg up to log in with creds when it has no password:
// pgconn answers with a placeholder and an authRelay between its protocol
// reader and writer and the connection puts the real answers in. pgconn
// still sees the TLS connection itself, so over TLS it uses
// SCRAM-SHA-256-PLUS when the server offers it: the channel binding data
// is part of the client-final-message the relay reads, and so of the
// AuthMessage it signs. It returns a function that gives the relay's own
// error, if any.
func passThrough(cfg *pgconn.Config, user string, creds serverCreds) func() error {
	var relay *authRelay
	build := cfg.BuildFrontend
	cfg.Password = placeholderPassword
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		relay = &authRelay{r: r, w: w, user: user, creds: creds}
		return build(relay, relay)
	}
	return func() error {
		if relay == nil {
			return nil
		}
		relay.mu.Lock()
		defer relay.mu.Unlock()
		return relay.err
	}
}

// isServerAuthError reports whether err is a login the pooler cannot
// complete with its secrets.
func isServerAuthError(err error) bool {
	var e *serverAuthError
	return errors.As(err, &e)
}
