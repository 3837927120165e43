package pooler

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// startRecording starts a proxy in mode with a capture file; the returned
// function stops the proxy, closes the capture and returns its events.
func startRecording(t *testing.T, srv *pgtest.Server, cfg Config) (*testProxy, func() []*capture.Event, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	w, err := capture.Create(path, capture.Header{Upstream: "postgres://u:secret-password@db/x", Mode: string(cfg.Mode)}, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Capture = w
	tp := startProxy(t, srv, cfg)
	stop := func() []*capture.Event {
		ctx := testCtx(t, 20*time.Second)
		tp.Shutdown(ctx)
		<-tp.done
		tp.done <- nil // for the cleanup's wait
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var evs []*capture.Event
		for {
			ev, err := f.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		return evs
	}
	return tp, stop, path
}

// TestRecordMode records a pgx client in record mode (session pooling)
// and in transaction mode, and checks what the capture holds: the
// statements, statement names, transaction numbers and statuses, and
// never a parameter value or a password.
func TestRecordMode(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, mode := range []Mode{ModeRecord, ModeTransaction} {
		t.Run(string(mode), func(t *testing.T) {
			tp, stop, path := startRecording(t, srv, Config{PoolSize: 2, Mode: mode})
			ctx := testCtx(t, 30*time.Second)
			cfg, err := pgx.ParseConfig(tp.url(pgtest.SuperUser, "") + "&application_name=billing")
			if err != nil {
				t.Fatal(err)
			}
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, "SET work_mem = '64MB'"); err != nil {
				t.Fatal(err)
			}
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT length($1::text)", "parameter-value-never-recorded").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, "SELECT 1/0"); err == nil {
				t.Fatal("division by zero succeeded")
			}
			// A recorded client is relayed by an event loop too, in
			// record mode with the server it keeps.
			if !waitFor(5*time.Second, func() bool { return ClientsOnLoops(tp.Proxy) == 1 }) {
				t.Errorf("%d clients on the event loops, want the recorded one", ClientsOnLoops(tp.Proxy))
			}
			c.Close(ctx)
			evs := stop()

			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"parameter-value-never-recorded", "secret-password"} {
				if strings.Contains(string(raw), secret) {
					t.Fatalf("the capture holds %q", secret)
				}
			}
			var kinds []string
			var sawSet, sawParse, sawBind, sawErr, sawStart, sawEnd bool
			txOfParse, txOfSet := int64(-1), int64(-1)
			for _, ev := range evs {
				kinds = append(kinds, string(ev.Kind))
				switch ev.Kind {
				case capture.SessionStart:
					sawStart = ev.ApplicationName == "billing" && ev.User == pgtest.SuperUser
				case capture.Query:
					if ev.SQL == "SET work_mem = '64MB'" {
						sawSet, txOfSet = true, ev.Tx
					}
				case capture.Parse:
					if strings.Contains(ev.SQL, "length($1::text)") {
						sawParse, txOfParse = true, ev.Tx
						if !strings.HasPrefix(ev.Name, "stmtcache_") {
							t.Errorf("parse recorded under name %q, want the client's stmtcache_ name", ev.Name)
						}
					}
				case capture.Bind:
					sawBind = true
				case capture.Error:
					sawErr = sawErr || ev.SQLState == "22012"
				case capture.SessionEnd:
					sawEnd = true
				}
			}
			if !sawStart || !sawSet || !sawParse || !sawBind || !sawErr || !sawEnd {
				t.Fatalf("missing events (start %v set %v parse %v bind %v error %v end %v): %v", sawStart, sawSet, sawParse, sawBind, sawErr, sawEnd, kinds)
			}
			if txOfParse <= txOfSet {
				t.Errorf("the transaction's Parse is in transaction %d, not after the SET's %d", txOfParse, txOfSet)
			}
		})
	}
}

// TestRecordHazards: with a capture in transaction mode, every session-
// state hazard the pooler meets is recorded after its statement, with the
// rule, the policy's action and the fingerprint.
func TestRecordHazards(t *testing.T) {
	srv := pgtest.Shared(t)
	tp, stop, _ := startRecording(t, srv, Config{PoolSize: 1, Mode: ModeTransaction, Classifier: fakeClassifier{}})
	ctx := testCtx(t, 30*time.Second)
	c := tp.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, "SET work_mem = '64MB'"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	evs := stop()
	for i, ev := range evs {
		if ev.Kind != capture.Hazard {
			continue
		}
		if ev.Rule != "session-set" || ev.Action != "replayed" || ev.Fingerprint != "fp" {
			t.Fatalf("hazard event %+v", ev)
		}
		if i == 0 || evs[i-1].Kind != capture.Query {
			t.Fatalf("the hazard does not follow its statement: event before it %+v", evs[i-1])
		}
		return
	}
	t.Fatal("no hazard event in the capture")
}

// fakeClassifier reports every SET as a session SET of its first word's
// parameter (enough for the pooler's own tests; the real one is
// internal/sessionstate).
type fakeClassifier struct{}

func (fakeClassifier) Classify(sql string) ([]StateEffect, string) {
	f := strings.Fields(sql)
	if len(f) < 2 || !strings.EqualFold(f[0], "SET") {
		return nil, ""
	}
	return []StateEffect{{Kind: effects.SetParam, Name: f[1], Rule: "session-set"}}, "fp"
}
