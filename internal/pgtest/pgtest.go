// Package pgtest starts throwaway PostgreSQL servers for tests.
//
// A test binary calls Main from its TestMain; the first test that asks for
// the shared server with Shared starts it (initdb into a temporary
// directory, fsync off, a unix socket in that directory plus a TCP port on
// 127.0.0.1 below the kernel's ephemeral range), and Main stops it and
// removes the directory when the tests are done. Tests that must stop or
// restart a server get their own with New.
//
// The servers come from package pgserver: the binaries are looked up on
// PATH, through `pg_config --bindir` and under /usr/lib/postgresql/*/bin,
// and as root they run as the `postgres` OS user. Without the binaries the
// tests are skipped with a message, except when the environment variable
// CI is "true": then a missing PostgreSQL is a test failure. Every server
// also has an md5 user and a SCRAM user (MD5User, SCRAMUser) for
// authentication tests, and a plain login role with a SCRAM password
// (LookupUser), e.g. a pooler's auth_user.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgserver"
)

// Users made in every server, with passwords stored in the named format,
// for authentication tests. The superuser "postgres" has no password and
// is trusted on the socket and on 127.0.0.1.
const (
	MD5User       = "md5user"
	MD5Password   = "md5-secret"
	SCRAMUser     = "scramuser"
	SCRAMPassword = "scram-secret"
	// LookupUser is no superuser; over TCP it logs in with SCRAM.
	LookupUser     = "lookupuser"
	LookupPassword = "lookup-secret"
	SuperUser      = pgserver.SuperUser
	Database       = pgserver.Database
)

// Server is a running throwaway PostgreSQL (package pgserver).
type Server = pgserver.Server

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

func unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, pgserver.ErrNoBinaries) && os.Getenv("CI") != "true" {
		t.Skipf("pgtest: %v (set CI=true to make this a failure)", err)
	}
	t.Fatalf("pgtest: %v", err)
}

func start() (*Server, error) {
	s, err := pgserver.New(context.Background(), pgserver.Options{
		DirPrefix: "pgtest-",
		HBA: []string{
			"host all " + MD5User + " 127.0.0.1/32 md5",
			"host all " + SCRAMUser + " 127.0.0.1/32 scram-sha-256",
			"host all " + LookupUser + " 127.0.0.1/32 scram-sha-256",
		},
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Exec(ctx, fmt.Sprintf(`
SET password_encryption = 'md5';
CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s';
SET password_encryption = 'scram-sha-256';
CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s';
CREATE ROLE %s LOGIN PASSWORD '%s';`, MD5User, MD5Password, SCRAMUser, SCRAMPassword, LookupUser, LookupPassword)); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}
