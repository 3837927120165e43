package pooler

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// adminURL is a connection URL to the proxy's admin console.
func (tp *testProxy) adminURL(user string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, tp.port, AdminDatabase)
}

// adminConn opens a pgx connection to the console (simple protocol).
func (tp *testProxy) adminConn(t *testing.T) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(tp.adminURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(testCtx(t, 20*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// adminShow runs a console command and returns its rows as maps of
// column to text.
func adminShow(t *testing.T, c *pgx.Conn, cmd string) []map[string]string {
	t.Helper()
	rows, err := c.Query(testCtx(t, 20*time.Second), cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	defer rows.Close()
	var out []map[string]string
	for rows.Next() {
		m := map[string]string{}
		vals := rows.RawValues()
		for i, f := range rows.FieldDescriptions() {
			m[f.Name] = string(vals[i])
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return out
}

// poolRow returns the SHOW POOLS or SHOW STATS row of the test database.
func poolRow(t *testing.T, rows []map[string]string) map[string]string {
	t.Helper()
	for _, r := range rows {
		if r["database"] == pgtest.Database {
			return r
		}
	}
	t.Fatalf("no row for %s in %v", pgtest.Database, rows)
	return nil
}

func psqlTool(t *testing.T, srv *pgtest.Server) string {
	t.Helper()
	psql := srv.Tool("psql")
	if psql == "" {
		pgtest.Optional(t, "psql", "install PostgreSQL's client programs", "not found")
	}
	return psql
}

// TestAdminShowPoolsPsql runs SHOW POOLS through psql while pgx clients
// hold two servers of a pool of two and a third client waits for one.
func TestAdminShowPoolsPsql(t *testing.T) {
	srv := pgtest.Shared(t)
	psql := psqlTool(t, srv)
	tp := startProxy(t, srv, Config{PoolSize: 2, AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 60*time.Second)
	var holders []*pgx.Conn
	for range 2 {
		c := tp.connect(t, pgx.QueryExecModeExec)
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		holders = append(holders, c)
	}
	waiter := tp.connect(t, pgx.QueryExecModeExec)
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT 1")
		waited <- err
	}()
	if !waitFor(10*time.Second, func() bool {
		for _, ps := range tp.Snapshot().Pools {
			if ps.ClientsWaiting == 1 {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no waiting client: %+v", tp.Snapshot().Pools)
	}
	cmd := exec.CommandContext(ctx, psql, "-X", "-A", "-F", "|", "-c", "show pools;", tp.adminURL(pgtest.SuperUser))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	header := strings.Split(lines[0], "|")
	want := []string{"database", "user", "cl_active", "cl_waiting", "cl_active_cancel_req", "cl_waiting_cancel_req",
		"sv_active", "sv_active_cancel", "sv_being_canceled", "sv_idle", "sv_used", "sv_tested", "sv_login",
		"maxwait", "maxwait_us", "pool_mode", "cl_pinned", "sv_pinned"}
	if strings.Join(header, ",") != strings.Join(want, ",") {
		t.Fatalf("columns %v, want %v", header, want)
	}
	var row map[string]string
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) == len(header) && f[0] == pgtest.Database {
			row = map[string]string{}
			for i, h := range header {
				row[h] = f[i]
			}
		}
	}
	if row == nil {
		t.Fatalf("no pool row in:\n%s", out)
	}
	if row["cl_active"] != "2" || row["sv_active"] != "2" || row["cl_waiting"] != "1" || row["sv_idle"] != "0" || row["pool_mode"] != "transaction" {
		t.Errorf("SHOW POOLS row %v, want cl_active 2, sv_active 2, cl_waiting 1, sv_idle 0\n%s", row, out)
	}
	states := map[string]int{}
	for _, r := range adminShow(t, tp.adminConn(t), "SHOW CLIENTS") {
		if r["type"] == "C" && r["database"] == pgtest.Database {
			states[r["state"]]++
		}
	}
	if states["active"] != 2 || states["waiting"] != 1 {
		t.Errorf("SHOW CLIENTS states %v, want 2 active and 1 waiting", states)
	}
	for _, c := range holders {
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	admin := tp.adminConn(t)
	if !waitFor(5*time.Second, func() bool {
		r := poolRow(t, adminShow(t, admin, "SHOW POOLS"))
		return r["cl_active"] == "0" && r["sv_active"] == "0" && r["sv_idle"] == "2" && r["cl_idle"] == ""
	}) {
		t.Errorf("after COMMIT: %v", poolRow(t, adminShow(t, admin, "SHOW POOLS")))
	}
	// The three pgx clients, and the console (psql may still be leaving).
	clients := adminShow(t, admin, "SHOW CLIENTS")
	n := 0
	for _, r := range clients {
		if r["database"] == pgtest.Database && r["state"] == "idle" && r["type"] == "C" {
			n++
		}
	}
	if n != 3 || len(clients) < 4 {
		t.Errorf("SHOW CLIENTS: %d idle clients of the pool, want 3: %v", n, clients)
	}
	servers := adminShow(t, admin, "show servers")
	if len(servers) != 2 || servers[0]["state"] != "idle" || servers[0]["remote_pid"] == "0" {
		t.Errorf("SHOW SERVERS: %v", servers)
	}
}

// TestAdminShowStats checks that SHOW STATS counts transactions, queries,
// bytes and server assignments.
func TestAdminShowStats(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2, AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 60*time.Second)
	c := tp.connect(t, pgx.QueryExecModeExec)
	admin := tp.adminConn(t)
	num := func(r map[string]string, k string) int64 {
		n, err := strconv.ParseInt(r[k], 10, 64)
		if err != nil {
			t.Fatalf("%s = %q", k, r[k])
		}
		return n
	}
	before := poolRow(t, adminShow(t, admin, "SHOW STATS"))
	const n = 25
	for i := range n {
		if _, err := c.Exec(ctx, "SELECT $1::int", i); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "SELECT 1")
	tx.Exec(ctx, "SELECT 2")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var after map[string]string
	waitFor(5*time.Second, func() bool {
		after = poolRow(t, adminShow(t, admin, "SHOW STATS;"))
		return num(after, "total_xact_count")-num(before, "total_xact_count") >= n+1
	})
	if d := num(after, "total_xact_count") - num(before, "total_xact_count"); d != n+1 {
		t.Errorf("total_xact_count grew by %d, want %d", d, n+1)
	}
	// Each Exec is one Execute; the transaction adds BEGIN, two SELECTs
	// and COMMIT.
	if d := num(after, "total_query_count") - num(before, "total_query_count"); d != n+4 {
		t.Errorf("total_query_count grew by %d, want %d", d, n+4)
	}
	if d := num(after, "total_server_assignment_count") - num(before, "total_server_assignment_count"); d != n+1 {
		t.Errorf("total_server_assignment_count grew by %d, want %d", d, n+1)
	}
	for _, k := range []string{"total_received", "total_sent", "total_xact_time", "total_query_time", "total_bind_count"} {
		if num(after, k) <= num(before, k) {
			t.Errorf("%s did not grow: %s → %s", k, before[k], after[k])
		}
	}
	if num(after, "avg_xact_time") <= 0 {
		t.Errorf("avg_xact_time = %s", after["avg_xact_time"])
	}
	if len(after) != 23 {
		t.Errorf("SHOW STATS has %d columns, want 23", len(after))
	}
	snap := tp.Snapshot()
	if len(snap.Pools) != 1 || snap.Pools[0].Totals.Transactions != num(after, "total_xact_count") {
		t.Errorf("Snapshot pools %+v", snap.Pools)
	}

	// A pipeline of three autocommit transactions counts three.
	xacts := tp.Snapshot().Pools[0].Totals
	fe, conn := rawLogin(t, tp, nil)
	defer conn.Close()
	for range 3 {
		fe.Send(&pgproto3.Parse{Query: "SELECT 1"})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
	}
	fe.Flush()
	for range 3 {
		expectTypes(t, fe, "ParseComplete", "BindComplete", "DataRow", "CommandComplete", "ReadyForQuery")
	}
	now := tp.Snapshot().Pools[0].Totals
	if now.Transactions-xacts.Transactions != 3 || now.Queries-xacts.Queries != 3 {
		t.Errorf("pipeline of 3: transactions +%d, queries +%d, want 3 each",
			now.Transactions-xacts.Transactions, now.Queries-xacts.Queries)
	}

	// After a stats period the averages cover the last period.
	t0 := time.Now().Add(-90 * time.Second)
	tp.samples.pair.Store(&samplePair{
		prev: &statsSample{at: t0, dbs: map[string]PoolTotals{pgtest.Database: {Transactions: 100, XactTimeUs: 5000, Queries: 100}}},
		last: &statsSample{at: t0.Add(statsPeriod), dbs: map[string]PoolTotals{pgtest.Database: {Transactions: 220, XactTimeUs: 6200, Queries: 400, BytesSent: 6000}}},
	})
	r := poolRow(t, adminShow(t, admin, "SHOW STATS"))
	if r["avg_xact_count"] != "2" || r["avg_xact_time"] != "10" || r["avg_query_count"] != "5" || r["avg_sent"] != "100" || r["avg_query_time"] != "0" {
		t.Errorf("averages over a period: %v", r)
	}
	if want := strconv.FormatInt(now.Transactions, 10); r["total_xact_count"] != want {
		t.Errorf("totals changed with the period: %s, want %s", r["total_xact_count"], want)
	}
}

// TestAdminPauseResume checks that PAUSE waits for the transaction in
// progress, that a new transaction then waits until RESUME, and that the
// waiting client shows in cl_waiting.
func TestAdminPauseResume(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{PoolSize: 2, AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 60*time.Second)
	busy := tp.connect(t, pgx.QueryExecModeExec)
	other := tp.connect(t, pgx.QueryExecModeExec)
	admin := tp.adminConn(t)
	if _, err := busy.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	paused := make(chan error, 1)
	go func() {
		_, err := admin.Exec(ctx, "PAUSE")
		paused <- err
	}()
	select {
	case err := <-paused:
		t.Fatalf("PAUSE returned with a transaction in progress: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := busy.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-paused; err != nil {
		t.Fatalf("PAUSE: %v", err)
	}
	ran := make(chan error, 1)
	go func() {
		_, err := other.Exec(ctx, "SELECT 1")
		ran <- err
	}()
	select {
	case err := <-ran:
		t.Fatalf("a transaction ran while paused: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	admin2 := tp.adminConn(t)
	if r := poolRow(t, adminShow(t, admin2, "SHOW POOLS")); r["cl_waiting"] != "1" {
		t.Errorf("paused: cl_waiting %s, want 1", r["cl_waiting"])
	}
	if _, err := admin2.Exec(ctx, "PAUSE"); err == nil || !strings.Contains(err.Error(), "already paused") {
		t.Errorf("second PAUSE: %v", err)
	}
	if _, err := admin2.Exec(ctx, "resume;"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the transaction did not run after RESUME")
	}
	// PAUSE of another database leaves this one alone.
	if _, err := admin2.Exec(ctx, "PAUSE otherdb"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin2.Exec(ctx, "RESUME otherdb"); err != nil {
		t.Fatal(err)
	}
}

// TestAdminRefusedAndErrors checks that a user not in AdminUsers is
// refused with 28000, that unknown commands and extended-protocol
// messages get an error while the console stays usable, and the other
// commands' answers.
func TestAdminRefusedAndErrors(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AdminUsers: []string{pgtest.SuperUser}, Classifier: stubClassifier{}})
	ctx := testCtx(t, 60*time.Second)
	if err := srv.Exec(ctx, "DROP ROLE IF EXISTS notadmin; CREATE ROLE notadmin LOGIN"); err != nil {
		t.Fatal(err)
	}
	_, err := pgx.Connect(ctx, tp.adminURL("notadmin"))
	if err == nil || sqlState(err) != "28000" || !strings.Contains(err.Error(), "not allowed") ||
		!strings.Contains(err.Error(), "--admin-users") || !strings.Contains(err.Error(), "admin_users") {
		t.Fatalf("non-admin login: %v", err)
	}

	// The extended protocol: an error up to Sync, then the console works.
	fe, conn := rawLogin(t, tp, map[string]string{"database": AdminDatabase})
	defer conn.Close()
	fe.Send(&pgproto3.Parse{Query: "SHOW POOLS"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	fe.Flush()
	if e := receiveError(t, fe); e.Code != "0A000" {
		t.Errorf("extended protocol: %s %s", e.Code, e.Message)
	}
	expectTypes(t, fe, "ReadyForQuery")
	fe.Send(&pgproto3.Query{String: "SHOW VERSION"})
	fe.Flush()
	expectTypes(t, fe, "RowDescription", "DataRow", "CommandComplete", "ReadyForQuery")
	fe.Send(&pgproto3.Query{String: "SHOW NONSENSE"})
	fe.Flush()
	receiveError(t, fe)
	expectTypes(t, fe, "ReadyForQuery")
	fe.Send(&pgproto3.Query{String: "FROB"})
	fe.Flush()
	receiveError(t, fe)
	expectTypes(t, fe, "ReadyForQuery")
	fe.Send(&pgproto3.Query{String: "RELOAD"})
	fe.Flush()
	if e := receiveError(t, fe); !strings.Contains(e.Message, "no config file") {
		t.Errorf("RELOAD without a hook: %s", e.Message)
	}
	expectTypes(t, fe, "ReadyForQuery")
	fe.Send(&pgproto3.Query{String: "SHOW HELP"})
	fe.Flush()
	expectTypes(t, fe, "NoticeResponse", "CommandComplete", "ReadyForQuery")
	fe.Send(&pgproto3.Query{String: ""})
	fe.Flush()
	expectTypes(t, fe, "EmptyQueryResponse", "ReadyForQuery")

	// pgx's default (extended) protocol gets the error; the connection
	// stays usable with the simple protocol.
	admin, err := pgx.Connect(ctx, tp.adminURL(pgtest.SuperUser))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var v string
	if err := admin.QueryRow(ctx, "SHOW VERSION").Scan(&v); err == nil || sqlState(err) != "0A000" {
		t.Errorf("extended SHOW POOLS: %v", err)
	}
	if _, err := admin.Exec(ctx, "SHOW POOLS", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Errorf("simple SHOW POOLS after the error: %v", err)
	}

	// SHOW CONFIG, DATABASES, LISTS and HAZARDS.
	c := tp.adminConn(t)
	tp.connect(t, pgx.QueryExecModeExec).Exec(ctx, "SELECT 1")
	dbs := adminShow(t, c, "SHOW DATABASES")
	if len(dbs) != 2 || dbs[0]["name"] != pgtest.Database || dbs[1]["name"] != AdminDatabase || dbs[0]["current_connections"] != "1" {
		t.Errorf("SHOW DATABASES: %v", dbs)
	}
	// The loop gives the server back just after the client got its
	// ReadyForQuery: it is "used" for that moment, then free.
	lists := map[string]string{}
	if !waitFor(5*time.Second, func() bool {
		lists = map[string]string{}
		for _, r := range adminShow(t, c, "SHOW LISTS") {
			lists[r["list"]] = r["items"]
		}
		return lists["free_servers"] == "1"
	}) || lists["pools"] != "1" || lists["databases"] != "1" || lists["used_servers"] != "0" {
		t.Errorf("SHOW LISTS: %v", lists)
	}
	cfg := map[string]map[string]string{}
	for _, r := range adminShow(t, c, "SHOW CONFIG") {
		cfg[r["key"]] = r
	}
	if cfg["pool_size"]["value"] != "20" || cfg["pool_size"]["changeable"] != "yes" || cfg["admin_users"]["value"] != pgtest.SuperUser {
		t.Errorf("SHOW CONFIG: %v", cfg)
	}
	client := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := client.Exec(ctx, "SET work_mem = '8MB'"); err != nil {
		t.Fatal(err)
	}
	hz := adminShow(t, c, "SHOW HAZARDS")
	if len(hz) != 1 || hz[0]["rule"] != "stub-set" || hz[0]["count"] != "1" || hz[0]["clients"] != "1" || hz[0]["fingerprint"] != "fp-set" || hz[0]["last_seen"] == "" {
		t.Errorf("SHOW HAZARDS: %v", hz)
	}
}

// TestAdminReloadAndShutdown checks RELOAD through the hook (pool_size
// and admin_users change) and SHUTDOWN.
func TestAdminReloadAndShutdown(t *testing.T) {
	srv := pgtest.Shared(t)
	var reloads atomic.Int32
	tp := startProxy(t, srv, Config{PoolSize: 3, AdminUsers: []string{pgtest.SuperUser}, Reload: func(c *Config) error {
		reloads.Add(1)
		c.PoolSize = 5
		c.AdminUsers = append(c.AdminUsers, "ops")
		c.QueryWaitTimeout = 45 * time.Second
		c.ServerLifetime = 90 * time.Minute
		return nil
	}})
	ctx := testCtx(t, 60*time.Second)
	c := tp.adminConn(t)
	if _, err := c.Exec(ctx, "reload"); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{}
	for _, r := range adminShow(t, c, "SHOW CONFIG") {
		cfg[r["key"]] = r["value"]
	}
	if reloads.Load() != 1 || cfg["pool_size"] != "5" || cfg["admin_users"] != pgtest.SuperUser+",ops" ||
		cfg["query_wait_timeout"] != "45s" || cfg["server_lifetime"] != "1h30m0s" {
		t.Errorf("after RELOAD: %d reloads, config %v", reloads.Load(), cfg)
	}
	if _, err := c.Exec(ctx, "SHUTDOWN"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-tp.done:
		if err != nil {
			t.Fatal(err)
		}
		tp.done <- nil // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("the proxy did not stop after SHUTDOWN")
	}
}

// stubClassifier reports every SET as a session setting.
type stubClassifier struct{}

func (stubClassifier) Classify(sql string) ([]StateEffect, string) {
	if f := strings.Fields(sql); len(f) >= 2 && strings.EqualFold(f[0], "SET") {
		return []StateEffect{{Kind: effects.SetParam, Name: f[1], Rule: "stub-set"}}, "fp-set"
	}
	return nil, ""
}

// TestAdminMD5 checks that an admin user logs in to the console with md5
// like any client: the right password opens it, a wrong one is refused.
func TestAdminMD5(t *testing.T) {
	srv := pgtest.Shared(t)
	tp := startProxy(t, srv, Config{AuthType: AuthMD5, Users: Userlist{pgtest.SuperUser: "s3cret", "ops": "opspw"},
		AdminUsers: []string{pgtest.SuperUser}})
	ctx := testCtx(t, 30*time.Second)
	url := func(user, pw string) string {
		return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", user, pw, tp.port, AdminDatabase)
	}
	c, err := pgx.Connect(ctx, url(pgtest.SuperUser, "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v string
	if err := c.QueryRow(ctx, "SHOW VERSION", pgx.QueryExecModeSimpleProtocol).Scan(&v); err != nil || !strings.HasPrefix(v, "pgpoolcheck ") {
		t.Errorf("SHOW VERSION: %q, %v", v, err)
	}
	if _, err := pgx.Connect(ctx, url(pgtest.SuperUser, "wrong")); sqlState(err) != "28P01" {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := pgx.Connect(ctx, url("ops", "opspw")); sqlState(err) != "28000" {
		t.Errorf("authenticated non-admin: %v", err)
	}
}
