package pooler

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// tool returns a client program or skips (fails under CI=true).
func tool(t *testing.T, srv *pgtest.Server, name string) string {
	t.Helper()
	p := srv.Tool(name)
	if p == "" {
		pgtest.Optional(t, name, "install PostgreSQL's client programs", "not found")
	}
	return p
}

const psqlScript = `
\set ON_ERROR_STOP 0
DROP TABLE IF EXISTS psqltest;
CREATE TABLE psqltest (id int PRIMARY KEY, note text);
BEGIN;
INSERT INTO psqltest SELECT g, 'row ' || g FROM generate_series(1, 100) g;
SELECT count(*) AS in_tx FROM psqltest;
COMMIT;
BEGIN;
INSERT INTO psqltest VALUES (1, 'duplicate');
SELECT 'not run';
ROLLBACK;
COPY psqltest (id, note) FROM STDIN;
1001	copied one
1002	copied two
\.
SELECT count(*) AS total FROM psqltest;
\copy (SELECT id, note FROM psqltest WHERE id > 1000 ORDER BY id) TO STDOUT
SELECT $$multi
line$$ AS text;
DROP TABLE psqltest;
`

// TestPsqlScript runs a psql script with transactions, an error inside a
// transaction and COPY through a pool of 1 while another psql runs.
func TestPsqlScript(t *testing.T) {
	srv := pgtest.Shared(t)
	psql := tool(t, srv, "psql")
	tp := startProxy(t, srv, Config{PoolSize: 1})
	busy := exec.Command(psql, "-X", "-q", "-c", `SELECT pg_sleep(0.01) FROM generate_series(1, 30)`, tp.url(pgtest.SuperUser, ""))
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(psql, "-X", "-A", "-t", "-f", "-", tp.url(pgtest.SuperUser, ""))
	cmd.Stdin = strings.NewReader(psqlScript)
	out, err := cmd.CombinedOutput()
	busy.Wait()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"100\n", "duplicate key value violates unique constraint", "current transaction is aborted", "102\n", "1001\tcopied one\n1002\tcopied two\n", "multi\nline\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("psql output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "not run\n") {
		t.Errorf("a statement ran inside an aborted transaction:\n%s", got)
	}
}

// TestPgbench runs pgbench -S in simple and extended mode with 20 clients
// through a pool of 5 and requires zero errors.
func TestPgbench(t *testing.T) {
	srv := pgtest.Shared(t)
	pgbench := tool(t, srv, "pgbench")
	init := exec.Command(pgbench, "-i", "-q", "-s", "1", srv.SocketURL(pgtest.SuperUser))
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	tp := startProxy(t, srv, Config{PoolSize: 5})
	for _, mode := range []string{"simple", "extended"} {
		t.Run(mode, func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command(pgbench, "-n", "-S", "-M", mode, "-c", "20", "-j", "2", "-t", "200", tp.url(pgtest.SuperUser, ""))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pgbench: %v\n%s", err, out)
			}
			s := checkPgbench(t, out, 4000)
			t.Logf("pgbench -M %s: %v, %s", mode, time.Since(start).Round(time.Millisecond), firstLine(s, "tps"))
			if open := tp.poolOpen(); open > 5 {
				t.Fatalf("%d servers open, pool size 5", open)
			}
		})
	}
}

// checkPgbench fails the test unless pgbench's output says it processed
// all of want transactions with none failed; it returns the output.
func checkPgbench(t *testing.T, out []byte, want int) string {
	t.Helper()
	s := string(out)
	m := regexp.MustCompile(`number of transactions actually processed: (\d+)/(\d+)`).FindStringSubmatch(s)
	if w := strconv.Itoa(want); m == nil || m[1] != w || m[2] != w {
		t.Fatalf("pgbench did not process %d/%d:\n%s", want, want, s)
	}
	if m := regexp.MustCompile(`number of failed transactions: (\d+)`).FindStringSubmatch(s); m != nil && m[1] != "0" {
		t.Fatalf("pgbench failures:\n%s", s)
	}
	return s
}

func firstLine(s, substr string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return fmt.Sprintf("(no %q line)", substr)
}
