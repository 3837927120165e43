package drivers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// The psycopg 3 variants of TestDrivers fail through the pooler; these are
// the message sequences they reduce to. Each runs straight against
// PostgreSQL first (where it must pass, or the test is wrong) and then
// through a proxy configured as in TestDrivers.

// protocolCase runs fn against PostgreSQL (p nil) and then through the
// pooler p.
func protocolCase(t *testing.T, fn func(t *testing.T, url string, p *pooler.Proxy)) {
	srv := pgtest.Shared(t)
	t.Run("direct", func(t *testing.T) { fn(t, pgURL("127.0.0.1", srv.Port), nil) })
	t.Run("pooler", func(t *testing.T) {
		p, port := startProxy(t, srv)
		fn(t, pgURL("127.0.0.1", port), p)
	})
}

// serversReleased waits up to 2 seconds for p to have no server attached
// to a client.
func serversReleased(t *testing.T, p *pooler.Proxy, when string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		active := 0
		for _, ps := range p.Snapshot().Pools {
			active += ps.ServersActive
		}
		if active == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %d servers still attached to a client after 2s", when, active)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// connect opens a connection, closed when the test ends.
func connect(t *testing.T, url string) (*pgconn.PgConn, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	c, err := pgconn.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, ctx
}

// TestProtocolDeallocateAllExtended: DEALLOCATE ALL sent with the extended
// protocol (Parse/Bind/Execute/Sync, as psycopg 3 sends it after every
// rollback of a connection that has prepared statements) drops every
// statement on the server, but the pooler only notices a DEALLOCATE ALL in
// a simple Query. The client's statement map keeps its names (a new
// Parse of the same name is refused with 42P05) and the server's cache
// keeps names the server no longer has (26000 on the next Bind, for every
// client that shares the statement on that server).
func TestProtocolDeallocateAllExtended(t *testing.T) {
	protocolCase(t, func(t *testing.T, url string, p *pooler.Proxy) {
		c, ctx := connect(t, url)
		if _, err := c.Prepare(ctx, "s1", "SELECT $1::int + 1", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.ExecPrepared(ctx, "s1", [][]byte{[]byte("1")}, nil, nil).Read().Err; err != nil {
			t.Fatal(err)
		}
		if err := c.ExecParams(ctx, "DEALLOCATE ALL", nil, nil, nil, nil).Read().Err; err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prepare(ctx, "s1", "SELECT $1::int + 1", nil); err != nil {
			t.Errorf("Parse s1 after an extended-protocol DEALLOCATE ALL: %v", err)
		}
		if err := c.ExecPrepared(ctx, "s1", [][]byte{[]byte("1")}, nil, nil).Read().Err; err != nil {
			t.Errorf("Bind s1 after an extended-protocol DEALLOCATE ALL: %v", err)
		}
	})
}

// TestProtocolDeallocateName: SQL DEALLOCATE of a protocol-level statement
// (psycopg 3 sends `DEALLOCATE _pg3_N` when a statement leaves its cache of
// prepared_max statements, 100 by default) reaches the server with the
// client's name, which the server does not know (it holds pgpc_…).
func TestProtocolDeallocateName(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(map[bool]string{false: "simple", true: "extended"}[extended], func(t *testing.T) {
			protocolCase(t, func(t *testing.T, url string, p *pooler.Proxy) {
				c, ctx := connect(t, url)
				if _, err := c.Prepare(ctx, "s1", "SELECT $1::int + 1", nil); err != nil {
					t.Fatal(err)
				}
				var err error
				if extended {
					err = c.ExecParams(ctx, "DEALLOCATE s1", nil, nil, nil, nil).Read().Err
				} else {
					_, err = c.Exec(ctx, "DEALLOCATE s1").ReadAll()
				}
				if err != nil {
					t.Errorf("DEALLOCATE s1: %v", err)
				}
				if _, err := c.Prepare(ctx, "s1", "SELECT $1::int + 2", nil); err != nil {
					t.Errorf("Parse s1 after DEALLOCATE s1: %v", err)
				}
				if err := c.ExecPrepared(ctx, "s1", [][]byte{[]byte("1")}, nil, nil).Read().Err; err != nil {
					t.Errorf("Bind s1 after DEALLOCATE s1: %v", err)
				}
			})
		})
	}
}

// TestProtocolErrorBeforeSync: in a pipeline (psycopg 3's pipeline mode,
// libpq's), the client reads an error before it sends the Sync and keeps
// sending. The server skips every message up to the Sync and answers only
// the Sync, but the pooler queued a pending response for each of them:
// they are never popped, the pooler's own answers queued behind them are
// never sent (the ParseComplete of step 3 is lost), a named Parse the
// server skipped stays in the pooler's maps (step 4: 26000 for pgpc_…),
// and at each ReadyForQuery "responses pending at release; server kept"
// keeps the server with this client for good, so a pool of 2 starves after
// two such clients.
func TestProtocolErrorBeforeSync(t *testing.T) {
	protocolCase(t, func(t *testing.T, url string, p *pooler.Proxy) {
		c, _ := connect(t, url)
		c.Conn().SetDeadline(time.Now().Add(10 * time.Second))
		fe := c.Frontend()
		// 1. A failing statement, Flush: the error comes back.
		fe.Send(&pgproto3.Parse{Query: "SELECT 1/0"})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Flush{})
		expectMessages(t, fe, "1", "ParseComplete ErrorResponse(22012)")
		// 2. More messages, then Sync: the server skips them.
		fe.Send(&pgproto3.Parse{Name: "s2", Query: "SELECT 2"})
		fe.Send(&pgproto3.Bind{PreparedStatement: "s2"})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		expectMessages(t, fe, "2", "ReadyForQuery(I)")
		// 3. The skipped statement, prepared again.
		fe.Send(&pgproto3.Parse{Name: "s2", Query: "SELECT 2"})
		fe.Send(&pgproto3.Sync{})
		expectMessages(t, fe, "3", "ParseComplete ReadyForQuery(I)")
		// 4. And run.
		fe.Send(&pgproto3.Bind{PreparedStatement: "s2"})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		expectMessages(t, fe, "4", "BindComplete DataRow CommandComplete ReadyForQuery(I)")
		if p != nil {
			// Idle between transactions: the server is back in the pool.
			serversReleased(t, p, "client idle")
			c.Close(context.Background())
			serversReleased(t, p, "client gone")
		}
	})
}

// expectMessages flushes fe and reads up to a ReadyForQuery or an
// ErrorResponse (whichever want ends with), comparing the message types.
func expectMessages(t *testing.T, fe *pgproto3.Frontend, step, want string) {
	t.Helper()
	if err := fe.Flush(); err != nil {
		t.Fatalf("step %s: %v", step, err)
	}
	untilError := strings.HasSuffix(want, ")") && strings.Contains(want[strings.LastIndexByte(want, ' ')+1:], "ErrorResponse")
	var got []string
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatalf("step %s: %v after %v (want %s)", step, err, got, want)
		}
		name := fmt.Sprintf("%T", m)
		name = name[strings.LastIndexByte(name, '.')+1:]
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			name += "(" + m.Code + ")"
		case *pgproto3.ReadyForQuery:
			name += "(" + string(m.TxStatus) + ")"
		}
		got = append(got, name)
		_, rfq := m.(*pgproto3.ReadyForQuery)
		_, isErr := m.(*pgproto3.ErrorResponse)
		if rfq || (isErr && untilError) {
			break
		}
	}
	if g := strings.Join(got, " "); g != want {
		t.Errorf("step %s: got %s, want %s", step, g, want)
	}
}
