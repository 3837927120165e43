package traffic_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// wire plays a conversation into a capture session the way a proxy would:
// client messages through Frontend, server messages through Backend.
type wire struct {
	t *testing.T
	s *capture.Session
}

func (w wire) msg(m interface {
	Encode([]byte) ([]byte, error)
}) (byte, []byte) {
	b, err := m.Encode(nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return b[0], b[5:]
}

func (w wire) c(ms ...pgproto3.FrontendMessage) {
	for _, m := range ms {
		typ, body := w.msg(m)
		w.s.Frontend(typ, body, len(body))
	}
}

func (w wire) b(ms ...pgproto3.BackendMessage) {
	for _, m := range ms {
		typ, body := w.msg(m)
		w.s.Backend(typ, body)
	}
}

// query is a simple-protocol round trip ending with status.
func (w wire) query(sql string, status byte) {
	w.c(&pgproto3.Query{String: sql})
	w.b(&pgproto3.CommandComplete{CommandTag: []byte("OK")}, &pgproto3.ReadyForQuery{TxStatus: status})
}

var (
	idle  = &pgproto3.ReadyForQuery{TxStatus: 'I'}
	inTx  = &pgproto3.ReadyForQuery{TxStatus: 'T'}
	done  = &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}
	bound = &pgproto3.BindComplete{}
)

