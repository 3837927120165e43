package capture

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

type encoder interface {
	Encode([]byte) ([]byte, error)
}

// TestMessageEvents writes one message through a session and reads the
// event back: what each protocol message becomes in the file, and that
// messages the capture does not record leave nothing.
func TestMessageEvents(t *testing.T) {
	tests := []struct {
		name  string
		front encoder // a client message, or
		back  encoder // a server message
		want  *Event  // nil: not recorded
	}{
		{"query", &pgproto3.Query{String: "SELECT 'é\"\\\n'"}, nil, &Event{Kind: Query, SQL: "SELECT 'é\"\\\n'"}},
		{"parse", &pgproto3.Parse{Name: "s1", Query: "SELECT $1, $2", ParameterOIDs: []uint32{23, 0}}, nil, &Event{Kind: Parse, Name: "s1", SQL: "SELECT $1, $2", ParamTypes: []uint32{23, 0}}},
		{"parse unnamed", &pgproto3.Parse{Query: "SELECT 1"}, nil, &Event{Kind: Parse, SQL: "SELECT 1"}},
		{"bind", &pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s1", ParameterFormatCodes: []int16{0}, Parameters: [][]byte{[]byte("v"), nil}, ResultFormatCodes: []int16{1}}, nil, &Event{Kind: Bind, Portal: "p", Name: "s1"}},
		{"describe statement", &pgproto3.Describe{ObjectType: 'S', Name: "s1"}, nil, &Event{Kind: Describe, Target: "S", Name: "s1"}},
		{"describe portal", &pgproto3.Describe{ObjectType: 'P'}, nil, &Event{Kind: Describe, Target: "P"}},
		{"execute", &pgproto3.Execute{Portal: "p", MaxRows: 50}, nil, &Event{Kind: Execute, Portal: "p", MaxRows: 50}},
		{"close", &pgproto3.Close{ObjectType: 'S', Name: "s1"}, nil, &Event{Kind: Close, Target: "S", Name: "s1"}},
		{"sync", &pgproto3.Sync{}, nil, &Event{Kind: Sync}},
		{"flush", &pgproto3.Flush{}, nil, &Event{Kind: Flush}},
		{"function call", &pgproto3.FunctionCall{Function: 99, Arguments: [][]byte{[]byte("x")}}, nil, &Event{Kind: FunctionCall, OID: 99}},
		{"copy done", &pgproto3.CopyDone{}, nil, &Event{Kind: CopyEnd, From: "client"}},
		{"copy fail", &pgproto3.CopyFail{Message: "client gave up on row 7"}, nil, &Event{Kind: CopyEnd, From: "client", Fail: true}},
		{"copy data", &pgproto3.CopyData{Data: []byte("1\t2\n")}, nil, nil},
		{"terminate", &pgproto3.Terminate{}, nil, nil},
		{"password", &pgproto3.PasswordMessage{Password: "hunter2"}, nil, nil},
		{"sasl", &pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=u,r=abc")}, nil, nil},
		{"ready idle", nil, &pgproto3.ReadyForQuery{TxStatus: 'I'}, &Event{Kind: Ready, Status: "I"}},
		{"ready failed", nil, &pgproto3.ReadyForQuery{TxStatus: 'E'}, &Event{Kind: Ready, Status: "E"}},
		{"error", nil, &pgproto3.ErrorResponse{Severity: "FEHLER", SeverityUnlocalized: "ERROR", Code: "42P01", Message: "relation does not exist", Detail: "d", Hint: "h"}, &Event{Kind: Error, SQLState: "42P01", Severity: "ERROR", Message: "relation does not exist"}},
		{"error localised only", nil, &pgproto3.ErrorResponse{Severity: "FATAL", Code: "57P01", Message: "terminating"}, &Event{Kind: Error, SQLState: "57P01", Severity: "FATAL", Message: "terminating"}},
		{"copy in", nil, &pgproto3.CopyInResponse{OverallFormat: 0, ColumnFormatCodes: []uint16{0}}, &Event{Kind: CopyStart, Direction: "in"}},
		{"copy out", nil, &pgproto3.CopyOutResponse{}, &Event{Kind: CopyStart, Direction: "out"}},
		{"copy both", nil, &pgproto3.CopyBothResponse{}, &Event{Kind: CopyStart, Direction: "both"}},
		{"server copy done", nil, &pgproto3.CopyDone{}, &Event{Kind: CopyEnd, From: "server"}},
		{"notification", nil, &pgproto3.NotificationResponse{PID: 1, Channel: "jobs", Payload: "secret"}, &Event{Kind: Notification, Channel: "jobs"}},
		{"row", nil, &pgproto3.DataRow{Values: [][]byte{[]byte("x")}}, nil},
		{"notice", nil, &pgproto3.NoticeResponse{Message: "n"}, nil},
		{"parameter status", nil, &pgproto3.ParameterStatus{Name: "TimeZone", Value: "UTC"}, nil},
		{"command complete", nil, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, Header{}, Options{})
			s := w.StartSession(SessionInfo{})
			if tt.front != nil {
				typ, body := wireMsg(t, tt.front)
				s.Frontend(typ, body, len(body))
			} else {
				typ, body := wireMsg(t, tt.back)
				s.Backend(typ, body)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, evs, _ := readAll(t, buf.Bytes())
			evs = evs[1:] // the session start
			if tt.want == nil {
				if len(evs) != 0 {
					t.Fatalf("recorded %+v", evs[0])
				}
				return
			}
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			got := *evs[0]
			got.T, got.Line = 0, 0
			want := *tt.want
			want.Session, want.Tx = 1, 1
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestAppendUint(t *testing.T) {
	for _, v := range []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 17096320380, 1<<63 - 1, 1<<64 - 1} {
		if got, want := string(appendUint([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Errorf("appendUint(%d) = %q, want %q", v, got, want)
		}
	}
	for _, v := range []int64{-1, -1 << 63, 0, 42} {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestResetEvent checks what resetEvent relies on: the messages of the
// kinds it clears only in part (the frequent ones) set no field beyond
// those it clears, whatever their bytes, whole or cut short; and that an
// event it clears is empty but for its type list.
func TestResetEvent(t *testing.T) {
	var bodies [][]byte
	for _, m := range []encoder{
		&pgproto3.Query{String: "SELECT 1"},
		&pgproto3.Parse{Name: "s1", Query: "SELECT $1, $2", ParameterOIDs: []uint32{23, 25}},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{[]byte("x"), nil}, ResultFormatCodes: []int16{0}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 10},
		&pgproto3.FunctionCall{Function: 1598, Arguments: [][]byte{[]byte("1")}},
	} {
		raw, err := m.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, raw[5:])
	}
	// Every prefix of every body, and bytes of no particular shape.
	var all [][]byte
	for _, b := range bodies {
		for i := 0; i <= len(b); i++ {
			all = append(all, b[:i])
		}
	}
	rnd := uint64(1)
	for range 2000 {
		b := make([]byte, int(rnd%40))
		for i := range b {
			rnd = rnd*6364136223846793005 + 1442695040888963407
			b[i] = byte(rnd >> 56 % 4 * 60) // zero bytes often, so strings end
		}
		all = append(all, b)
	}
	check := func(what string, ev *Event) {
		t.Helper()
		ev.T, ev.Session, ev.Tx = 1, 2, 3 // what Session sets
		if ev.ParamTypes == nil {
			ev.ParamTypes = make([]uint32, 0, 4)
		}
		resetEvent(ev)
		want := Event{ParamTypes: ev.ParamTypes}
		if len(ev.ParamTypes) != 0 || !reflect.DeepEqual(*ev, want) {
			t.Fatalf("%s: after resetEvent %+v", what, *ev)
		}
	}
	for _, typ := range []byte("QPBDCESHF") {
		for _, b := range all {
			for _, truncated := range []bool{false, true} {
				var ev Event
				if !decodeFrontend(&ev, typ, b, truncated, false) {
					t.Fatalf("%c %q: not recorded", typ, b)
				}
				check(string(typ)+" "+strconv.Quote(string(b)), &ev)
			}
		}
	}
	for _, b := range [][]byte{{'I'}, {'T'}, {'E'}, {'x'}, nil, {'I', 'I'}} {
		var ev Event
		decodeBackend(&ev, 'Z', b)
		check("Z "+strconv.Quote(string(b)), &ev)
	}
	// A rarer kind is cleared whole.
	ev := Event{Kind: Error, SQLState: "42P01", Message: "m", Completed: new(int), Invalid: "x"}
	check("error", &ev)
}

// TestDirectTakes checks that the direct path takes the messages it is
// for, as the drivers send them, and refuses malformed ones and the kinds
// it is not for (FuzzDirect checks what it writes).
func TestDirectTakes(t *testing.T) {
	for _, m := range []encoder{
		&pgproto3.Query{String: "SELECT 1"},
		&pgproto3.Parse{Name: "s1", Query: "SELECT $1, $2", ParameterOIDs: []uint32{23, 25}},
		&pgproto3.Parse{Query: "SELECT 1"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{[]byte("x"), nil}, ResultFormatCodes: []int16{0}},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 10},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Flush{},
	} {
		raw, err := m.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := appendDirect(nil, raw[0], raw[5:]); !ok {
			t.Errorf("direct path refused %T %q", m, raw)
		}
	}
	for _, st := range []byte("ITE") {
		if _, ok := appendReady(nil, []byte{st}); !ok {
			t.Errorf("direct path refused ReadyForQuery %q", st)
		}
	}
	for _, refused := range []struct {
		typ  byte
		body string
	}{
		{'Q', "SELECT 1"}, {'Q', "SELECT 1\x00x"}, {'P', "s\x00q\x00\x00\x01"}, {'D', "X\x00"},
		{'E', "\x00\x00\x00"}, {'S', "x"}, {'F', "\x00\x00\x04\xd2\x00\x00\x00\x00\x00\x00"},
		{'c', ""}, {'f', "oops\x00"},
	} {
		if _, ok := appendDirect(nil, refused.typ, []byte(refused.body)); ok {
			t.Errorf("direct path took %q %q", refused.typ, refused.body)
		}
	}
}
