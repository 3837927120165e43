package pooler

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/secure/precis"
)

// This file is the server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as
// PostgreSQL speaks it: no channel binding towards clients, and the user
// name in the SCRAM messages is ignored in favour of the one in the startup
// packet.

// scramIterations is the PBKDF2 iteration count used when a verifier is
// derived from a plain-text password, PostgreSQL's default.
const scramIterations = 4096

// scramSecret is a SCRAM-SHA-256 verifier.
type scramSecret struct {
	iterations int
	salt       []byte
	storedKey  []byte
	serverKey  []byte
}

// parseSCRAMSecret decodes "SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>".
func parseSCRAMSecret(s string) (*scramSecret, error) {
	rest, ok := strings.CutPrefix(s, "SCRAM-SHA-256$")
	if !ok {
		return nil, errors.New("not a SCRAM-SHA-256 secret")
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return nil, errors.New("SCRAM secret: missing keys")
	}
	iterS, saltS, ok := strings.Cut(params, ":")
	if !ok {
		return nil, errors.New("SCRAM secret: missing salt")
	}
	storedS, serverS, ok := strings.Cut(keys, ":")
	if !ok {
		return nil, errors.New("SCRAM secret: missing server key")
	}
	iter, err := strconv.Atoi(iterS)
	if err != nil || iter < 1 {
		return nil, errors.New("SCRAM secret: bad iteration count")
	}
	sec := &scramSecret{iterations: iter}
	if sec.salt, err = base64.StdEncoding.DecodeString(saltS); err != nil {
		return nil, errors.New("SCRAM secret: bad salt")
	}
	if sec.storedKey, err = base64.StdEncoding.DecodeString(storedS); err != nil || len(sec.storedKey) != sha256.Size {
		return nil, errors.New("SCRAM secret: bad stored key")
	}
	if sec.serverKey, err = base64.StdEncoding.DecodeString(serverS); err != nil || len(sec.serverKey) != sha256.Size {
		return nil, errors.New("SCRAM secret: bad server key")
	}
	return sec, nil
}

// newSCRAMSecret derives a verifier from a plain-text password with a
// random salt.
func newSCRAMSecret(password string) (*scramSecret, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return deriveSCRAMSecret(password, salt, scramIterations)
}

func deriveSCRAMSecret(password string, salt []byte, iter int) (*scramSecret, error) {
	// SASLprep as PostgreSQL applies it; a password it rejects is used as is.
	if p, err := precis.OpaqueString.String(password); err == nil {
		password = p
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		return nil, err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return &scramSecret{
		iterations: iter,
		salt:       salt,
		storedKey:  stored[:],
		serverKey:  hmacSHA256(salted, "Server Key"),
	}, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// scramClientFirst is the parsed client-first-message.
type scramClientFirst struct {
	gs2Header string // "n,," or "y,," (plus authzid)
	bare      string // client-first-message-bare
	nonce     string
}

// parseClientFirst decodes a client-first-message. Channel binding ("p=")
// is refused because the pooler offers no TLS to clients.
func parseClientFirst(data []byte) (*scramClientFirst, error) {
	s := string(data)
	flag, rest, ok := strings.Cut(s, ",")
	if !ok {
		return nil, errors.New("malformed SCRAM client-first-message")
	}
	switch {
	case flag == "n" || flag == "y":
	case strings.HasPrefix(flag, "p="):
		return nil, errors.New("SCRAM channel binding is not supported by this pooler")
	default:
		return nil, errors.New("malformed SCRAM client-first-message: bad channel-binding flag")
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("malformed SCRAM client-first-message")
	}
	if authzid != "" && !strings.HasPrefix(authzid, "a=") {
		return nil, errors.New("malformed SCRAM client-first-message: bad authzid")
	}
	cf := &scramClientFirst{gs2Header: flag + "," + authzid + ",", bare: bare}
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("malformed SCRAM client-first-message: want n= and r=")
	}
	cf.nonce = attrs[1][2:]
	if cf.nonce == "" || !printableNonce(cf.nonce) {
		return nil, errors.New("malformed SCRAM client-first-message: bad nonce")
	}
	return cf, nil
}

func printableNonce(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return true
}

// scramClientFinal is the parsed client-final-message.
type scramClientFinal struct {
	channelBinding string
	nonce          string
	withoutProof   string
	proof          []byte
}

// parseClientFinal decodes a client-final-message.
func parseClientFinal(data []byte) (*scramClientFinal, error) {
	s := string(data)
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return nil, errors.New("malformed SCRAM client-final-message: no proof")
	}
	cf := &scramClientFinal{withoutProof: s[:i]}
	proof, err := base64.StdEncoding.DecodeString(s[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return nil, errors.New("malformed SCRAM client-final-message: bad proof")
	}
	cf.proof = proof
	attrs := strings.Split(cf.withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("malformed SCRAM client-final-message: want c= and r=")
	}
	cf.channelBinding = attrs[0][2:]
	cf.nonce = attrs[1][2:]
	return cf, nil
}

// scramExchange is one server-side SCRAM conversation.
type scramExchange struct {
	secret      *scramSecret
	first       *scramClientFirst
	serverFirst string
	nonce       string
	// clientKey is the client's ClientKey, recovered from its proof by a
	// successful finish: what the pooler logs in to the server with when
	// it holds only the verifier (passthrough.go).
	clientKey []byte
}

// start consumes the client-first-message and returns server-first-message.
func (x *scramExchange) start(clientFirst []byte) ([]byte, error) {
	cf, err := parseClientFirst(clientFirst)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	x.first = cf
	x.nonce = cf.nonce + base64.StdEncoding.EncodeToString(raw)
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.nonce, base64.StdEncoding.EncodeToString(x.secret.salt), x.secret.iterations)
	return []byte(x.serverFirst), nil
}

// errSCRAMProof is a client proof that does not match the secret.
var errSCRAMProof = errors.New("SCRAM proof does not match")

// finish checks the client-final-message and returns server-final-message.
func (x *scramExchange) finish(clientFinal []byte) ([]byte, error) {
	cf, err := parseClientFinal(clientFinal)
	if err != nil {
		return nil, err
	}
	if cf.channelBinding != base64.StdEncoding.EncodeToString([]byte(x.first.gs2Header)) {
		return nil, errors.New("SCRAM channel binding does not match")
	}
	if cf.nonce != x.nonce {
		return nil, errors.New("SCRAM nonce does not match")
	}
	authMessage := x.first.bare + "," + x.serverFirst + "," + cf.withoutProof
	sig := hmacSHA256(x.secret.storedKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	for i := range clientKey {
		clientKey[i] = cf.proof[i] ^ sig[i]
	}
	got := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(got[:], x.secret.storedKey) != 1 {
		return nil, errSCRAMProof
	}
	x.clientKey = clientKey
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacSHA256(x.secret.serverKey, authMessage))), nil
}
