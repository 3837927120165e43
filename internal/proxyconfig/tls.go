package proxyconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// clientTLS builds the pooler's TLS configuration towards clients from the
// client_tls_* settings of c: nil with mode disable. Every file is read
// now, so a missing or unreadable one stops the start (and a RELOAD that
// would apply it).
func clientTLS(c *pooler.Config) (pooler.TLSMode, *tls.Config, error) {
	mode := c.ClientTLSMode // one of the table's values
	if mode == pooler.TLSDisable {
		return mode, nil, nil
	}
	if c.ClientTLSCertFile == "" || c.ClientTLSKeyFile == "" {
		return "", nil, fmt.Errorf("--client-tls-sslmode %s needs --client-tls-cert-file and --client-tls-key-file", mode)
	}
	cert, err := tls.LoadX509KeyPair(c.ClientTLSCertFile, c.ClientTLSKeyFile)
	if err != nil {
		return "", nil, fmt.Errorf("--client-tls-cert-file/--client-tls-key-file: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if cfg.MinVersion, cfg.MaxVersion, err = tlsVersions(c.ClientTLSProtocols); err != nil {
		return "", nil, fmt.Errorf("--client-tls-protocols: %w", err)
	}
	if c.ClientTLSCAFile != "" {
		pem, err := os.ReadFile(c.ClientTLSCAFile)
		if err != nil {
			return "", nil, fmt.Errorf("--client-tls-ca-file: %w", err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
			return "", nil, fmt.Errorf("--client-tls-ca-file: %s holds no PEM certificate", c.ClientTLSCAFile)
		}
	} else if mode == pooler.TLSVerifyCA || mode == pooler.TLSVerifyFull {
		return "", nil, fmt.Errorf("--client-tls-sslmode %s needs --client-tls-ca-file to verify client certificates", mode)
	}
	return mode, cfg, nil
}

// tlsVersions reads PgBouncer's tls_protocols: a list of tlsv1.0 … tlsv1.3,
// or secure (tlsv1.2,tlsv1.3; also default), all or legacy (tlsv1.0 to
// tlsv1.3). The versions listed must be contiguous: a TLS server offers a
// range.
func tlsVersions(spec string) (minV, maxV uint16, err error) {
	versions := map[string]uint16{"tlsv1.0": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11, "tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	on := map[uint16]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(spec), func(r rune) bool { return r == ',' || r == ' ' || r == ':' }) {
		switch w {
		case "secure", "default":
			on[tls.VersionTLS12], on[tls.VersionTLS13] = true, true
		case "all", "legacy":
			for _, v := range versions {
				on[v] = true
			}
		default:
			v, ok := versions[w]
			if !ok {
				return 0, 0, fmt.Errorf("unknown protocol %q (want tlsv1.0, tlsv1.1, tlsv1.2, tlsv1.3, secure, all or legacy)", w)
			}
			on[v] = true
		}
	}
	if len(on) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for v := uint16(tls.VersionTLS10); v <= tls.VersionTLS13; v++ {
		if on[v] {
			if minV == 0 {
				minV = v
			} else if !on[v-1] {
				return 0, 0, errors.New("the versions must be a contiguous range, such as tlsv1.2,tlsv1.3")
			}
			maxV = v
		}
	}
	return minV, maxV, nil
}
