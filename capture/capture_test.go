package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgproto3"
)

// wireMsg encodes a protocol message and returns its type byte and body.
func wireMsg(t testing.TB, m interface {
	Encode([]byte) ([]byte, error)
}) (byte, []byte) {
	b, err := m.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b[0], b[5:]
}

func front(t testing.TB, s *Session, m interface {
	Encode([]byte) ([]byte, error)
}) {
	typ, body := wireMsg(t, m)
	s.Frontend(typ, body, len(body))
}

func back(t testing.TB, s *Session, m interface {
	Encode([]byte) ([]byte, error)
}) {
	typ, body := wireMsg(t, m)
	s.Backend(typ, body)
}

func readAll(t *testing.T, data []byte) (Header, []*Event, *Reader) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), "test.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var evs []*Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return r.Header(), evs, r
}

// brief keeps the fields a test compares.
func brief(evs []*Event) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		e := *ev
		e.T, e.Line = 0, 0
		out[i] = e
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{Upstream: "postgres://app:secret@db:5432/app", Mode: "record"}, Options{})
	s := w.StartSession(SessionInfo{ClientAddr: "127.0.0.1:5555", User: "app", Database: "app", ApplicationName: "billing",
		Params: map[string]string{"search_path": "app", "password": "hunter2", "user": "app", "application_name": "billing"}})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	front(t, s, &pgproto3.Query{String: "SET search_path = app"})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	front(t, s, &pgproto3.Parse{Name: "stmtcache_1", Query: "SELECT $1::int", ParameterOIDs: []uint32{23}})
	front(t, s, &pgproto3.Bind{DestinationPortal: "", PreparedStatement: "stmtcache_1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{[]byte("TOPSECRETVALUE")}})
	front(t, s, &pgproto3.Describe{ObjectType: 'P', Name: ""})
	front(t, s, &pgproto3.Execute{Portal: "", MaxRows: 10})
	front(t, s, &pgproto3.Sync{})
	back(t, s, &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "22P02", Message: "invalid input", Detail: "DETAILSECRET"})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	front(t, s, &pgproto3.Query{String: "BEGIN"})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'T'})
	front(t, s, &pgproto3.Query{String: "COPY t FROM STDIN"})
	back(t, s, &pgproto3.CopyInResponse{})
	front(t, s, &pgproto3.CopyData{Data: []byte("ROWDATA")})
	front(t, s, &pgproto3.CopyDone{})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'T'})
	front(t, s, &pgproto3.FunctionCall{Function: 1234, Arguments: [][]byte{[]byte("ARGSECRET")}})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'T'})
	front(t, s, &pgproto3.Close{ObjectType: 'S', Name: "stmtcache_1"})
	front(t, s, &pgproto3.Flush{})
	back(t, s, &pgproto3.NotificationResponse{PID: 7, Channel: "jobs", Payload: "PAYLOADSECRET"})
	back(t, s, &pgproto3.DataRow{Values: [][]byte{[]byte("ROWSECRET")}})
	front(t, s, &pgproto3.Query{String: "COMMIT"})
	back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	s.End("client closed")
	s.Frontend('Q', []byte("SELECT 1\x00"), 9) // after End: ignored
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"secret", "hunter2", "TOPSECRETVALUE", "DETAILSECRET", "ROWDATA", "ARGSECRET", "PAYLOADSECRET", "ROWSECRET"} {
		if bytes.Contains(buf.Bytes(), []byte(secret)) {
			t.Errorf("capture contains %q:\n%s", secret, buf.String())
		}
	}
	h, evs, r := readAll(t, buf.Bytes())
	if h.Format != Format || h.Version != Version || h.Upstream != "postgres://app@db:5432/app" || h.Mode != "record" || h.Part != 1 || h.ID == "" {
		t.Errorf("header = %+v", h)
	}
	if tr := r.Trailer(); tr == nil || tr.Events != int64(len(evs)) || tr.Dropped != 0 {
		t.Errorf("trailer = %+v, %d events", r.Trailer(), len(evs))
	}
	if len(r.Warnings()) != 0 {
		t.Errorf("warnings: %v", r.Warnings())
	}
	want := []Event{
		{Session: 1, Tx: 0, Kind: SessionStart, Client: "127.0.0.1:5555", User: "app", Database: "app", ApplicationName: "billing", Params: map[string]string{"search_path": "app"}},
		{Session: 1, Tx: 1, Kind: Ready, Status: "I"},
		{Session: 1, Tx: 1, Kind: Query, SQL: "SET search_path = app"},
		{Session: 1, Tx: 1, Kind: Ready, Status: "I"},
		{Session: 1, Tx: 2, Kind: Parse, Name: "stmtcache_1", SQL: "SELECT $1::int", ParamTypes: []uint32{23}},
		{Session: 1, Tx: 2, Kind: Bind, Name: "stmtcache_1"},
		{Session: 1, Tx: 2, Kind: Describe, Target: "P"},
		{Session: 1, Tx: 2, Kind: Execute, MaxRows: 10},
		{Session: 1, Tx: 2, Kind: Sync},
		{Session: 1, Tx: 2, Kind: Error, SQLState: "22P02", Severity: "ERROR", Message: "invalid input", Completed: intp(0)},
		{Session: 1, Tx: 2, Kind: Ready, Status: "I"},
		{Session: 1, Tx: 3, Kind: Query, SQL: "BEGIN"},
		{Session: 1, Tx: 3, Kind: Ready, Status: "T"},
		{Session: 1, Tx: 3, Kind: Query, SQL: "COPY t FROM STDIN"},
		{Session: 1, Tx: 3, Kind: CopyStart, Direction: "in"},
		{Session: 1, Tx: 3, Kind: CopyEnd, From: "client"},
		{Session: 1, Tx: 3, Kind: Ready, Status: "T"},
		{Session: 1, Tx: 3, Kind: FunctionCall, OID: 1234},
		{Session: 1, Tx: 3, Kind: Ready, Status: "T"},
		{Session: 1, Tx: 3, Kind: Close, Target: "S", Name: "stmtcache_1"},
		{Session: 1, Tx: 3, Kind: Flush},
		{Session: 1, Tx: 3, Kind: Notification, Channel: "jobs"},
		{Session: 1, Tx: 3, Kind: Query, SQL: "COMMIT"},
		{Session: 1, Tx: 3, Kind: Ready, Status: "I"},
		{Session: 1, Tx: 4, Kind: SessionEnd, Reason: "client closed"},
	}
	got := brief(evs)
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w Event
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("event %d:\n got %+v\nwant %+v", i, g, w)
			}
		}
	}
	for i, ev := range evs {
		if ev.Line != i+2 {
			t.Errorf("event %d: line %d, want %d", i, ev.Line, i+2)
		}
		if i > 0 && ev.T < evs[i-1].T {
			t.Errorf("event %d: time goes back", i)
		}
	}
}

