package pooler_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/cli"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestProxyCommand runs `pgpoolcheck proxy` through the CLI entry point,
// uses it, and stops it by cancelling its context: exit status 0.
func TestProxyCommand(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var port int
	var stderr bytes.Buffer
	var code chan int
	var c *pgx.Conn
	for range 10 {
		port = 21000 + rand.IntN(9000)
		stderr.Reset()
		code = make(chan int, 1)
		go func() {
			code <- cli.Run(ctx, []string{"proxy", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
				"--upstream", srv.SocketURL(pgtest.SuperUser), "--pool-size", "2", "--log-format", "json"},
				strings.NewReader(""), &bytes.Buffer{}, &stderr)
		}()
		var err error
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			cctx, ccancel := context.WithTimeout(ctx, time.Second)
			c, err = pgx.Connect(cctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&default_query_exec_mode=exec", port))
			ccancel()
			if err == nil {
				break
			}
			select {
			case rc := <-code:
				t.Logf("port %d: exit %d: %s", port, rc, stderr.String())
				deadline = time.Time{}
			case <-time.After(50 * time.Millisecond):
			}
		}
		if c != nil {
			break
		}
	}
	if c == nil {
		t.Fatal("proxy command did not come up")
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 40 + 2").Scan(&n); err != nil || n != 42 {
		t.Fatalf("%d, %v", n, err)
	}
	c.Close(ctx)
	cancel()
	select {
	case rc := <-code:
		if rc != 0 {
			t.Fatalf("exit %d: %s", rc, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("proxy did not stop")
	}
	if !strings.Contains(stderr.String(), `"msg":"proxy listening"`) {
		t.Errorf("no JSON log line: %s", stderr.String())
	}
}

func TestProxyCommandUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "needs --upstream"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--mode", "bogus"}, "unknown mode"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--listen", "0.0.0.0:6432"}, "--insecure-trust"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--auth-type", "md5"}, "auth file"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--log-level", "loud"}, "--log-level"},
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--auth-type", "md5", "--auth-file", "/nonexistent"}, "--auth-file"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		rc := cli.Run(context.Background(), tt.args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if rc != cli.ExitError || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, rc, stderr.String(), tt.want)
		}
	}
}
