package pooler

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// slowReader hands out at most chunk bytes per Read and sleeps every
// time, so that the pooler's writes to the client back up.
type slowReader struct {
	r     io.Reader
	chunk int
	pause time.Duration
}

func (s *slowReader) Read(b []byte) (int, error) {
	time.Sleep(s.pause)
	if len(b) > s.chunk {
		b = b[:s.chunk]
	}
	return s.r.Read(b)
}

// TestSlowClientLargeResults runs results that back up in the pooler: a
// client that reads 24 MB of rows slowly (the event loop stops relaying
// its server while the client's socket is full, and goes on when it
// drains), then rows larger than the server read buffer (streamed by the
// loop as they arrive, also while the client's socket is full). A second
// client waits for the single server meanwhile and is served once the
// first is done.
func TestSlowClientLargeResults(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 60*time.Second)
	_, conn := rawLogin(t, tp, nil)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(50 * time.Second))
	fe := pgproto3.NewFrontend(bufio.NewReaderSize(&slowReader{r: conn, chunk: 32 << 10, pause: 200 * time.Microsecond}, 64<<10), conn)

	// query sends q and checks its rows: n rows whose first column counts
	// from 1 and whose second has width bytes.
	query := func(q string, n, width int) {
		t.Helper()
		fe.Send(&pgproto3.Query{String: q})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		rows := 0
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatalf("%s: after %d rows: %v", q, rows, err)
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				rows++
				if got := string(m.Values[0]); got != strconv.Itoa(rows) || len(m.Values[1]) != width {
					t.Fatalf("%s: row %d is %q with %d bytes", q, rows, got, len(m.Values[1]))
				}
			case *pgproto3.ErrorResponse:
				t.Fatalf("%s: %s %s", q, m.Code, m.Message)
			case *pgproto3.ReadyForQuery:
				if rows != n {
					t.Fatalf("%s: %d rows, want %d", q, rows, n)
				}
				return
			}
		}
	}

	other := make(chan error, 1)
	go func() {
		time.Sleep(50 * time.Millisecond) // while the first client reads
		c, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
		if err != nil {
			other <- err
			return
		}
		defer c.Close(context.Background())
		var v int
		if err := c.QueryRow(ctx, "SELECT 41 + 1").Scan(&v); err != nil || v != 42 {
			other <- fmt.Errorf("second client: %d, %v", v, err)
			return
		}
		other <- nil
	}()
	query("SELECT g, repeat('x', 100) FROM generate_series(1, 200000) g", 200000, 100)
	query("SELECT g, repeat('y', 100000) FROM generate_series(1, 40) g", 40, 100000)
	query("SELECT g, 'z' FROM generate_series(1, 3) g", 3, 1)
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], 4)
	conn.Write(append([]byte{'X'}, b[:]...))
}

// TestWaiterGetsSlotOfLostServer checks that a client waiting for the
// only server gets a new one when that server dies: the freed slot goes
// to the waiter (on the event loop: a message that hands it to a
// goroutine, which logs a server in).
func TestWaiterGetsSlotOfLostServer(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	direct := directConn(t, srv)
	a := tp.connect(t, pgx.QueryExecModeExec)
	b := tp.connect(t, pgx.QueryExecModeExec)
	aerr := make(chan error, 1)
	go func() { _, err := a.Exec(ctx, "SELECT pg_sleep(20)"); aerr <- err }()
	if !waitFor(5*time.Second, func() bool { return activeQueries(t, direct, "SELECT pg_sleep(20)") == 1 }) {
		t.Fatal("query did not start")
	}
	bres := make(chan error, 1)
	go func() {
		var n int
		err := b.QueryRow(ctx, "SELECT 40 + 2").Scan(&n)
		if err == nil && n != 42 {
			err = fmt.Errorf("got %d", n)
		}
		bres <- err
	}()
	time.Sleep(200 * time.Millisecond) // b waits for the server
	if _, err := direct.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(20)'"); err != nil {
		t.Fatal(err)
	}
	if err := <-aerr; err == nil {
		t.Error("no error for the client whose server was terminated")
	}
	select {
	case err := <-bres:
		if err != nil {
			t.Fatalf("waiting client: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting client got no server after the only one died")
	}
}

