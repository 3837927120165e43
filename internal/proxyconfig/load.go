package proxyconfig

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/metrics"
)

// Sources are where the proxy's configuration comes from, lowest
// precedence first: the table's defaults, the pgbouncer.ini, the YAML
// config, PGPOOLCHECK_UPSTREAM (for the upstream URL) and the command
// line.
type Sources struct {
	// INI and YAML are the paths of --pgbouncer-ini and --config ("":
	// none).
	INI, YAML string
	// CommandLine are the settings given on the command line, as their
	// text (Flags fills it): Load parses them each time, so RELOAD reads
	// exactly what the command line said.
	CommandLine map[string]string
	// Getenv reads the environment.
	Getenv func(string) string
	// Stderr receives the warnings about the files and the proxy's logs.
	Stderr io.Writer
}

// ReadError is a file named by a setting (the auth file) that could not
// be read: not a mistake in the command line.
type ReadError struct{ Err error }

func (e ReadError) Error() string { return e.Err.Error() }
func (e ReadError) Unwrap() error { return e.Err }

// Load builds the pooler's configuration from src through the settings
// table, checks it as far as the files allow, and reads what the settings
// name (the auth file, the client certificates). With a config file, the
// configuration's Reload runs Load again on the same sources.
func Load(src Sources) (pooler.Config, error) {
	cfg := Defaults()
	warn := func(format string, a ...any) {
		if src.Stderr != nil {
			fmt.Fprintf(src.Stderr, "pgpoolcheck: warning: "+format+"\n", a...)
		}
	}
	if src.INI != "" {
		s, ignored, err := LoadPgBouncerINI(src.INI)
		if err != nil {
			return pooler.Config{}, fmt.Errorf("--pgbouncer-ini: %w", err)
		}
		for _, ig := range ignored {
			warn("%s: %s", src.INI, ig)
		}
		s.ApplyTo(&cfg)
	}
	if src.YAML != "" {
		s, err := LoadYAML(src.YAML)
		if err != nil {
			return pooler.Config{}, fmt.Errorf("--config: %w", err)
		}
		for _, w := range s.Warnings {
			warn("%s: %s", src.YAML, w)
		}
		s.ApplyTo(&cfg)
	}
	cmdline := &Settings{}
	for _, st := range pooler.Settings() {
		if text, ok := src.CommandLine[st.Name]; ok {
			if err := cmdline.Parse(st.Name, text); err != nil {
				return pooler.Config{}, fmt.Errorf("--%s: %w", st.FlagName(), errors.Unwrap(err))
			}
		}
	}
	// The upstream URL: the command line, then the environment, then the
	// files.
	if up, _ := cmdline.Value("upstream"); up == nil || up == "" {
		if src.Getenv != nil {
			if env := src.Getenv("PGPOOLCHECK_UPSTREAM"); env != "" {
				cmdline.put(pooler.LookupSetting("upstream"), env)
			}
		}
	}
	cmdline.ApplyTo(&cfg)
	if cfg.Upstream == "" {
		return pooler.Config{}, errors.New("proxy needs --upstream (or PGPOOLCHECK_UPSTREAM)")
	}
	if err := derive(&cfg, src.Stderr); err != nil {
		return pooler.Config{}, err
	}
	if src.INI != "" || src.YAML != "" {
		cfg.Reload = func(c *pooler.Config) error {
			next, err := Load(src)
			if err != nil {
				return err
			}
			*c = next
			return nil
		}
	}
	return cfg, nil
}

// derive fills in the fields of cfg that its settings name: the server
// TLS settings in the upstream URL, the client TLS configuration, the
// logger, the session-state classifier, the metrics handler and the users
// of the auth file.
func derive(cfg *pooler.Config, stderr io.Writer) error {
	up, err := withServerTLS(cfg.Upstream, [][2]string{
		{"sslmode", cfg.ServerTLSMode}, {"sslrootcert", cfg.ServerTLSCAFile},
		{"sslcert", cfg.ServerTLSCertFile}, {"sslkey", cfg.ServerTLSKeyFile},
	})
	if err != nil {
		return err
	}
	cfg.Upstream = up
	if cfg.ClientTLSMode, cfg.ClientTLS, err = clientTLS(cfg); err != nil {
		return err
	}
	if stderr == nil {
		stderr = io.Discard
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: unknown level %q (want debug, info, warn or error)", cfg.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		cfg.Logger = slog.New(slog.NewJSONHandler(stderr, opts))
	} else {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, opts))
	}
	if cfg.MetricsListen != "" {
		cfg.MetricsHandler = metrics.Handler
	}
	if cfg.OnSessionState != pooler.PolicyOff {
		cfg.Classifier = sessionstate.New()
	}
	if cfg.AuthFile != "" {
		users, err := pooler.LoadUserlist(cfg.AuthFile)
		if err != nil {
			return ReadError{fmt.Errorf("--auth-file: %w", err)}
		}
		cfg.Users = users
	}
	return nil
}

// withServerTLS adds the server TLS settings (libpq keyword, value; ""
// for unset) to the upstream URL or keyword/value DSN. A setting the
// upstream already gives with another value is an error: one of them
// would be silently dropped.
func withServerTLS(upstream string, params [][2]string) (string, error) {
	isURL := strings.HasPrefix(upstream, "postgres://") || strings.HasPrefix(upstream, "postgresql://")
	var u *url.URL
	var q url.Values
	if isURL {
		var err error
		if u, err = url.Parse(upstream); err != nil {
			return "", fmt.Errorf("upstream URL: %s", pooler.WithoutPassword(err.Error(), upstream))
		}
		q = u.Query()
	}
	changed := false
	for _, kv := range params {
		key, v := kv[0], kv[1]
		if v == "" {
			continue
		}
		var have string
		if isURL {
			have = q.Get(key)
		} else if m := regexp.MustCompile(`(?:^|\s)` + key + `\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`).FindStringSubmatch(upstream); m != nil {
			have = strings.Trim(m[1], "'")
		}
		switch {
		case have == v:
			continue
		case have != "":
			return "", fmt.Errorf("the upstream sets %s=%s but the server TLS settings ask for %s=%s: keep one", key, have, key, v)
		}
		changed = true
		if isURL {
			q.Set(key, v)
		} else {
			upstream += " " + key + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
		}
	}
	if isURL && changed {
		u.RawQuery = q.Encode()
		upstream = u.String()
	}
	return upstream, nil
}