func TestConcurrentSessions(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	var wg sync.WaitGroup
	const sessions, queries = 8, 200
	for range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := w.StartSession(SessionInfo{User: "u"})
			var inner sync.WaitGroup
			inner.Add(2)
			go func() {
				defer inner.Done()
				for range queries {
					s.Frontend('Q', []byte("SELECT 1\x00"), 9)
				}
			}()
			go func() {
				defer inner.Done()
				for range queries {
					s.Backend('Z', []byte{'I'})
				}
			}()
			inner.Wait()
			s.End("done")
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, r := readAll(t, buf.Bytes())
	if want := sessions * (2*queries + 2); len(evs) != want {
		t.Fatalf("%d events, want %d", len(evs), want)
	}
	if r.Trailer().Events != int64(len(evs)) {
		t.Errorf("trailer %+v", r.Trailer())
	}
	lastTx := map[uint64]int64{}
	for _, ev := range evs {
		if ev.Tx < lastTx[ev.Session] {
			t.Fatalf("session %d: transaction number goes back at line %d", ev.Session, ev.Line)
		}
		lastTx[ev.Session] = ev.Tx
	}
}

// blockedWriter blocks every Write until release is closed.
type blockedWriter struct {
	release chan struct{}
	buf     bytes.Buffer
	mu      sync.Mutex
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func TestDropsInsteadOfBlocking(t *testing.T) {
	bw := &blockedWriter{release: make(chan struct{})}
	w := NewWriter(bw, Header{}, Options{QueueEvents: 8})
	s := w.StartSession(SessionInfo{})
	s.End("first") // makes the background goroutine flush, and block
	s2 := w.StartSession(SessionInfo{})
	const n = 10000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			s2.Frontend('Q', []byte("SELECT 1\x00"), 9)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Frontend blocked on a blocked writer")
	}
	dropped := w.Dropped()
	if dropped == 0 {
		t.Fatal("nothing dropped")
	}
	s2.End("second")
	close(bw.release)
	if err := w.Close(); !errors.As(err, new(*DroppedError)) {
		t.Fatalf("Close: %v, want a DroppedError", err)
	}
	_, evs, r := readAll(t, bw.buf.Bytes())
	tr := r.Trailer()
	if tr == nil || tr.Dropped != w.Dropped() || tr.Events != int64(len(evs)) {
		t.Fatalf("trailer %+v, %d events, dropped %d", tr, len(evs), w.Dropped())
	}
	if int64(len(evs))+tr.Dropped != n+4 {
		t.Errorf("%d written + %d dropped != %d", len(evs), tr.Dropped, n+4)
	}
	if len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], "dropped") {
		t.Errorf("warnings %v", r.Warnings())
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n > 0 {
		return 0, errors.New("disk full")
	}
	f.n++
	return len(p), nil
}

func TestWriteErrorStopsCapture(t *testing.T) {
	w := NewWriter(&failingWriter{}, Header{}, Options{})
	s := w.StartSession(SessionInfo{})
	s.End("x")
	s2 := w.StartSession(SessionInfo{})
	s2.Frontend('Q', []byte("SELECT 1\x00"), 9)
	err := w.Close()
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Close: %v", err)
	}
	if w.Dropped() == 0 {
		t.Error("no drops counted after a write error")
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cap.jsonl")
	w, err := Create(path, Header{Mode: "record"}, Options{MaxBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	s := w.StartSession(SessionInfo{User: "u"})
	const n = 200
	for range n {
		s.Frontend('Q', []byte("SELECT 1\x00"), 9)
	}
	s.End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for part := 1; ; part++ {
		p := PartPath(path, part)
		if _, err := os.Stat(p); err != nil {
			break
		}
		paths = append(paths, p)
		st, _ := os.Stat(p)
		if st.Size() > 2000 {
			t.Errorf("%s: %d bytes > MaxBytes", p, st.Size())
		}
	}
	if len(paths) < 3 {
		t.Fatalf("%d parts", len(paths))
	}
	checkPartTrailers(t, paths)
	if filepath.Base(paths[1]) != "cap.2.jsonl" {
		t.Errorf("second part %s", paths[1])
	}
	total := 0
	var id string
	warns, err := ReadFiles(paths, func(h Header, file string, ev *Event) error {
		if id == "" {
			id = h.ID
		}
		if h.ID != id || PartPath(path, h.Part) != file {
			t.Errorf("%s: header %+v", file, h)
		}
		total++
		return nil
	})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if total != n+2 {
		t.Errorf("%d events, want %d", total, n+2)
	}
}

func sampleCapture(t *testing.T) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{User: "u"})
	s.Frontend('Q', []byte("SELECT 1\x00"), 9)
	s.Backend('Z', []byte{'I'})
	s.Frontend('Q', []byte("SELECT 2\x00"), 9)
	s.End("x")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkPartTrailers checks that each part's trailer counts the events
// written to that part (late ones included, under Options.Redact).
func checkPartTrailers(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, evs, r := readAll(t, data)
		if tr := r.Trailer(); tr == nil || tr.Events != int64(len(evs)) {
			t.Fatalf("%s: trailer %+v, %d events", p, tr, len(evs))
		}
	}
}