// TestWireConversations records client conversations message by message,
// as the drivers named in each case send them, and analyzes the capture.
func TestWireConversations(t *testing.T) {
	const q = "SELECT name FROM users WHERE id = $1"
	tests := []struct {
		name   string
		target rules.Target
		params map[string]string
		talk   func(w wire)
		want   []string
	}{
		{"psql SET then a later transaction", "", nil, func(w wire) {
			w.query("SET search_path = app", 'I')
			w.query("SELECT * FROM invoices", 'I')
		}, []string{"session-set:critical"}},
		{"psql SET LOCAL in BEGIN/COMMIT", "", nil, func(w wire) {
			w.query("BEGIN", 'T')
			w.query("SET LOCAL search_path = app", 'T')
			w.query("SELECT 1", 'T')
			w.query("COMMIT", 'I')
			w.query("SELECT 2", 'I')
		}, nil},
		{"one Query string with BEGIN … COMMIT", "", nil, func(w wire) {
			w.query("BEGIN; CREATE TEMP TABLE t (id int) ON COMMIT DROP; INSERT INTO t VALUES (1); COMMIT", 'I')
			w.query("SELECT 1", 'I')
		}, nil},
		{"one Query string: SET in a block, then a later transaction", "", nil, func(w wire) {
			w.query("BEGIN; SET search_path = app; COMMIT; SELECT * FROM invoices", 'I')
		}, []string{"session-set:critical"}},
		{"one Query string: SET LOCAL in a block, then a later transaction", "", nil, func(w wire) {
			w.query("BEGIN; SET LOCAL search_path = app; COMMIT; SELECT * FROM invoices", 'I')
		}, nil},
		{"one Query string: SET then SELECT in one implicit transaction", "", nil, func(w wire) {
			w.query("SET search_path = app; SELECT * FROM invoices", 'I')
		}, nil},
		{"pgx default mode: named statements", "", nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "stmtcache_19ab", Query: q}, &pgproto3.Describe{ObjectType: 'S', Name: "stmtcache_19ab"}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, &pgproto3.ParameterDescription{ParameterOIDs: []uint32{23}}, &pgproto3.RowDescription{}, idle)
			for range 3 {
				w.c(&pgproto3.Bind{PreparedStatement: "stmtcache_19ab", Parameters: [][]byte{[]byte("7")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
				w.b(bound, &pgproto3.DataRow{Values: [][]byte{[]byte("ann")}}, done, idle)
			}
		}, []string{"protocol-prepare:info"}},
		{"pgx default mode behind PgBouncer before 1.21", rules.PgBouncerLegacy, nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "stmtcache_19ab", Query: q}, &pgproto3.Describe{ObjectType: 'S', Name: "stmtcache_19ab"}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, idle)
			w.c(&pgproto3.Bind{PreparedStatement: "stmtcache_19ab"}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(bound, done, idle)
		}, []string{"protocol-prepare:error"}},
		{"pgx QueryExecModeExec", rules.PgBouncerLegacy, nil, func(w wire) {
			for range 3 {
				w.c(&pgproto3.Parse{Query: q}, &pgproto3.Bind{Parameters: [][]byte{[]byte("7")}}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
				w.b(&pgproto3.ParseComplete{}, bound, &pgproto3.RowDescription{}, done, idle)
			}
		}, nil},
		{"pgx batch in one implicit transaction", rules.PgBouncerLegacy, nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "stmtcache_1", Query: q}, &pgproto3.Bind{PreparedStatement: "stmtcache_1"}, &pgproto3.Execute{},
				&pgproto3.Bind{PreparedStatement: "stmtcache_1"}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, bound, done, bound, done, idle)
		}, nil},
		{"lib/pq: Parse, Sync, then Bind", "", map[string]string{"extra_float_digits": "2", "datestyle": "ISO, MDY", "client_encoding": "UTF8"}, func(w wire) {
			w.c(&pgproto3.Parse{Query: q}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, &pgproto3.ParameterDescription{}, &pgproto3.RowDescription{}, idle)
			w.c(&pgproto3.Bind{Parameters: [][]byte{[]byte("7")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(bound, done, idle)
		}, []string{"startup-parameter:warning", "unnamed-statement-reuse:error"}},
		{"lib/pq inside a transaction", "", nil, func(w wire) {
			w.query("BEGIN", 'T')
			w.c(&pgproto3.Parse{Query: q}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, inTx)
			w.c(&pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(bound, done, inTx)
			w.query("COMMIT", 'I')
		}, nil},
		// A pipeline: the server runs the Executes before the failing one
		// and skips every message after it up to the Sync.
		{"pipeline: the lock after a failed statement never runs", "", nil, func(w wire) {
			w.c(&pgproto3.Parse{Query: "SELECT 1/0"}, &pgproto3.Bind{}, &pgproto3.Execute{},
				&pgproto3.Parse{Query: "SELECT pg_advisory_lock(7)"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "22012", Message: "division by zero"}, idle)
			w.query("SELECT 1", 'I')
		}, nil},
		{"pipeline: the lock before a failed statement is held", "", nil, func(w wire) {
			w.c(&pgproto3.Parse{Query: "SELECT pg_advisory_lock(7)"}, &pgproto3.Bind{}, &pgproto3.Execute{},
				&pgproto3.Parse{Query: "SELECT 1/0"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, bound, done, &pgproto3.ParseComplete{}, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "22012", Message: "division by zero"}, idle)
			w.query("SELECT 1", 'I')
		}, []string{"advisory-lock-session:error"}},
		{"pipeline: messages sent after the error reached the client", "", nil, func(w wire) {
			w.c(&pgproto3.Parse{Query: "SELECT 1/0"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Flush{})
			w.b(&pgproto3.ParseComplete{}, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "22012", Message: "division by zero"})
			w.c(&pgproto3.Parse{Query: "SELECT pg_advisory_lock(7)"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(idle)
			w.query("SELECT 1", 'I')
		}, nil},
		{"SQL DEALLOCATE of a protocol statement behind PgBouncer", rules.PgBouncer, nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "_pg3_0", Query: q}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, idle)
			w.c(&pgproto3.Parse{Query: "DEALLOCATE _pg3_0"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, bound, &pgproto3.CommandComplete{CommandTag: []byte("DEALLOCATE")}, idle)
		}, []string{"protocol-prepare:error"}},
		{"SQL DEALLOCATE of a protocol statement behind pgpoolcheck", rules.PgPoolCheck, nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "_pg3_0", Query: q}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, idle)
			w.query("DEALLOCATE _pg3_0", 'I')
		}, []string{"protocol-prepare:info"}},
		{"pgbench -M prepared", rules.PgBouncerLegacy, nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "P_0", Query: "SELECT abalance FROM pgbench_accounts WHERE aid = $1"}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, idle)
			for range 3 {
				w.c(&pgproto3.Bind{PreparedStatement: "P_0"}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
				w.b(bound, &pgproto3.RowDescription{}, done, idle)
			}
		}, []string{"protocol-prepare:error"}},
		{"advisory lock taken by a prepared statement, released later", "", nil, func(w wire) {
			w.c(&pgproto3.Parse{Name: "lock", Query: "SELECT pg_advisory_lock($1)"}, &pgproto3.Bind{PreparedStatement: "lock"}, &pgproto3.Execute{}, &pgproto3.Sync{})
			w.b(&pgproto3.ParseComplete{}, bound, done, idle)
			w.query("UPDATE jobs SET done = true", 'I')
			w.query("SELECT pg_advisory_unlock(42)", 'I')
		}, []string{"advisory-lock-session:error"}},
		{"COPY in its own transaction", "", nil, func(w wire) {
			w.c(&pgproto3.Query{String: "COPY t FROM STDIN"})
			w.b(&pgproto3.CopyInResponse{})
			w.c(&pgproto3.CopyData{Data: []byte("1\n")}, &pgproto3.CopyDone{})
			w.b(&pgproto3.CommandComplete{CommandTag: []byte("COPY 1")}, idle)
			w.query("SELECT 1", 'I')
		}, nil},
		{"pipelined before the answer", "", nil, func(w wire) {
			w.c(&pgproto3.Query{String: "SELECT nextval('s')"}, &pgproto3.Query{String: "SELECT currval('s')"})
			w.b(done, idle, done, idle)
		}, []string{"sequence-session:error"}},
		{"failed SET", "", nil, func(w wire) {
			w.c(&pgproto3.Query{String: "SET statement_timeout = 'soon'"})
			w.b(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "22023", Message: "invalid value"}, idle)
			w.query("SELECT 1", 'I')
		}, nil},
	}
	// notes are texts every finding's message must hold, by case.
	notes := map[string]string{
		"advisory lock taken by a prepared statement, released later": "released in a later transaction",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "capture.jsonl")
			w, err := capture.Create(path, capture.Header{Mode: "record"}, capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := w.StartSession(capture.SessionInfo{ClientAddr: "127.0.0.1:5000", User: "app", Database: "app", ApplicationName: "test", Params: tt.params})
			ww := wire{t, s}
			ww.b(&pgproto3.ReadyForQuery{TxStatus: 'I'}) // after authentication
			tt.talk(ww)
			s.End("client closed")
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			rep, warns, err := traffic.Analyze(&analyzer.Config{Target: tt.target}, []string{path}, traffic.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatal(err, warns)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Rule+":"+f.Severity.String())
			}
			slices.Sort(got)
			for _, f := range rep.Findings {
				if note := notes[tt.name]; !strings.Contains(f.Message, note) {
					t.Errorf("message %q does not say %q", f.Message, note)
				}
			}
			if !slices.Equal(got, tt.want) {
				for _, f := range rep.Findings {
					t.Logf("%d %s [%s] %s", f.Line, f.Severity, f.Rule, f.Message)
				}
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
