package pgserver

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// tempDir points TMPDIR at a new directory of the test's own and returns
// it. As root the server runs as the postgres OS user, which must reach
// its directory below this one.
func tempDir(t *testing.T) string {
	t.Helper()
	if _, err := FindBinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("%v (set CI=true to make this a failure)", err)
	}
	dir, err := os.MkdirTemp("", "pgserver-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMPDIR", dir)
	return dir
}

func empty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind: %s", e.Name())
	}
}

// TestNewStop: a server answers on its socket and on TCP, and Stop ends
// its process and removes its directory.
func TestNewStop(t *testing.T) {
	tmp := tempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := New(ctx, Options{DirPrefix: "pgserver-test-"})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if pid <= 0 {
		s.Stop()
		t.Fatalf("PID %d", pid)
	}
	for _, url := range []string{s.SocketURL(SuperUser), s.TCPURL(SuperUser, "")} {
		c, err := pgconn.Connect(ctx, url)
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if _, err := c.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
			t.Errorf("%s: %v", url, err)
		}
		c.Close(ctx)
	}
	s.Stop()
	if s.PID() != 0 {
		t.Error("PID after Stop")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postgres (pid %d) after Stop: kill -0 gave %v", pid, err)
	}
	empty(t, tmp)
}

// TestNewCancelled: a context that ends during initdb or the start stops
// what was started and removes the directory.
func TestNewCancelled(t *testing.T) {
	for _, after := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			tmp := tempDir(t)
			ctx, cancel := context.WithTimeout(context.Background(), after)
			defer cancel()
			s, err := New(ctx, Options{})
			if err == nil {
				// The machine was fast enough: nothing to check but Stop.
				s.Stop()
				t.Skip("the server started before the context ended")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("want the context's error, got %v", err)
			}
			empty(t, tmp)
		})
	}
}
