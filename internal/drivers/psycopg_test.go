package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxytest"
	"github.com/pgpoolcheck/pgpoolcheck/internal/sessionstate"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// TestPsycopgCases runs the cases of testdata/psycopg3_cases.py with
// Debian's psycopg 3 through the pooler in transaction mode with a pool of
// one server, on both relays, and directly against PostgreSQL (where
// each case passes too, so that a failure through the pooler is the
// pooler's):
//
//   - left-in-transaction: a client that prepared statements and left
//     inside its transaction; the next client counts its own statements
//     in pg_prepared_statements and finds none of the other's;
//   - change-type-savepoint, change-type-rollback, change-type-left:
//     psycopg's test_change_type_savepoint and test_change_type_execute
//     (a type and a table made, used by a prepared INSERT and rolled
//     back), and a client that drops and makes them again inside a
//     transaction it leaves; then another client makes them again and
//     prepares the same INSERT, which must not find a statement planned
//     against the type that is gone ("cache lookup failed for type N").
func TestPsycopgCases(t *testing.T) {
	v := variant{name: "psycopg3/cases", runtime: "python", module: "psycopg", script: "psycopg3_cases.py"}
	rt := runtimeFor(t, v)
	py := rt.runner.(python)
	srv := pgtest.Shared(t)
	cases := []string{"left-in-transaction", "change-type-savepoint", "change-type-rollback", "change-type-left"}
	run := func(t *testing.T, port int, c, suffix string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py.interp, filepath.Join(py.dir, v.script), pgURL("127.0.0.1", port), c, suffix)
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var res struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
			t.Fatalf("%s: no JSON result: %v\n%s", c, err, out)
		}
		if !res.OK {
			t.Errorf("%s: %s", c, res.Error)
		}
	}
	t.Run("direct", func(t *testing.T) {
		for i, c := range cases {
			run(t, srv.Port, c, fmt.Sprintf("d%d", i))
		}
	})
	for _, relay := range []pooler.Relay{pooler.RelayLoop, pooler.RelayBridged} {
		t.Run(string(relay), func(t *testing.T) {
			level := slog.LevelWarn
			if os.Getenv("DRIVERS_DEBUG") != "" {
				level = slog.LevelDebug
			}
			p, port := proxytest.Start(t, pooler.Config{
				Upstream:         srv.SocketURL(pgtest.SuperUser),
				Mode:             pooler.ModeTransaction,
				Relay:            relay,
				PoolSize:         1,
				QueryWaitTimeout: 15 * time.Second,
				Logger:           slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level})),
				Classifier:       sessionstate.New(),
				OnSessionState:   pooler.PolicyPreserve,
			}, 20*time.Second)
			for i, c := range cases {
				run(t, port, c, fmt.Sprintf("%s%d", relay, i))
			}
			t.Logf("servers opened %d", p.Snapshot().ServersOpened)
		})
	}
}
