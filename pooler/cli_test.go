package pooler_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
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
		{[]string{"proxy", "--upstream", "postgres://x@h/d", "--mode", "bogus"}, `unknown value "bogus"`},
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

// TestProxyCommandConsoleAndMetrics runs `pgpoolcheck proxy` with a YAML
// config naming the admin users and --metrics-listen: the console answers
// SHOW CONFIG, RELOAD applies a new pool_size from the file, and /metrics
// shows it.
func TestProxyCommandConsoleAndMetrics(t *testing.T) {
	srv := pgtest.Shared(t)
	dir := t.TempDir()
	yml := filepath.Join(dir, "proxy.yaml")
	if err := os.WriteFile(yml, []byte("pool_size: 2\nadmin_users: [postgres]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var port, mport int
	var stderr bytes.Buffer
	var code chan int
	var admin *pgx.Conn
	for range 10 {
		port, mport = 21000+rand.IntN(9000), 21000+rand.IntN(9000)
		stderr.Reset()
		code = make(chan int, 1)
		go func() {
			code <- cli.Run(ctx, []string{"proxy", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
				"--upstream", srv.SocketURL(pgtest.SuperUser), "--config", yml,
				"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport)},
				strings.NewReader(""), &bytes.Buffer{}, &stderr)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			cctx, ccancel := context.WithTimeout(ctx, time.Second)
			c, err := pgx.Connect(cctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pgpoolcheck?sslmode=disable&default_query_exec_mode=simple_protocol", port))
			ccancel()
			if err == nil {
				admin = c
				break
			}
			select {
			case rc := <-code:
				t.Logf("ports %d, %d: exit %d: %s", port, mport, rc, stderr.String())
				deadline = time.Time{}
			case <-time.After(50 * time.Millisecond):
			}
		}
		if admin != nil {
			break
		}
	}
	if admin == nil {
		t.Fatal("proxy command did not come up")
	}
	defer admin.Close(ctx)
	setting := func(key string) string {
		var k, v, d, ch string
		rows, err := admin.Query(ctx, "SHOW CONFIG")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&k, &v, &d, &ch); err != nil {
				t.Fatal(err)
			}
			if k == key {
				return v
			}
		}
		return ""
	}
	if v := setting("pool_size"); v != "2" {
		t.Fatalf("pool_size %q, want 2", v)
	}
	if v := setting("metrics_listen"); v != fmt.Sprintf("127.0.0.1:%d", mport) {
		t.Errorf("metrics_listen %q", v)
	}
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yml, []byte("pool_size: 4\nadmin_users: [postgres]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "RELOAD"); err != nil {
		t.Fatal(err)
	}
	if v := setting("pool_size"); v != "4" {
		t.Errorf("after RELOAD: pool_size %q, want 4", v)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `pgpoolcheck_pool_size{database="postgres",user="postgres"} 4`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, body)
	}
	cancel()
	select {
	case rc := <-code:
		if rc != 0 {
			t.Fatalf("exit %d: %s", rc, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("proxy did not stop")
	}
}
