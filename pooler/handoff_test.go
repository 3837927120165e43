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