// TestWaiterLeavesWhileWaiting checks a client that sends a query and
// disconnects while it waits for the only server: when the server comes
// free it is not lost (the departed client's query runs and the server
// is cleaned up and released), and the next client gets it.
func TestWaiterLeavesWhileWaiting(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	ctx := testCtx(t, 30*time.Second)
	a := tp.connect(t, pgx.QueryExecModeExec)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	// b asks for the server held by a's transaction, then leaves.
	fe, conn := rawLogin(t, tp, nil)
	fe.Send(&pgproto3.Query{String: "SELECT 'left behind'"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	conn.Close()
	time.Sleep(100 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c := tp.connect(t, pgx.QueryExecModeExec)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var v string
	if err := c.QueryRow(cctx, "SELECT 'next'").Scan(&v); err != nil || v != "next" {
		t.Fatalf("the next client: %q, %v", v, err)
	}
	if open := tp.poolOpen(); open != 1 {
		t.Errorf("%d servers open, want the one", open)
	}
	if !waitFor(5*time.Second, func() bool { return tp.clientCount() == 2 }) {
		t.Errorf("%d clients counted, want 2 (the one that left is gone)", tp.clientCount())
	}
}

// TestLoopShortWrites runs traffic with every write of the event loop cut
// short (shortWrites): whatever a socket did not take must reach it once
// it is writable, so a path that forgets to watch for that hangs here.
func TestLoopShortWrites(t *testing.T) {
	srv := pgtest.Shared(t)
	shortWrites.Store(7)
	t.Cleanup(func() { shortWrites.Store(0) })
	tp := startProxy(t, srv, Config{PoolSize: 2})
	pgxNoCrossTalk(t, tp, "short/")
	ctx := testCtx(t, 30*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	var n, sum int64
	if err := c.QueryRow(ctx, "SELECT count(*), sum(length(x)) FROM (SELECT repeat('x', g % 500) AS x FROM generate_series(1, 2000) g) s").Scan(&n, &sum); err != nil || n != 2000 {
		t.Fatalf("aggregate: %d, %v", n, err)
	}
	rows, err := c.Query(ctx, "SELECT g, repeat('y', g % 300) FROM generate_series(1, 3000) g")
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for rows.Next() {
		var g int
		var y string
		if err := rows.Scan(&g, &y); err != nil || g != k+1 || len(y) != g%300 {
			t.Fatalf("row %d: %d %d %v", k+1, g, len(y), err)
		}
		k++
	}
	if rows.Err() != nil || k != 3000 {
		t.Fatalf("%d rows, %v", k, rows.Err())
	}
}

// TestMessagesArriveWhileWaiting: a client waiting for the only server
// goes on sending (a second Query in a separate write, and an
// extended-protocol round trip in pieces). The loop reads nothing more
// after a wait unless the socket reported new bytes meanwhile, so this
// checks that those bytes are still relayed once the client gets the
// server; then a Query pipelined behind a finished transaction.
func TestMessagesArriveWhileWaiting(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 1})
	holder, hconn := rawLogin(t, tp, nil)
	defer hconn.Close()
	holder.Send(&pgproto3.Query{String: "BEGIN"})
	if err := holder.Flush(); err != nil {
		t.Fatal(err)
	}
	expectTypes(t, holder, "CommandComplete", "ReadyForQuery")

	fe, conn := rawLogin(t, tp, nil)
	defer conn.Close()
	send := func(msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond) // a separate read for the pooler
	}
	send(&pgproto3.Query{String: "SELECT 1"})
	send(&pgproto3.Query{String: "SELECT 2"})
	send(&pgproto3.Parse{Query: "SELECT $1::int + 1"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("2")}})
	send(&pgproto3.Execute{}, &pgproto3.Sync{})

	holder.Send(&pgproto3.Query{String: "COMMIT"})
	if err := holder.Flush(); err != nil {
		t.Fatal(err)
	}
	expectTypes(t, holder, "CommandComplete", "ReadyForQuery")

	want := []string{"1", "2", "3"}
	for len(want) > 0 {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("still waiting for %v: %v", want, err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			if got := string(m.Values[0]); got != want[0] {
				t.Fatalf("got %s, want %s", got, want[0])
			}
			want = want[1:]
		case *pgproto3.ErrorResponse:
			t.Fatalf("%s %s", m.Code, m.Message)
		}
	}
	expectTypes(t, fe, "CommandComplete", "ReadyForQuery")

	// A transaction and the next Query in one write: the second is
	// buffered when the first releases the server.
	fe.Send(&pgproto3.Query{String: "SELECT 4"})
	fe.Send(&pgproto3.Query{String: "SELECT 5"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expectTypes(t, fe, "RowDescription", "DataRow", "CommandComplete", "ReadyForQuery",
		"RowDescription", "DataRow", "CommandComplete", "ReadyForQuery")
}

// TestKillDuringHandOff: a client ended (KILL) after it named its loop and
// before the loop adopted it is closed with its FATAL once adopted: the
// loop ignores the msgKill that reaches it first, and adopt looks at the
// FATAL set before.
func TestKillDuringHandOff(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{})
	ctx := testCtx(t, 30*time.Second)
	msg := fatal(codeAdminShutdown, "killed during its hand-off (test)")
	ended := make(chan struct{})
	hook := func(c *clientConn) {
		handOffHook.Store(nil)
		c.end(&msg)
		close(ended)
	}
	handOffHook.Store(&hook)
	defer handOffHook.Store(nil)
	c := tp.connect(t, pgx.QueryExecModeExec)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the client was not handed to a loop")
	}
	// The FATAL may come in one read with the login's last message:
	// the next query returns it.
	if _, err := c.Exec(ctx, "SELECT 1"); sqlState(err) != "57P01" || !strings.Contains(err.Error(), "hand-off") {
		t.Fatalf("a client killed during its hand-off: %v, want its FATAL", err)
	}
	// The pooler goes on: a new client runs a query.
	c2 := tp.connect(t, pgx.QueryExecModeExec)
	var one int
	if err := c2.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the kill: %v %d", err, one)
	}
}

// TestLateCancelWaitsForTheLoop: a CancelRequest's connection is closed
// only once the client's loop has dropped the request (no server is
// attached): pgx returns from CancelRequest at that close, so the query it
// sends next cannot be the one the request reaches. The loop is held by a
// report no one reads yet.
func TestLateCancelWaitsForTheLoop(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2})
	ctx := testCtx(t, 30*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	var n int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	views := make(chan []clientView)
	for _, l := range tp.loopsStarted() {
		l.post(loopMsg{kind: msgReport, views: views})
	}
	returned := make(chan error, 1)
	go func() { returned <- c.PgConn().CancelRequest(ctx) }()
	early := false
	select {
	case <-returned:
		early = true
	case <-time.After(300 * time.Millisecond):
	}
	for range tp.loopsStarted() {
		<-views
	}
	if early {
		t.Fatal("the cancel request returned before the client's loop saw it")
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel request did not return once the loop dropped it")
	}
	if err := c.QueryRow(ctx, "SELECT 8").Scan(&n); err != nil || n != 8 {
		t.Fatalf("query after a late cancel: %d, %v", n, err)
	}
}