func TestCrashCutLastLine(t *testing.T) {
	data := sampleCapture(t)
	lines := bytes.SplitAfter(data, []byte("\n"))
	// Drop the trailer and cut the last event in the middle.
	last := lines[len(lines)-3]
	cut := append(bytes.Join(lines[:len(lines)-3], nil), last[:len(last)/2]...)
	_, evs, r := readAll(t, cut)
	if len(evs) != 4 {
		t.Errorf("%d events before the cut, want 4", len(evs))
	}
	w := r.Warnings()
	if len(w) != 2 || !strings.Contains(w[0], "test.jsonl:6: the last line is cut short") || !strings.Contains(w[1], "no trailer") {
		t.Errorf("warnings %q", w)
	}
}

func TestReaderErrors(t *testing.T) {
	good := sampleCapture(t)
	header, rest, _ := bytes.Cut(good, []byte("\n"))
	tests := []struct {
		name, data, err string
	}{
		{"empty", "", "empty file"},
		{"not json", "hello\n", "not a pgpoolcheck capture"},
		{"other format", `{"format":"other","version":"1.0"}` + "\n", "not a pgpoolcheck capture"},
		{"major 2", `{"format":"pgpoolcheck-capture","version":"2.0"}` + "\n", `capture format version 2.0 is not supported`},
		{"bad version", `{"format":"pgpoolcheck-capture","version":"one"}` + "\n", `capture version "one"`},
		{"cut header", `{"format":"pgpoolcheck-captu`, "header line is cut short"},
		{"bad middle line", string(header) + "\n{nope\n" + string(rest), "test.jsonl:2: not a capture event"},
		{"no kind", string(header) + "\n{\"t\":1}\n", "without \"ev\""},
		{"after trailer", string(good) + `{"t":1,"s":1,"tx":1,"ev":"sync"}` + "\n", "after the trailer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tt.data), "test.jsonl")
			for err == nil {
				_, err = r.Next()
			}
			if err == io.EOF || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
	// A newer minor version with an unknown event kind and field reads.
	data := `{"format":"pgpoolcheck-capture","version":"1.7"}` + "\n" + `{"t":1,"s":1,"tx":1,"ev":"hologram","colour":"blue"}` + "\n"
	_, evs, _ := readAll(t, []byte(data))
	if len(evs) != 1 || evs[0].Kind != "hologram" {
		t.Errorf("minor version: %+v", evs)
	}
}

func TestMalformedMessages(t *testing.T) {
	tests := []struct {
		name    string
		typ     byte
		body    string
		total   int // 0: len(body)
		kind    Kind
		invalid string
		check   func(*Event) string
	}{
		{"query no zero", 'Q', "SELECT 1", 0, Query, "string without terminating zero byte", nil},
		{"query trailing", 'Q', "SELECT 1\x00x", 0, Query, "trailing bytes after the message", nil},
		{"query prefix", 'Q', "SELECT 'ab\xc3", 100, Query, "", func(e *Event) string {
			if !e.Truncated || e.SQL != "SELECT 'ab" {
				return "want truncated SQL without the cut rune"
			}
			return ""
		}},
		{"parse short oids", 'P', "s\x00SELECT $1\x00\x00\x02\x00\x00\x00\x17", 0, Parse, "message too short", nil},
		{"parse negative", 'P', "s\x00q\x00\xff\xff", 0, Parse, "negative parameter count", nil},
		{"parse prefix", 'P', "s\x00SELECT $1\x00\x00\x02\x00\x00\x00\x17", 100, Parse, "", func(e *Event) string {
			if len(e.ParamTypes) != 1 || e.ParamTypes[0] != 23 {
				return "want the OIDs that are there"
			}
			return ""
		}},
		{"bind empty", 'B', "", 0, Bind, "string without terminating zero byte", nil},
		{"bind bad length", 'B', "\x00\x00\x00\x00\x00\x01\xff\xff\xff\xf0", 0, Bind, "invalid parameter length", nil},
		{"bind value overruns", 'B', "\x00\x00\x00\x00\x00\x01\x00\x00\x00\x09ab", 0, Bind, "message too short", nil},
		{"bind prefix", 'B', "p\x00s\x00\x00\x00\x00\x01\x00\x00", 1000, Bind, "", func(e *Event) string {
			if e.Portal != "p" || e.Name != "s" {
				return "want the names"
			}
			return ""
		}},
		{"describe bad target", 'D', "X\x00", 0, Describe, "unknown describe or close target", nil},
		{"close empty", 'C', "", 0, Close, "message too short", nil},
		{"execute short", 'E', "\x00\x00", 0, Execute, "message too short", nil},
		{"function short", 'F', "\x00", 0, FunctionCall, "message too short", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev Event
			total := tt.total
			if total == 0 {
				total = len(tt.body)
			}
			if !decodeFrontend(&ev, tt.typ, []byte(tt.body), len(tt.body) < total, false) {
				t.Fatal("not recorded")
			}
			if ev.Kind != tt.kind || ev.Invalid != tt.invalid {
				t.Errorf("kind %q invalid %q, want %q %q", ev.Kind, ev.Invalid, tt.kind, tt.invalid)
			}
			if tt.check != nil {
				if msg := tt.check(&ev); msg != "" {
					t.Errorf("%s: %+v", msg, ev)
				}
			}
		})
	}
	backTests := []struct {
		typ     byte
		body    string
		invalid string
	}{
		{'Z', "", "message too short"},
		{'Z', "X", "unknown transaction status"},
		{'E', "Cabc", "string without terminating zero byte"},
		{'A', "\x00\x00", "message too short"},
	}
	for _, tt := range backTests {
		var ev Event
		decodeBackend(&ev, tt.typ, []byte(tt.body))
		if ev.Invalid != tt.invalid {
			t.Errorf("%c %q: invalid %q, want %q", tt.typ, tt.body, ev.Invalid, tt.invalid)
		}
	}
}

func TestRedact(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{Redact: true})
	s := w.StartSession(SessionInfo{})
	query := []byte("SELECT * FROM users WHERE email = 'alice@example.com' AND pin = 4321\x00")
	s.Frontend('Q', query, len(query))
	s.Backend('Z', []byte{'I'})
	parse := []byte("\x00UPDATE t SET secret = 'x9x9x9' WHERE id = $1\x00\x00\x00")
	s.Frontend('P', parse, len(parse))
	broken := []byte("SELEC 'broken-literal\x00")
	s.Frontend('Q', broken, len(broken))
	s.Backend('E', []byte("SERROR\x00C22P02\x00Minvalid input syntax for type integer: \"quoted-value\"\x00\x00"))
	s.Backend('Z', []byte{'I'})
	s.End("x")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"alice", "= 4321", "x9x9x9", "broken-literal", "quoted-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("redacted capture contains %q:\n%s", secret, out)
		}
	}
	h, evs, _ := readAll(t, buf.Bytes())
	if !h.Redacted {
		t.Error("header not marked redacted")
	}
	if evs[1].SQL != "SELECT * FROM users WHERE email = $1 AND pin = $2" {
		t.Errorf("query redacted to %q", evs[1].SQL)
	}
	if !strings.Contains(evs[3].SQL, "WHERE id = $1") || strings.Contains(evs[3].SQL, "'") {
		t.Errorf("parse redacted to %q", evs[3].SQL)
	}
	if evs[4].SQL != "" || evs[4].Redact == "" || evs[4].Truncated || evs[3].Truncated {
		t.Errorf("unparsable statement: %+v", evs[4])
	}
	if evs[5].Kind != Error || evs[5].SQLState != "22P02" || evs[5].Message != "" {
		t.Errorf("error event %+v", evs[5])
	}
}

