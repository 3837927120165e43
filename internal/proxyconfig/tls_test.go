package proxyconfig

import (
	"crypto/tls"
	"testing"
)

func TestTLSVersions(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		min, max uint16
		err      bool
	}{
		{"", tls.VersionTLS12, tls.VersionTLS13, false},
		{"secure", tls.VersionTLS12, tls.VersionTLS13, false},
		{"TLSv1.2", tls.VersionTLS12, tls.VersionTLS12, false},
		{"tlsv1.3,tlsv1.2", tls.VersionTLS12, tls.VersionTLS13, false},
		{"all", tls.VersionTLS10, tls.VersionTLS13, false},
		{"tlsv1.1, tlsv1.2", tls.VersionTLS11, tls.VersionTLS12, false},
		{"tlsv1.1,tlsv1.3", 0, 0, true},
		{"sslv3", 0, 0, true},
	} {
		lo, hi, err := tlsVersions(tc.spec)
		if (err != nil) != tc.err || lo != tc.min || hi != tc.max {
			t.Errorf("tlsVersions(%q) = %x, %x, %v", tc.spec, lo, hi, err)
		}
	}
}
