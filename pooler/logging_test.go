package pooler

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogsHoldNoSecrets logs at debug level through logins with right and
// wrong passwords, a failed server login and queries with parameters, and
// checks that no password or parameter value reaches the log.
func TestLogsHoldNoSecrets(t *testing.T) {
	srv := pgtest.Shared(t)
	var logs lockedBuffer
	const pw, wrong, param = "pw-Zq81-secret", "pw-wrong-Xy77", "param-value-Kk42"
	tp := startProxy(t, srv, Config{
		PoolSize: 1, AuthType: AuthSCRAM, QueryWaitTimeout: time.Second,
		Users:  Userlist{pgtest.SuperUser: pw, "ghost": "ghost-pw-Qq19"},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ctx := testCtx(t, 30*time.Second)
	for _, p := range []string{pw, wrong} {
		cfg, _ := pgx.ParseConfig(tp.url(pgtest.SuperUser, p))
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			continue
		}
		var s string
		if err := c.QueryRow(ctx, "SELECT $1::text", param).Scan(&s); err != nil || s != param {
			t.Fatal(s, err)
		}
		c.Exec(ctx, "SELECT $1::int", param) // fails on the server
		c.Close(ctx)
	}
	cfg, _ := pgx.ParseConfig(tp.url("ghost", "ghost-pw-Qq19"))
	if _, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		t.Fatal("a user the server does not know logged in")
	}
	out := logs.String()
	if !strings.Contains(out, "client login failed") {
		t.Fatalf("expected log lines missing:\n%s", out)
	}
	for _, secret := range []string{pw, wrong, param, "ghost-pw-Qq19"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
}
