package pooler

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

func startupBytes(version uint32, params ...string) []byte {
	var body []byte
	body = binary.BigEndian.AppendUint32(body, version)
	for _, p := range params {
		body = append(body, p...)
		body = append(body, 0)
	}
	body = append(body, 0)
	return append(binary.BigEndian.AppendUint32(nil, uint32(4+len(body))), body...)
}

func TestReadStartup(t *testing.T) {
	cancel, _ := (&pgproto3.CancelRequest{ProcessID: 7, SecretKey: []byte{1, 2, 3, 4}}).Encode(nil)
	tests := []struct {
		name    string
		in      []byte
		kind    startupKind
		user    string
		minor   uint32
		wantErr error
	}{
		{"startup 3.0", startupBytes(3<<16, "user", "bob", "database", "db"), startupMessage, "bob", 0, nil},
		{"startup 3.2", startupBytes(3<<16|2, "user", "bob", "_pq_.x", "1"), startupMessage, "bob", 2, nil},
		{"ssl", []byte{0, 0, 0, 8, 4, 210, 22, 47}, startupSSL, "", 0, nil},
		{"gssenc", []byte{0, 0, 0, 8, 4, 210, 22, 48}, startupGSSENC, "", 0, nil},
		{"cancel", cancel, startupCancel, "", 0, nil},
		{"protocol 2", startupBytes(2<<16, "user", "bob"), 0, "", 0, errUnsupportedProtocol},
		{"no user", startupBytes(3<<16, "database", "db"), 0, "", 0, errAny},
		{"short", []byte{0, 0, 0, 4}, 0, "", 0, errAny},
		{"huge", []byte{0, 1, 0, 0}, 0, "", 0, errAny},
		{"truncated", []byte{0, 0, 0, 20, 0, 3}, 0, "", 0, errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := readStartup(bytes.NewReader(tt.in))
			if tt.wantErr != nil {
				if err == nil || (tt.wantErr != errAny && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.kind != tt.kind || p.params["user"] != tt.user || p.minor != tt.minor {
				t.Fatalf("got %+v", p)
			}
			if tt.kind == startupCancel && (p.cancel.ProcessID != 7 || !bytes.Equal(p.cancel.SecretKey, []byte{1, 2, 3, 4})) {
				t.Fatalf("cancel %+v", p.cancel)
			}
		})
	}
}

// errAny in a table means "some error".
var errAny = errors.New("any error")

func FuzzReadStartup(f *testing.F) {
	f.Add(startupBytes(3<<16, "user", "bob", "database", "db", "application_name", "x"))
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 47})
	f.Add([]byte{0, 0, 0, 16, 4, 210, 22, 46, 0, 0, 0, 1, 0, 0, 0, 2})
	f.Add(startupBytes(2 << 16))
	f.Add([]byte{'X', 0, 0, 0, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := readStartup(bytes.NewReader(b))
		if err != nil {
			return
		}
		if p.kind == startupMessage && p.params["user"] == "" {
			t.Fatal("startup message without user accepted")
		}
	})
}

func TestParseErrorFieldsAndStatus(t *testing.T) {
	b, _ := (&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01", Message: "bye"}).Encode(nil)
	f := parseErrorFields(b[5:])
	if f['V'] != "FATAL" || f['C'] != "57P01" || f['M'] != "bye" {
		t.Fatalf("%v", f)
	}
	ps, _ := (&pgproto3.ParameterStatus{Name: "TimeZone", Value: "UTC"}).Encode(nil)
	if n, v, ok := parseParameterStatus(ps[5:]); !ok || n != "TimeZone" || v != "UTC" {
		t.Fatalf("%q %q %v", n, v, ok)
	}
	for _, bad := range [][]byte{nil, []byte("x"), []byte("x\x00y")} {
		if _, _, ok := parseParameterStatus(bad); ok {
			t.Errorf("%q parsed", bad)
		}
		parseErrorFields(bad)
	}
}

func TestQuoteLiteral(t *testing.T) {
	for in, want := range map[string]string{"UTC": "'UTC'", "it's": "'it''s'", `a\b'`: `E'a\\b'''`} {
		if got := engine.QuoteLiteral(in); got != want {
			t.Errorf("engine.QuoteLiteral(%q) = %s, want %s", in, got, want)
		}
	}
}
