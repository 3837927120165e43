// Package pgserver starts and stops a throwaway PostgreSQL server: initdb
// into a new temporary directory (fsync off, trust authentication), a
// unix socket in that directory plus a TCP port on 127.0.0.1, and Stop
// shuts it down and removes the directory. The tests use it through
// internal/pgtest; `pgpoolcheck demo` uses it directly.
//
// The server binaries are looked up on PATH, through `pg_config --bindir`
// and under /usr/lib/postgresql/*/bin. PostgreSQL refuses to run as root,
// so when the process runs as uid 0, initdb and postgres run as the
// `postgres` OS user, which owns the directory.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The superuser every server is made with (trusted on the socket and on
// 127.0.0.1, no password) and the database it connects to.
const (
	SuperUser = "postgres"
	Database  = "postgres"
)

// ErrNoBinaries says that no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH, via pg_config --bindir or under /usr/lib/postgresql/*/bin")

// Options change how New makes a server.
type Options struct {
	// BinDir holds initdb and postgres (default: FindBinDir).
	BinDir string
	// DirPrefix begins the name of the temporary directory (default
	// "pgserver-").
	DirPrefix string
	// HBA lines go into pg_hba.conf after "local all all trust" and
	// before "host all all 127.0.0.1/32 trust", so they can ask some
	// users for a password.
	HBA []string
}

// Server is a running throwaway PostgreSQL.
type Server struct {
	// BinDir holds the server binaries (initdb, postgres, psql, pgbench).
	BinDir string
	// Dir is the temporary directory: data in Dir/data, socket in Dir.
	Dir string
	// Port is the TCP port on 127.0.0.1 (the socket uses the same number).
	Port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	cred *syscall.Credential
	uid  int
	gid  int
}

// FindBinDir returns the directory holding initdb and postgres, or an
// error wrapping ErrNoBinaries.
func FindBinDir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); has(d) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// New runs initdb into a new temporary directory and starts the server on
// a free port. When ctx ends first, whatever was started is stopped and
// the directory removed.
func New(ctx context.Context, opt Options) (*Server, error) {
	bin := opt.BinDir
	if bin == "" {
		var err error
		if bin, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	prefix := opt.DirPrefix
	if prefix == "" {
		prefix = "pgserver-"
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	s := &Server{BinDir: bin, Dir: dir, uid: -1, gid: -1}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root needs the postgres OS user: %w", err)
		}
		s.uid, _ = strconv.Atoi(u.Uid)
		s.gid, _ = strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}
		if err := os.Chown(dir, s.uid, s.gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := s.initdb(ctx, opt.HBA); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.startWithRetry(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Tool returns the path of a client program (psql, pgbench) from the
// server's directory or PATH, or "" when there is none.
func (s *Server) Tool(name string) string {
	if p := filepath.Join(s.BinDir, name); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.BinDir, name), args...)
	cmd.Dir = s.Dir
	// A process group of its own: a Ctrl-C in the terminal reaches the
	// parent, which stops the server, and Kill reaches every process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	return cmd
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

func (s *Server) initdb(ctx context.Context, hba []string) error {
	cmd := s.command("initdb", "-D", s.dataDir(), "-U", SuperUser, "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	out, err := runGroup(ctx, cmd)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("initdb: %v: %s", err, out)
	}
	lines := append([]string{"local all all trust"}, hba...)
	lines = append(lines, "host all all 127.0.0.1/32 trust", "")
	p := filepath.Join(s.dataDir(), "pg_hba.conf")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		return err
	}
	if s.uid >= 0 {
		return os.Chown(p, s.uid, s.gid)
	}
	return nil
}

// runGroup runs cmd to its end and returns its combined output; when ctx
// ends first, its whole process group is killed (initdb runs postgres in
// single-user mode as a child).
func runGroup(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	stop()
	return []byte(out.String()), err
}

// startWithRetry picks a port in 21000–29999 (below the kernel's
// ephemeral range) and starts the server, trying other ports when one is
// taken.
func (s *Server) startWithRetry(ctx context.Context) error {
	var last error
	for range 10 {
		s.Port = 21000 + rand.IntN(9000)
		if last = s.start(ctx); last == nil || ctx.Err() != nil {
			return last
		}
	}
	return last
}

// Start starts the server on its port (again, after Halt).
func (s *Server) Start() error { return s.start(context.Background()) }

func (s *Server) start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := s.command("postgres", "-D", s.dataDir(), "-k", s.Dir, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB",
		"-c", "log_min_messages=warning", "-c", "logging_collector=off")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("postgres exited during start (port %d); see %s", s.Port, filepath.Join(s.Dir, "postgres.log"))
		case <-ctx.Done():
			s.killLocked()
			return ctx.Err()
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := pgconn.Connect(cctx, s.SocketURL(SuperUser))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.killLocked()
	return errors.New("postgres did not accept connections within 30s")
}

// Stop shuts the server down (fast shutdown) and removes its directory:
// Stop is final.
func (s *Server) Stop() {
	s.Halt()
	os.RemoveAll(s.Dir)
}

// Halt shuts the server down (fast shutdown, terminating backends) but
// keeps its data, so Start brings it back on the same port.
func (s *Server) Halt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		s.killLocked()
	}
	s.cmd = nil
}

// PID is the postmaster's process ID, or 0 when the server is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// SocketURL is a connection URL over the unix socket.
func (s *Server) SocketURL(user string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", user, Database, s.Dir, s.Port)
}

// TCPURL is a connection URL over TCP to 127.0.0.1, with a password when
// one is given.
func (s *Server) TCPURL(user, password string) string {
	cred := user
	if password != "" {
		cred += ":" + password
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", cred, s.Port, Database)
}

// Exec runs SQL as the superuser over the socket.
func (s *Server) Exec(ctx context.Context, sql string) error {
	c, err := pgconn.Connect(ctx, s.SocketURL(SuperUser))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql).ReadAll()
	return err
}
