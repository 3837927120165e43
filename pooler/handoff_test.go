package pooler_test

// Hand-offs between the drivers and internal queries on a server, found
// by TestSoak: each keeps the protocol state it must, on both relays.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// connApp opens a client with application_name app (unless "") in mode.
func (qp *quietProxy) connApp(t *testing.T, app string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(qp.url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	if app != "" {
		cfg.RuntimeParams["application_name"] = app
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// A client handed from an event loop to a goroutine because its server
// needed setting up (another application_name) must have its next
// statement judged afresh: the verdict on the message that asked for the
// server belongs to that message alone. Before, the loop's held verdict
// outlived the hand-off and was given to a later SET, which then was
// neither replayed nor cleaned and reached the other client.
func TestVerdictDoesNotOutliveHandOff(t *testing.T) {
	for _, relay := range quietRelays {
		for _, policy := range []pooler.Policy{pooler.PolicyPreserve, pooler.PolicyReset} {
			t.Run(fmt.Sprintf("%s/%s", relay, policy), func(t *testing.T) {
				t.Parallel()
				qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: policy})
				a := qp.connApp(t, "a", pgx.QueryExecModeSimpleProtocol)
				b := qp.connApp(t, "b", pgx.QueryExecModeSimpleProtocol)
				for range 3 {
					answered(t, b, "SELECT 'b'", "b")
					answered(t, a, "SELECT 'a'", "a") // the server must be given application_name a
					time.Sleep(quietGap)              // a goes back to a loop
					exec(t, a, "SET soak.owner = 'a'")
					answered(t, b, "SELECT coalesce(current_setting('soak.owner', true), '')", "")
					want := "a"
					if policy == pooler.PolicyReset {
						want = "" // reset: cleaned at the release, for the client too
					}
					answered(t, a, "SELECT coalesce(current_setting('soak.owner', true), '')", want)
					exec(t, a, "RESET soak.owner")
				}
				qp.settled(t)
			})
		}
	}
}

// The pooler's own simple Queries on a server (the settings it reads back
// and resets under preserve) drop the server's unnamed statement: a client
// whose next Bind uses its unnamed statement must get it parsed again.
func TestUnnamedStatementAfterInternalQuery(t *testing.T) {
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1})
			c := qp.connApp(t, "x", pgx.QueryExecModeDescribeExec)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for i := range 5 {
				if _, err := c.Exec(ctx, "SET soak.owner = 'x'", pgx.QueryExecModeSimpleProtocol); err != nil {
					t.Fatal(err)
				}
				var got int
				if err := c.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&got); err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				if got != i+1 {
					t.Fatalf("round %d: %d", i, got)
				}
			}
			qp.settled(t)
		})
	}
}

// A statement larger than the client's read buffer is classified whole:
// a session SET padded past the buffer, sent as a simple Query and as an
// extended-protocol Parse, with and without prepared-statement tracking,
// follows its client and never reaches the next one on the server.
func TestLargeStatementClassified(t *testing.T) {
	pad := "/* " + strings.Repeat("x", 40<<10) + " */"
	for _, relay := range quietRelays {
		for _, maxPrepared := range []int{200, -1} {
			for _, extended := range []bool{false, true} {
				name := fmt.Sprintf("%s/prepared%d/extended=%v", relay, max(maxPrepared, 0), extended)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, MaxPreparedStatements: maxPrepared})
					a := qp.conn(t)
					b := qp.conn(t)
					sql := "SET search_path = big_a " + pad
					if extended {
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						// An unnamed Parse, Bind, Execute, Sync.
						if _, err := a.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Close(); err != nil {
							t.Fatal(err)
						}
					} else {
						exec(t, a, sql)
					}
					answered(t, b, "SHOW search_path", `"$user", public`)
					answered(t, a, "SHOW search_path", "big_a")
					qp.settled(t)
				})
			}
		}
	}
}

// A server that must be set up for its client (another application_name,
// the settings that follow the client under preserve) is set up by the
// event loop itself, a server logged in for a loop's client logs in aside
// while the client stays on its loop, and a server released with session
// state on it is cleaned (its settings read back) by the loop: none of
// them hands the client to a goroutine.
func TestSetUpOnLoop(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: pooler.RelayLoop, PoolSize: 1, OnSessionState: pooler.PolicyPreserve})
			a := qp.connApp(t, "a", mode)
			b := qp.connApp(t, "b", mode)
			for range 5 {
				answered(t, a, "SELECT current_setting('application_name')", "a")
				answered(t, b, "SELECT current_setting('application_name')", "b")
			}
			exec(t, a, "SET soak.owner = 'a'") // follows a: read back and reset at the release, on the loop
			answered(t, b, "SELECT coalesce(current_setting('soak.owner', true), '')", "")
			for range 3 {
				waitOnLoops(t, qp, 2)
				// The server must be given a's setting and name again.
				answered(t, a, "SELECT current_setting('soak.owner') || current_setting('application_name')", "aa")
				waitOnLoops(t, qp, 2)
				answered(t, b, "SELECT coalesce(current_setting('soak.owner', true), '') || current_setting('application_name')", "b")
			}
			qp.settled(t)
		})
	}
}

// A setup query that fails on the server (a setting that follows the
// client names a role dropped meanwhile) closes that client with the
// server's error, and the server serves the next client.
func TestSetUpFails(t *testing.T) {
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: pooler.PolicyPreserve})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			role := fmt.Sprintf("setup_fails_%d", qp.key)
			direct, err := pgx.Connect(ctx, qp.srv.SocketURL(pgtest.SuperUser))
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close(ctx)
			if _, err := direct.Exec(ctx, "CREATE ROLE "+role); err != nil {
				t.Fatal(err)
			}
			a := qp.connApp(t, "a", pgx.QueryExecModeSimpleProtocol)
			exec(t, a, "SET ROLE "+role) // follows a: read back at the release
			b := qp.connApp(t, "b", pgx.QueryExecModeSimpleProtocol)
			answered(t, b, "SELECT current_user::text", pgtest.SuperUser)
			if _, err := direct.Exec(ctx, "DROP ROLE "+role); err != nil {
				t.Fatal(err)
			}
			waitOnLoops(t, qp, 2)
			var got string
			err = a.QueryRow(ctx, "SELECT current_user::text").Scan(&got)
			if err == nil || !strings.Contains(err.Error(), role) {
				t.Fatalf("a's query after its role was dropped: %q, %v; want the server's error naming the role", got, err)
			}
			if err := a.Ping(ctx); err == nil {
				t.Error("a is still open after its setup failed")
			}
			answered(t, b, "SELECT current_user::text", pgtest.SuperUser)
			c := qp.connApp(t, "c", pgx.QueryExecModeSimpleProtocol)
			answered(t, c, "SELECT current_user::text || current_setting('application_name')", pgtest.SuperUser+"c")
			qp.settled(t)
		})
	}
}

// waitOnLoops waits until n clients are on an event loop.
func waitOnLoops(t *testing.T, qp *quietProxy, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for pooler.ClientsOnLoops(qp.Proxy) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients on the event loops, want %d", pooler.ClientsOnLoops(qp.Proxy), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
