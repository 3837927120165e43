package pooler

import (
	"fmt"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// rawLogin connects to the proxy with a bare protocol frontend and logs in
// as the superuser (trust), reading up to the first ReadyForQuery.
func rawLogin(t *testing.T, tp *testProxy, params map[string]string) (*pgproto3.Frontend, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tp.port))
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fe := pgproto3.NewFrontend(conn, conn)
	p := map[string]string{"user": pgtest.SuperUser, "database": pgtest.Database}
	for k, v := range params {
		p[k] = v
	}
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: p})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			t.Fatalf("login: %s %s", m.Code, m.Message)
		case *pgproto3.ReadyForQuery:
			return fe, conn
		}
	}
}

// expectTypes receives messages and checks their types by name.
func expectTypes(t *testing.T, fe *pgproto3.Frontend, names ...string) {
	t.Helper()
	for _, want := range names {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("want %s: %v", want, err)
		}
		got := reflect.TypeOf(msg).Elem().Name()
		if got != want {
			if e, ok := msg.(*pgproto3.ErrorResponse); ok {
				t.Fatalf("want %s, got ErrorResponse %s %s", want, e.Code, e.Message)
			}
			t.Fatalf("want %s, got %s", want, got)
		}
	}
}

// receiveError reads until an ErrorResponse and returns it, failing the
// test at EOF without one.
func receiveError(t *testing.T, fe *pgproto3.Frontend) *pgproto3.ErrorResponse {
	t.Helper()
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("no ErrorResponse before %v", err)
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			return e
		}
	}
}

// TestFunctionCallAndTerminate covers the FunctionCall message, a
// Terminate inside a transaction (rolled back) and a client that leaves
// in the middle of an unsynced extended query (its server is closed, not
// reused).
func TestFunctionCallAndTerminate(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	direct := directConn(t, srv)
	ctx := testCtx(t, 30*time.Second)
	if _, err := direct.Exec(ctx, "DROP TABLE IF EXISTS termtest; CREATE TABLE termtest (v int)"); err != nil {
		t.Fatal(err)
	}
	var oid uint32
	if err := direct.QueryRow(ctx, "SELECT 'pg_backend_pid'::regproc::oid").Scan(&oid); err != nil {
		t.Fatal(err)
	}

	fe, conn := rawLogin(t, tp, nil)
	fe.Send(&pgproto3.FunctionCall{Function: oid, ResultFormatCode: 0})
	fe.Flush()
	expectTypes(t, fe, "FunctionCallResponse", "ReadyForQuery")
	// Terminate inside a transaction.
	fe.Send(&pgproto3.Query{String: "BEGIN; INSERT INTO termtest VALUES (1)"})
	fe.Flush()
	expectTypes(t, fe, "CommandComplete", "CommandComplete", "ReadyForQuery")
	fe.Send(&pgproto3.Terminate{})
	fe.Flush()
	conn.Close()

	// An unsynced extended query, then gone.
	fe, conn = rawLogin(t, tp, nil)
	fe.Send(&pgproto3.Parse{Name: "leftover", Query: "INSERT INTO termtest VALUES (2)"})
	fe.Send(&pgproto3.Bind{PreparedStatement: "leftover"})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Flush{})
	fe.Flush()
	expectTypes(t, fe, "ParseComplete", "BindComplete", "CommandComplete")
	conn.Close()

	c := tp.connect(t, pgx.QueryExecModeExec)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM termtest").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after Terminate / vanish: %d, %v", n, err)
	}
	var stmts int
	c.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements").Scan(&stmts)
	if stmts != 0 {
		t.Fatalf("the next client's server holds %d prepared statements of a gone client", stmts)
	}
}
