package pooler_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// Messages larger than the read buffers go through the event loop both
// ways: statements the classifier reads whole (gathered), binds and COPY
// data streamed as they arrive, statements past the classifier's limit,
// and answers larger than the server read buffer; the pooler's own
// answers (tracked prepared statements) and the policy keep working
// around them, and no client leaves its loop.
func TestLargeMessagesOnLoop(t *testing.T) {
	for _, relay := range quietRelays {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			t.Run(fmt.Sprintf("%s/%s", relay, mode), func(t *testing.T) {
				t.Parallel()
				qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: pooler.PolicyPreserve})
				a := qp.connApp(t, "a", mode)
				b := qp.connApp(t, "b", mode)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				for i, size := range []int{9 << 10, 40 << 10, 300 << 10, 1<<20 + 5000} {
					big := strings.Repeat(string(rune('a'+i)), size)
					// A statement whose text is large: classified whole up
					// to 1 MiB, streamed past it.
					var n int
					if err := a.QueryRow(ctx, "SELECT length('"+big+"')").Scan(&n); err != nil || n != size {
						t.Fatalf("a statement of %d bytes: %d, %v", size, n, err)
					}
					// A large parameter (Bind) and a large answer.
					var echo string
					if err := b.QueryRow(ctx, "SELECT $1::text", big).Scan(&echo); err != nil || echo != big {
						t.Fatalf("an echo of %d bytes: %d bytes back, %v", size, len(echo), err)
					}
					// Session state set by a large statement is seen.
					exec(t, a, "SET application_name = '"+big[:60]+"' -- "+big)
					answered(t, a, "SELECT current_setting('application_name')", big[:60])
					answered(t, b, "SELECT current_setting('application_name')", "b")
				}
				// COPY FROM STDIN with rows larger than the read buffer.
				exec(t, a, "CREATE TEMP TABLE big_copy (v text)")
				row := strings.Repeat("z", 50<<10)
				tag, err := a.PgConn().CopyFrom(ctx, strings.NewReader(strings.Repeat(row+"\n", 20)), "COPY big_copy FROM STDIN")
				if err != nil || tag.RowsAffected() != 20 {
					t.Fatalf("COPY of 20 rows of 50 KiB: %v, %v", tag, err)
				}
				answered(t, a, "SELECT sum(length(v))::text FROM big_copy", fmt.Sprint(20*len(row)))
				exec(t, a, "DROP TABLE big_copy")
				answered(t, b, "SELECT 'still served'", "still served")
				qp.settled(t)
			})
		}
	}
}

// A client that leaves in the middle of a large message leaves its server
// with half a message: the server is closed, never given to the next
// client.
func TestLeaveInsideLargeMessage(t *testing.T) {
	for _, relay := range quietRelays {
		t.Run(string(relay), func(t *testing.T) {
			t.Parallel()
			qp := startWith(t, pooler.Config{Relay: relay, PoolSize: 1, OnSessionState: pooler.PolicyPreserve})
			c := qp.conn(t)
			answered(t, c, "SELECT 'warm'", "warm")
			c.Close(context.Background())
			cfg, err := pgx.ParseConfig(qp.url)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range []byte{'Q', 'B'} {
				conn, err := net.Dial("tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)))
				if err != nil {
					t.Fatal(err)
				}
				fe := pgproto3.NewFrontend(conn, conn)
				fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": cfg.User, "database": cfg.Database}})
				if err := fe.Flush(); err != nil {
					t.Fatal(err)
				}
				for {
					m, err := fe.Receive()
					if err != nil {
						t.Fatal(err)
					}
					if _, ok := m.(*pgproto3.ReadyForQuery); ok {
						break
					}
				}
				// Half of a 100 KiB message, then the client is gone.
				head := make([]byte, 5, 50<<10)
				head[0] = typ
				head[1], head[2], head[3], head[4] = 0, 1, 0x90, 4 // 100,356 bytes
				if typ == 'B' {
					head = append(head, 0, 0, 0, 0, 0, 1, 0, 1, 0x87, 0xf7) // one parameter of 100,343 bytes
				} else {
					head = append(head, "SELECT '"...)
				}
				head = append(head, strings.Repeat("x", cap(head)-len(head))...)
				conn.Write(head)
				time.Sleep(50 * time.Millisecond)
				conn.Close()
				d := qp.conn(t)
				answered(t, d, "SELECT 'next client served'", "next client served")
				d.Close(context.Background())
			}
			qp.settled(t)
		})
	}
}
