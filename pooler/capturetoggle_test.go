//go:build capturetoggle

package pooler

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
)

// TestCaptureToggle checks the hook scripts/record-toggle.sh relies on
// (go test -tags capturetoggle): with the capture switched off, a client's
// round trips leave nothing in the capture, and the ones around them are
// recorded whole, numbered as if nothing had been left out. A client picks
// the switch up when it starts waiting for its next message, so one round
// trip after each switch still follows the old setting (the "settle"
// queries, not checked).
func TestCaptureToggle(t *testing.T) {
	t.Cleanup(func() { captureOff.Store(false) })
	srv := pgtest.Shared(t)
	tp, stop, _ := startRecording(t, srv, Config{PoolSize: 2, Mode: ModeRecord})
	ctx := testCtx(t, 30*time.Second)
	c, err := pgx.Connect(ctx, tp.url(pgtest.SuperUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	run := func(sql string) {
		t.Helper()
		if _, err := c.PgConn().Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	run("SELECT 'on-1'")
	captureOff.Store(true)
	run("SELECT 'settle-1'")
	run("SELECT 'off'")
	if _, err := c.Exec(ctx, "SELECT $1::text", "off-extended"); err != nil {
		t.Fatal(err)
	}
	captureOff.Store(false)
	run("SELECT 'settle-2'")
	run("SELECT 'on-2'")
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	evs := stop()

	var queries []string
	var tx int64
	for i, ev := range evs {
		switch ev.Kind {
		case capture.Parse:
			if ev.SQL == "SELECT $1::text" {
				t.Errorf("event %d: a Parse recorded while the capture was off", i)
			}
		case capture.Query:
			queries = append(queries, ev.SQL)
			if i+1 >= len(evs) || evs[i+1].Kind != capture.Ready {
				t.Errorf("event %d: query %q is not followed by its ReadyForQuery", i, ev.SQL)
			}
			if ev.Tx <= tx {
				t.Errorf("event %d: query %q in transaction %d after %d", i, ev.SQL, ev.Tx, tx)
			}
			tx = ev.Tx
		}
	}
	has := map[string]bool{}
	for _, q := range queries {
		has[q] = true
	}
	for _, q := range []string{"SELECT 'on-1'", "SELECT 'on-2'"} {
		if !has[q] {
			t.Errorf("%s is not in the capture; queries: %q", q, queries)
		}
	}
	if has["SELECT 'off'"] {
		t.Errorf("a query sent while the capture was off was recorded; queries: %q", queries)
	}
}
