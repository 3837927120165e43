package pooler

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

// scramClient computes a client-final-message for the given exchange, as
// a client that knows the password would.
func scramClient(t *testing.T, password, clientFirstBare, serverFirst string) (final string, serverSig []byte) {
	t.Helper()
	var salt []byte
	var iter int
	var nonce string
	for _, a := range strings.Split(serverFirst, ",") {
		switch {
		case strings.HasPrefix(a, "r="):
			nonce = a[2:]
		case strings.HasPrefix(a, "s="):
			salt, _ = base64.StdEncoding.DecodeString(a[2:])
		case strings.HasPrefix(a, "i="):
			for _, d := range a[2:] {
				iter = iter*10 + int(d-'0')
			}
		}
	}
	sec, err := deriveSCRAMSecret(password, salt, iter)
	if err != nil {
		t.Fatal(err)
	}
	withoutProof := "c=biws,r=" + nonce
	auth := clientFirstBare + "," + serverFirst + "," + withoutProof
	// ClientKey is recovered from the derivation: HMAC(SaltedPassword, "Client Key").
	clientKey := clientKeyFor(t, password, salt, iter)
	sig := hmacSHA256(sec.storedKey, auth)
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), hmacSHA256(sec.serverKey, auth)
}

func clientKeyFor(t *testing.T, password string, salt []byte, iter int) []byte {
	t.Helper()
	// Recompute SaltedPassword the way deriveSCRAMSecret does.
	s, err := deriveSCRAMSecret(password, salt, iter)
	if err != nil {
		t.Fatal(err)
	}
	_ = s
	salted := pbkdf2ForTest(password, salt, iter)
	h := hmac.New(sha256.New, salted)
	h.Write([]byte("Client Key"))
	return h.Sum(nil)
}

func TestSCRAMExchange(t *testing.T) {
	sec, err := newSCRAMSecret("pencil")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		password string
		ok       bool
	}{{"pencil", true}, {"pen", false}} {
		x := &scramExchange{secret: sec}
		first := "n=user,r=rOprNGfwEbeRWgbNEkqO"
		sf, err := x.start([]byte("n,," + first))
		if err != nil {
			t.Fatal(err)
		}
		final, wantSig := scramClient(t, tt.password, first, string(sf))
		got, err := x.finish([]byte(final))
		if tt.ok {
			if err != nil {
				t.Fatalf("right password: %v", err)
			}
			if string(got) != "v="+base64.StdEncoding.EncodeToString(wantSig) {
				t.Fatalf("server signature %q", got)
			}
		} else if err != errSCRAMProof {
			t.Fatalf("wrong password: err %v", err)
		}
	}
}

func TestSCRAMMalformed(t *testing.T) {
	sec, _ := newSCRAMSecret("x")
	firsts := []string{"", "n", "n,,", "p=tls-server-end-point,,n=,r=abc", "x,,n=,r=abc", "n,,n=,r=", "n,,r=abc", "n,b,n=,r=abc"}
	for _, f := range firsts {
		x := &scramExchange{secret: sec}
		if _, err := x.start([]byte(f)); err == nil {
			t.Errorf("client-first %q accepted", f)
		}
	}
	x := &scramExchange{secret: sec}
	if _, err := x.start([]byte("n,,n=,r=abc")); err != nil {
		t.Fatal(err)
	}
	finals := []string{"", "c=biws,r=abc", "c=biws,r=abc,p=!!", "c=biws,r=abc,p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)), "c=eSws,r=" + x.nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32))}
	for _, f := range finals {
		if _, err := x.finish([]byte(f)); err == nil {
			t.Errorf("client-final %q accepted", f)
		}
	}
}

func TestParseSCRAMSecret(t *testing.T) {
	good, _ := newSCRAMSecret("pw")
	enc := "SCRAM-SHA-256$4096:" + base64.StdEncoding.EncodeToString(good.salt) + "$" +
		base64.StdEncoding.EncodeToString(good.storedKey) + ":" + base64.StdEncoding.EncodeToString(good.serverKey)
	if s, err := parseSCRAMSecret(enc); err != nil || s.iterations != 4096 {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{"", "SCRAM-SHA-256$", "SCRAM-SHA-256$x:AA==$AA==:AA==", "SCRAM-SHA-256$4096:AA==$AA==:AA==", "md5abc"} {
		if _, err := parseSCRAMSecret(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzSCRAMClientMessages(f *testing.F) {
	f.Add([]byte("n,,n=user,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Add([]byte("y,a=x,n=,r=z,e=1"), []byte("c=eSws,r=zz,p="))
	sec, _ := deriveSCRAMSecret("x", []byte("salt"), 1)
	f.Fuzz(func(t *testing.T, first, final []byte) {
		x := &scramExchange{secret: sec}
		if _, err := x.start(first); err != nil {
			return
		}
		if _, err := x.finish(final); err == nil {
			t.Fatal("a random proof was accepted")
		}
	})
}

func pbkdf2ForTest(password string, salt []byte, iter int) []byte {
	// Independent of deriveSCRAMSecret: PBKDF2-HMAC-SHA256 with one block
	// (RFC 8018), written out for the test.
	mac := hmac.New(sha256.New, []byte(password))
	mac.Write(salt)
	mac.Write([]byte{0, 0, 0, 1})
	u := mac.Sum(nil)
	out := append([]byte(nil), u...)
	for i := 1; i < iter; i++ {
		mac.Reset()
		mac.Write(u)
		u = mac.Sum(u[:0])
		for j := range out {
			out[j] ^= u[j]
		}
	}
	return out
}