func TestSafeUpstream(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://app:secret@db:5432/app?sslmode=require", "postgres://app@db:5432/app?sslmode=require"},
		{"postgres://db/app?password=secret&sslmode=disable", "postgres://db/app?sslmode=disable"},
		{"host=db user=app password=secret dbname=app", "host=db user=app dbname=app"},
		{"host=db password = secret", "(connection string with a password left out)"},
		{"postgres://a:b@[::1", "(unreadable connection string)"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SafeUpstream(tt.in); got != tt.want {
			t.Errorf("SafeUpstream(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\n\nr\rt\t\x01", `"q\"b\\n\nr\rt\t\u0001"`},
		{"é€😀", `"é€😀"`},
		{"bad\xffend\xc3", `"bad\ufffdend\ufffd"`},
	}
	for _, tt := range tests {
		if got := string(appendString(nil, tt.in)); got != tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestNilSession(t *testing.T) {
	var s *Session
	s.Frontend('Q', []byte("x\x00"), 2)
	s.Backend('Z', []byte{'I'})
	s.End("x")
}

// TestHeldMessages checks the transaction numbers of client messages
// recorded before the ReadyForQuery of an earlier sync point: pipelining,
// or the client reader winning the race against the server pump.
func TestHeldMessages(t *testing.T) {
	q := func(sql string) (byte, []byte) { return 'Q', append([]byte(sql), 0) }
	type step struct {
		front bool
		typ   byte
		body  []byte
	}
	F := func(typ byte, body []byte) step { return step{true, typ, body} }
	B := func(typ byte, body []byte) step { return step{false, typ, body} }
	Q := func(sql string) step { typ, body := q(sql); return F(typ, body) }
	Z := func(status byte) step { return B('Z', []byte{status}) }
	tests := []struct {
		name  string
		steps []step
		want  string // kind:tx, in file order
	}{
		{"race", []step{Q("SELECT 1"), Q("SELECT 2"), Z('I'), Z('I')},
			"query:1 ready:1 query:2 ready:2"},
		{"pipelined in a transaction", []step{Q("BEGIN"), Q("SELECT 1"), Z('T'), Z('T'), Q("COMMIT"), Z('I'), Q("SELECT 2"), Z('I')},
			"query:1 ready:1 query:1 ready:1 query:1 ready:1 query:2 ready:2"},
		{"extended pipeline", []step{F('P', []byte("\x00SELECT 1\x00\x00\x00")), F('S', nil), F('B', []byte("\x00\x00\x00\x00\x00\x00\x00\x00")), F('E', []byte("\x00\x00\x00\x00\x00")), F('S', nil), Z('I'), Z('I')},
			"parse:1 sync:1 ready:1 bind:2 execute:2 sync:2 ready:2"},
		{"copy in", []step{Q("COPY t FROM STDIN"), B('G', []byte{0, 0, 0}), F('d', []byte("1\n")), F('c', nil), Z('I'), Q("SELECT 1"), Z('I')},
			"query:1 copy_start:1 copy_end:1 ready:1 query:2 ready:2"},
		{"error then sync", []step{F('P', []byte("\x00SELEC\x00\x00\x00")), F('S', nil), B('E', []byte("SERROR\x00C42601\x00Msyntax error\x00\x00")), Z('I'), Q("SELECT 1"), Z('I')},
			"parse:1 sync:1 error:1 ready:1 query:2 ready:2"},
		{"unanswered at end", []step{Q("SELECT pg_sleep(10)"), Q("SELECT 1")},
			"query:1 query:1 session_end:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, Header{}, Options{})
			s := w.StartSession(SessionInfo{})
			for _, st := range tt.steps {
				if st.front {
					s.Frontend(st.typ, st.body, len(st.body))
				} else {
					s.Backend(st.typ, st.body)
				}
			}
			if tt.name == "unanswered at end" {
				s.End("x")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, evs, _ := readAll(t, buf.Bytes())
			var got []string
			for i, ev := range evs[1:] {
				got = append(got, fmt.Sprintf("%s:%d", ev.Kind, ev.Tx))
				if i > 0 && ev.T < evs[i].T {
					t.Errorf("time goes back at %s", ev.Kind)
				}
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}

func TestHeldOverflow(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{})
	const n = maxHeld + 50
	for range n {
		s.Frontend('S', nil, 0)
	}
	s.End("x")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, _ := readAll(t, buf.Bytes())
	if len(evs) != n+2 {
		t.Errorf("%d events, want %d", len(evs), n+2)
	}
}

func intp(i int) *int { return &i }

// TestErrorCompleted: an error in the extended protocol says how many of
// the pipeline's Executes completed before it; a simple Query's does not.
func TestErrorCompleted(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{User: "u"})
	parse := []byte("\x00SELECT 1\x00\x00\x00")
	bind := []byte("\x00\x00\x00\x00\x00\x00\x00\x00")
	exec := []byte("\x00\x00\x00\x00\x00")
	// Two statements and a Sync; the first completes, the second fails.
	for range 2 {
		s.Frontend('P', parse, len(parse))
		s.Frontend('B', bind, len(bind))
		s.Frontend('E', exec, len(exec))
	}
	s.Frontend('S', nil, 0)
	s.Backend('1', nil)
	s.Backend('2', nil)
	s.Backend('C', []byte("SELECT 1\x00"))
	s.Backend('1', nil)
	s.Backend('2', nil)
	s.Backend('E', []byte("SERROR\x00C22012\x00Mdivision by zero\x00\x00"))
	s.Backend('Z', []byte{'I'})
	// A simple Query that fails.
	s.Frontend('Q', []byte("SELECT 1/0\x00"), 11)
	s.Backend('E', []byte("SERROR\x00C22012\x00Mdivision by zero\x00\x00"))
	s.Backend('Z', []byte{'I'})
	// A pipeline whose error reaches the client before it sends the Sync.
	s.Frontend('P', parse, len(parse))
	s.Frontend('B', bind, len(bind))
	s.Frontend('E', exec, len(exec))
	s.Frontend('H', nil, 0)
	s.Backend('E', []byte("SERROR\x00C22012\x00Mdivision by zero\x00\x00"))
	s.Frontend('S', nil, 0)
	s.Backend('Z', []byte{'I'})
	s.End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, "test")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == Error {
			if ev.Completed == nil {
				got = append(got, "none")
			} else {
				got = append(got, fmt.Sprint(*ev.Completed))
			}
		}
	}
	if want := []string{"1", "none", "0"}; !slices.Equal(got, want) {
		t.Errorf("completed counts %v, want %v", got, want)
	}
}

// TestFrontendBatched: a message from the same read as the one before
// takes that message's time, never one before the session's latest event,
// and the next message from a fresh read reads the clock again.
func TestFrontendBatched(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{})
	parse := []byte("\x00SELECT 1\x00\x00\x00")
	bind := []byte("\x00\x00\x00\x00\x00\x00\x00\x00")
	s.FrontendBatched('P', parse, len(parse)) // nothing before it: reads the clock
	time.Sleep(2 * time.Millisecond)
	s.FrontendBatched('B', bind, len(bind))
	s.FrontendBatched('S', nil, 0)
	time.Sleep(2 * time.Millisecond)
	s.Backend('Z', []byte{'I'})
	s.FrontendBatched('S', nil, 0) // after the ReadyForQuery: not before it
	time.Sleep(2 * time.Millisecond)
	s.Frontend('S', nil, 0)
	s.End("x")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, _ := readAll(t, buf.Bytes())
	evs = evs[1:] // session_start
	if len(evs) < 6 {
		t.Fatalf("got %d events", len(evs))
	}
	p, b, s1, z, s2, s3 := evs[0], evs[1], evs[2], evs[3], evs[4], evs[5]
	if p.T == 0 || b.T != p.T || s1.T != p.T {
		t.Errorf("batched times: parse %d, bind %d, sync %d; want all the same, not 0", p.T, b.T, s1.T)
	}
	if z.T-p.T < int64(2*time.Millisecond) {
		t.Errorf("ready at %d, only %d after the batch", z.T, z.T-p.T)
	}
	if s2.T != z.T {
		t.Errorf("sync batched after ready at %d: %d, want %d", z.T, s2.T, z.T)
	}
	if s3.T-s2.T < int64(2*time.Millisecond) {
		t.Errorf("sync from a fresh read at %d, want at least 2ms after %d", s3.T, s2.T)
	}
}

// TestInterner: strings handed out equal their bytes, repeated ones come
// from the cache, and long ones are not kept.
func TestInterner(t *testing.T) {
	var in interner
	a := in.get([]byte("stmt_1"))
	b := in.get([]byte("stmt_1"))
	if a != "stmt_1" || b != "stmt_1" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("repeated string not shared: %q %q", a, b)
	}
	for i := range internSlots { // push stmt_1 out
		in.get([]byte(fmt.Sprintf("other_%d", i)))
	}
	if c := in.get([]byte("stmt_1")); c != "stmt_1" || unsafe.StringData(c) == unsafe.StringData(a) {
		t.Errorf("evicted string still shared")
	}
	long := bytes.Repeat([]byte("x"), maxInterned+1)
	if in.get(long) != string(long) {
		t.Error("long string changed")
	}
	for _, s := range in.s {
		if len(s) > maxInterned {
			t.Error("long string kept in the cache")
		}
	}
	if in.get(nil) != "" || (*interner)(nil).get([]byte("q")) != "q" {
		t.Error("empty or nil cache")
	}
}

// TestOneLetterAllocs: the one-letter fields (status, target) cost no
// allocation per event.
func TestOneLetterAllocs(t *testing.T) {
	var s string
	if n := testing.AllocsPerRun(100, func() { s = oneLetter('T') }); n != 0 || s != "T" {
		t.Errorf("oneLetter('T') = %q with %v allocations", s, n)
	}
}

// parseMsg encodes a Parse of sql with the given parameter types.
func parseMsg(t *testing.T, name, sql string, types ...uint32) []byte {
	_, body := wireMsg(t, &pgproto3.Parse{Name: name, Query: sql, ParameterOIDs: types})
	return body
}

// TestBatchTypeLists checks that events keep their own parameter-type
// lists while batches are recycled and held messages are moved: each Parse
// must come out with the types it was sent with.
func TestBatchTypeLists(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{})
	const rounds = 3000
	var want [][]uint32
	for i := range rounds {
		types := []uint32{uint32(i)}
		if i%3 == 0 {
			types = append(types, uint32(i+1), uint32(i+2))
		}
		if i%7 == 0 {
			// A pipelining client: the second round trip is held until
			// the first is answered.
			next := []uint32{uint32(i + 1000000)}
			p1, p2 := parseMsg(t, "", "SELECT $1", types...), parseMsg(t, "", "SELECT $1", next...)
			s.Frontend('P', p1, len(p1))
			s.Frontend('S', nil, 0)
			s.Frontend('P', p2, len(p2))
			s.Frontend('S', nil, 0)
			s.Backend('Z', []byte{'I'})
			s.Backend('Z', []byte{'I'})
			want = append(want, types, next)
			continue
		}
		p := parseMsg(t, "s", "SELECT $1", types...)
		s.Frontend('P', p, len(p))
		s.Frontend('S', nil, 0)
		s.Backend('Z', []byte{'I'})
		want = append(want, types)
		if i%500 == 0 {
			time.Sleep(batchEvery + time.Millisecond) // let the writer recycle batches
		}
	}
	s.End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, evs, _ := readAll(t, buf.Bytes())
	var got [][]uint32
	for _, ev := range evs {
		if ev.Kind == Parse {
			got = append(got, ev.ParamTypes)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d parses, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("parse %d: types %v, want %v", i, got[i], want[i])
		}
	}
}

