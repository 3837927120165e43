// Package pgtest starts throwaway PostgreSQL servers for tests.
//
// A test binary calls Main from its TestMain; the first test that asks for
// the shared server with Shared starts it (initdb into a temporary
// directory, fsync off, a unix socket in that directory plus a TCP port on
// 127.0.0.1 below the kernel's ephemeral range), and Main stops it and
// removes the directory when the tests are done. Tests that must stop or
// restart a server get their own with New.
//
// The server binaries are looked up on PATH, through `pg_config --bindir`
// and under /usr/lib/postgresql/*/bin. Without them the tests are skipped
// with a message, except when the environment variable CI is "true": then
// a missing PostgreSQL is a test failure. PostgreSQL refuses to run as
// root, so when the test runs as uid 0 initdb and postgres run as the
// `postgres` OS user.
package pgtest

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
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Users made in every server, with passwords stored in the named format,
// for authentication tests. The superuser "postgres" has no password and
// is trusted on the socket and on 127.0.0.1.
const (
	MD5User       = "md5user"
	MD5Password   = "md5-secret"
	SCRAMUser     = "scramuser"
	SCRAMPassword = "scram-secret"
	SuperUser     = "postgres"
	Database      = "postgres"
)

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

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Main runs the tests of a package and stops the shared server, if one was
// started, afterwards. Use it as `func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }`.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	reportOptional()
	return code
}

// optional are the groups of tests skipped for a missing optional
// dependency, with how to get it (Optional).
var optional struct {
	sync.Mutex
	groups map[string]string
	counts map[string]int
}

// Optional skips t because an optional dependency of its group (a driver,
// a client program such as psql) is missing, or fails it when CI=true,
// where .ci/run installs every one. Main lists the skipped groups once, at
// the end of the run, with how to enable them (go test shows it with -v,
// or when the package fails).
func Optional(t testing.TB, group, how, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: %s (CI=true: a missing dependency is a failure; %s)", group, reason, how)
	}
	optional.Lock()
	if optional.groups == nil {
		optional.groups, optional.counts = map[string]string{}, map[string]int{}
	}
	optional.groups[group] = how
	optional.counts[group]++
	optional.Unlock()
	t.Skipf("%s: %s (%s; with CI=true this is a failure)", group, reason, how)
}

func reportOptional() {
	optional.Lock()
	defer optional.Unlock()
	if len(optional.groups) == 0 {
		return
	}
	names := make([]string, 0, len(optional.groups))
	for g := range optional.groups {
		names = append(names, g)
	}
	sort.Strings(names)
	fmt.Println("pgtest: tests skipped for missing optional dependencies:")
	for _, g := range names {
		fmt.Printf("  %s: %d tests skipped; to run them: %s\n", g, optional.counts[g], optional.groups[g])
	}
}

// Shared returns the server shared by the whole test binary, starting it
// on first use. Without PostgreSQL binaries it skips the test, or fails it
// when CI=true.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		unavailable(t, sharedErr)
	}
	return shared
}

// New starts a server of the test's own, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.Stop)
	return s
}

// errNoBinaries says that no PostgreSQL server binaries were found.
var errNoBinaries = errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH, via pg_config --bindir or under /usr/lib/postgresql/*/bin")

func unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNoBinaries) && os.Getenv("CI") != "true" {
		t.Skipf("pgtest: %v (set CI=true to make this a failure)", err)
	}
	t.Fatalf("pgtest: %v", err)
}

// FindBinDir returns the directory holding initdb and postgres.
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
	return "", errNoBinaries
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
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

func start() (*Server, error) {
	bin, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
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
	if err := s.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.startWithRetry(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.setup(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.BinDir, name), args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	return cmd
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

func (s *Server) initdb() error {
	out, err := s.command("initdb", "-D", s.dataDir(), "-U", SuperUser, "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %v: %s", err, out)
	}
	hba := strings.Join([]string{
		"local all all trust",
		"host all " + MD5User + " 127.0.0.1/32 md5",
		"host all " + SCRAMUser + " 127.0.0.1/32 scram-sha-256",
		"host all all 127.0.0.1/32 trust",
		"",
	}, "\n")
	p := filepath.Join(s.dataDir(), "pg_hba.conf")
	if err := os.WriteFile(p, []byte(hba), 0o600); err != nil {
		return err
	}
	if s.uid >= 0 {
		return os.Chown(p, s.uid, s.gid)
	}
	return nil
}

// startWithRetry picks a port in 21000–29999 and starts the server,
// trying other ports when one is taken.
func (s *Server) startWithRetry() error {
	var last error
	for range 10 {
		s.Port = 21000 + rand.IntN(9000)
		if last = s.Start(); last == nil {
			return nil
		}
	}
	return last
}

// Start starts the server on its port (again, after Stop or Kill).
func (s *Server) Start() error {
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
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgconn.Connect(ctx, s.SocketURL(SuperUser))
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

// Stop shuts the server down (fast shutdown) and, when it is not going to
// be started again, removes its directory: Stop on a server made by New or
// Shared is final.
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

func (s *Server) setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Exec(ctx, fmt.Sprintf(`
SET password_encryption = 'md5';
CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s';
SET password_encryption = 'scram-sha-256';
CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s';`, MD5User, MD5Password, SCRAMUser, SCRAMPassword))
}