// lockedBuffer is a bytes.Buffer safe to read while the writer writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestUnansweredReachesFile checks that the events of a session that goes
// quiet reach the file while the session lives: a round trip answered, one
// the server has not answered yet (a long query), and notifications.
func TestUnansweredReachesFile(t *testing.T) {
	var buf lockedBuffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{})
	one := []byte("SELECT 1\x00")
	s.Frontend('Q', one, len(one))
	s.Backend('Z', []byte{'I'})
	q := []byte("SELECT pg_sleep(3600)\x00")
	s.Frontend('Q', q, len(q))
	_, note := wireMsg(t, &pgproto3.NotificationResponse{PID: 1, Channel: "jobs"})
	s.Backend('A', note)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(buf.String(), `"channel":"jobs"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the query and notification were not written while the session lived:\n%s", buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, want := range []string{`"sql":"SELECT 1"`, `"status":"I"`, "pg_sleep(3600)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s is missing:\n%s", want, buf.String())
		}
	}
	s.End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRedactKeepsOrder records the same pipelined traffic with and without
// Options.Redact, the redacted one into small rotated parts: the writer
// puts each event it normalises back in its place among the events the
// session encoded, so only the SQL may differ.
func TestRedactKeepsOrder(t *testing.T) {
	record := func(s *Session) {
		for i := range 40 {
			sql := fmt.Sprintf("SELECT %d FROM t WHERE a = $1 AND b = 'lit%d'", i, i)
			front(t, s, &pgproto3.Parse{Query: sql, ParameterOIDs: []uint32{23}})
			front(t, s, &pgproto3.Bind{})
			front(t, s, &pgproto3.Describe{ObjectType: 'P'})
			front(t, s, &pgproto3.Execute{})
			front(t, s, &pgproto3.Sync{})
			front(t, s, &pgproto3.Query{String: fmt.Sprintf("SET x = %d", i)})
		}
		for range 40 {
			back(t, s, &pgproto3.ParseComplete{})
			back(t, s, &pgproto3.BindComplete{})
			back(t, s, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
			back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'I'})
			back(t, s, &pgproto3.CommandComplete{CommandTag: []byte("SET")})
			back(t, s, &pgproto3.ReadyForQuery{TxStatus: 'I'})
		}
		s.End("done")
	}
	var plain bytes.Buffer
	w := NewWriter(&plain, Header{}, Options{})
	record(w.StartSession(SessionInfo{User: "u"}))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, want, _ := readAll(t, plain.Bytes())

	path := filepath.Join(t.TempDir(), "cap.jsonl")
	rw, err := Create(path, Header{}, Options{Redact: true, MaxBytes: 4000})
	if err != nil {
		t.Fatal(err)
	}
	record(rw.StartSession(SessionInfo{User: "u"}))
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for part := 1; ; part++ {
		if _, err := os.Stat(PartPath(path, part)); err != nil {
			break
		}
		paths = append(paths, PartPath(path, part))
	}
	if len(paths) < 3 {
		t.Fatalf("%d parts", len(paths))
	}
	checkPartTrailers(t, paths)
	var got []*Event
	if _, err := ReadFiles(paths, func(_ Header, _ string, ev *Event) error {
		got = append(got, ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events redacted, %d plain", len(got), len(want))
	}
	for i := range want {
		a, b := *want[i], *got[i]
		a.T, b.T, a.Line, b.Line = 0, 0, 0, 0 // two recordings, parts
		if a.SQL != "" {
			if strings.Contains(b.SQL, "lit") || b.SQL == "" {
				t.Fatalf("event %d: SQL %q not redacted", i, b.SQL)
			}
			a.SQL, b.SQL = "", ""
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("event %d: redacted %+v, plain %+v", i, b, a)
		}
	}
}

// TestBodyReused: Frontend's body is only valid during the call (the
// relay's read buffer is filled again right after). An event kept longer
// than the call, held for a ReadyForQuery or left to the writer under
// --redact, must not see what the buffer holds later.
func TestBodyReused(t *testing.T) {
	for _, redact := range []bool{false, true} {
		t.Run(fmt.Sprintf("redact=%v", redact), func(t *testing.T) {
			var out bytes.Buffer
			w := NewWriter(&out, Header{}, Options{Redact: redact})
			s := w.StartSession(SessionInfo{})
			buf := make([]byte, 0, 256)
			send := func(typ byte, body ...string) {
				buf = buf[:0]
				for _, f := range body {
					buf = append(append(buf, f...), 0)
				}
				s.Frontend(typ, buf, len(buf))
			}
			send('Q', "SELECT 1")
			// Sent before the answer to the first: held.
			send('P', "stmt_a", "SELECT 'aaaa' FROM t WHERE id = $1")
			buf = append(buf[:0], make([]byte, 64)...)
			s.Frontend('H', nil, 0)
			copy(buf, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX")
			s.Backend('Z', []byte{'I'})
			send('P', "", "SELECT 'bbbb'")
			copy(buf, "YYYYYYYYYYYYYYYY")
			s.Frontend('S', nil, 0)
			s.Backend('Z', []byte{'I'})
			s.End("done")
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, evs, _ := readAll(t, out.Bytes())
			var got []string
			for _, ev := range evs {
				switch ev.Kind {
				case Query, Parse:
					got = append(got, fmt.Sprintf("%s %q %q", ev.Kind, ev.Name, ev.SQL))
				}
			}
			want := []string{`query "" "SELECT 1"`, `parse "stmt_a" "SELECT 'aaaa' FROM t WHERE id = $1"`, `parse "" "SELECT 'bbbb'"`}
			if redact {
				want = []string{`query "" "SELECT $1"`, `parse "stmt_a" "SELECT $2 FROM t WHERE id = $1"`, `parse "" "SELECT $1"`}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestRoundTripAllocs: recording a simple-protocol round trip whose
// statement text changes every time (literals) allocates nothing in the
// session once its batches exist.
func TestRoundTripAllocs(t *testing.T) {
	w := NewWriter(io.Discard, Header{}, Options{QueueEvents: 1 << 20})
	defer w.Close()
	s := w.StartSession(SessionInfo{})
	q := []byte("SELECT abalance FROM pgbench_accounts WHERE aid = 1000000\x00")
	done, idle := []byte("SELECT 1\x00"), []byte{'I'}
	i := 0
	round := func() {
		i++
		q[len(q)-2] = byte('0' + i%10)
		s.Frontend('Q', q, len(q))
		s.Backend('C', done)
		s.Backend('Z', idle)
	}
	for range 10 {
		round()
	}
	// A batch per round trip comes from the free list once the writer has
	// recycled some; count only the session's own allocations.
	w.qmu.Lock()
	for range 200 {
		w.free = append(w.free, &batch{b: make([]byte, 0, batchBytes)})
	}
	w.qmu.Unlock()
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("%v allocations per round trip", n)
	}
}

// TestPlain8 compares appendString's eight-byte test with a byte-by-byte
// one: every byte value in every position of a plain word, and random
// words.
func TestPlain8(t *testing.T) {
	plain := func(w string) bool {
		for i := 0; i < len(w); i++ {
			if c := w[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	check := func(w []byte) {
		if got, want := plain8(load8(string(w))), plain(string(w)); got != want {
			t.Fatalf("plain8(%q) = %v, want %v", w, got, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			check(w)
		}
	}
	seed := uint64(1)
	for range 200000 {
		seed = seed*6364136223846793005 + 1442695040888963407
		var w [8]byte
		for i := range w {
			// Mostly near the edges: control bytes, '"', '\\', 0x7f, 0x80.
			w[i] = []byte{0x1f, 0x20, 0x21, '"', '\\', 'a', 0x7f, 0x80, 0xff, 0x00, 0x5b, 0x5d}[(seed>>(8*i))%12]
		}
		check(w[:])
	}
}

// TestDigits checks appendUint's digit count around every power of ten.
func TestDigits(t *testing.T) {
	vals := []uint64{0, 1, 9, math.MaxUint64, math.MaxUint64 - 1}
	for p := uint64(10); ; p *= 10 {
		vals = append(vals, p-1, p, p+1)
		if p > math.MaxUint64/10 {
			break
		}
	}
	for _, v := range vals {
		if got, want := digits(v), len(strconv.FormatUint(v, 10)); got != want {
			t.Errorf("digits(%d) = %d, want %d", v, got, want)
		}
		if got := string(appendUint([]byte("x"), v)); got != "x"+strconv.FormatUint(v, 10) {
			t.Errorf("appendUint(%d) = %q", v, got)
		}
	}
}

// TestQuietSessionBatch checks where a session's batch goes between round
// trips: after a ReadyForQuery the session keeps an empty batch for its
// next round trip, and the writer's sweep takes it back, so that a quiet
// session holds none.
func TestQuietSessionBatch(t *testing.T) {
	var buf lockedBuffer
	w := NewWriter(&buf, Header{}, Options{})
	s := w.StartSession(SessionInfo{User: "u"})
	q := []byte("SELECT 1\x00")
	s.Frontend('Q', q, len(q))
	s.Backend('Z', []byte{'I'})
	s.mu.Lock()
	kept := s.out
	s.mu.Unlock()
	if kept == nil || kept.n != 0 || len(kept.b) != 0 {
		t.Fatalf("after a round trip the session holds %+v, want an empty batch", kept)
	}
	w.sweep(nil)
	s.mu.Lock()
	left := s.out
	s.mu.Unlock()
	if left != nil {
		t.Fatalf("after the sweep the quiet session still holds a batch")
	}
	w.qmu.Lock()
	found := slices.Contains(w.free, kept)
	w.qmu.Unlock()
	if !found {
		t.Errorf("the swept batch is not on the free list")
	}
	s.Frontend('Q', q, len(q))
	s.Backend('Z', []byte{'I'})
	s.End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), `"ev":"query"`); got != 2 {
		t.Errorf("%d queries in the file, want 2:\n%s", got, buf.String())
	}
}

// TestCreateKeepsExisting: a recorder restarted on an existing capture
// never truncates it: it writes to the next free part, and rotation goes
// on from there; an empty file is reused.
func TestCreateKeepsExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cap.jsonl")
	var files []string // the files the last record wrote
	record := func(opt Options, queries int) string {
		w, err := Create(path, Header{Mode: "record"}, opt)
		if err != nil {
			t.Fatal(err)
		}
		at := w.Path()
		s := w.StartSession(SessionInfo{User: "u"})
		for range queries {
			s.Frontend('Q', []byte("SELECT 1\x00"), 9)
		}
		s.End("done")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files = w.Files()
		if len(files) == 0 || files[0] != at {
			t.Fatalf("Files() = %v, want it to start with %s", files, at)
		}
		return at
	}
	if at := record(Options{}, 3); at != path {
		t.Fatalf("first capture written to %s", at)
	}
	first, _ := os.ReadFile(path)
	if at := record(Options{}, 3); at != PartPath(path, 2) {
		t.Fatalf("restarted capture written to %s, want part 2", at)
	}
	if len(files) != 1 {
		t.Errorf("restarted capture: Files() = %v, want only part 2", files)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, first) {
		t.Fatal("the existing capture changed")
	}
	// Rotating from part 3 on skips nothing and overwrites nothing.
	if at := record(Options{MaxBytes: 1000}, 60); at != PartPath(path, 3) {
		t.Fatalf("third capture written to %s", at)
	}
	var parts []string
	for n := 1; ; n++ {
		if _, err := os.Stat(PartPath(path, n)); err != nil {
			break
		}
		parts = append(parts, PartPath(path, n))
	}
	if len(parts) < 5 {
		t.Fatalf("%d parts, want the two earlier captures and at least three of the rotated one", len(parts))
	}
	checkPartTrailers(t, parts)
	if !slices.Equal(files, parts[2:]) {
		t.Errorf("rotated capture: Files() = %v, want %v", files, parts[2:])
	}
	ids, instances := map[string]int{}, map[string]int{}
	var firstID string
	if _, err := ReadFiles(parts, func(h Header, file string, ev *Event) error {
		if PartPath(path, h.Part) != file {
			t.Errorf("%s: header part %d", file, h.Part)
		}
		if file == path {
			firstID = h.ID
			if h.Instance != "" {
				t.Errorf("%s: the first capture has instance %q; want none (it is its own)", file, h.Instance)
			}
		}
		ids[h.ID]++
		instances[h.InstanceID()]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Errorf("%d captures in the parts, want 3", len(ids))
	}
	// The restarted recorder's captures continue the first one's instance.
	if len(instances) != 1 || instances[firstID] == 0 {
		t.Errorf("instances %v, want only the first capture's %s", instances, firstID)
	}
	// An empty file is reused.
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Create(empty, Header{}, Options{})
	if err != nil || w.Path() != empty {
		t.Fatalf("empty file: %v, %s", err, w.Path())
	}
	w.Close()
}

// TestSkipCorrupt: with SkipCorrupt a bad line in the middle is skipped
// and counted; the events around it are read.
func TestSkipCorrupt(t *testing.T) {
	good := sampleCapture(t)
	lines := bytes.SplitAfter(good, []byte("\n"))
	bad := append(append(append([]byte{}, bytes.Join(lines[:2], nil)...), "{nope\n{\"t\":1}\n"...), bytes.Join(lines[2:], nil)...)
	r, err := NewReader(bytes.NewReader(bad), "test.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r.SkipCorrupt()
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	_, want, _ := readAll(t, good)
	if n != len(want) {
		t.Errorf("%d events, want %d", n, len(want))
	}
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], "2 corrupt lines skipped (the first at line 3)") {
		t.Errorf("warnings %q", w)
	}
}
