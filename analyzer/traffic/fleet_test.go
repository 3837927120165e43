package traffic_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/analyzer/traffic"
	"github.com/pgpoolcheck/pgpoolcheck/capture"
)

// writeCapture writes a capture file: a header with id, start and part,
// then the event lines and a trailer.
func writeCapture(t *testing.T, path, id string, start time.Time, part int, events ...string) {
	t.Helper()
	h := capture.Header{Format: capture.Format, Version: capture.Version, ID: id, Part: part, Start: start, Mode: "record"}
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(head)
	b.WriteByte('\n')
	for _, ev := range events {
		b.WriteString(ev + "\n")
	}
	fmt.Fprintf(&b, `{"trailer":true,"t":999000000,"events":%d,"dropped":0}`+"\n", len(events))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

var fleetStart = time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)

// TestAnalyzeFleetSessionsStayApart: every proxy instance numbers its
// sessions from 1. Instance A's session 1 sets search_path and is still
// open when its capture ends; instance B's session 1 runs a later
// transaction. Mixed into one session they would make a session-set
// finding; kept apart (also when the two captures carry the same
// capture_id but started at different times) they make none.
func TestAnalyzeFleetSessionsStayApart(t *testing.T) {
	a := []string{
		`{"t":1000000,"s":1,"tx":0,"ev":"session_start","user":"app","database":"app","application_name":"a"}`,
		`{"t":2000000,"s":1,"tx":1,"ev":"query","sql":"SET search_path = a"}`,
		`{"t":3000000,"s":1,"tx":1,"ev":"ready","status":"I"}`,
	}
	b := []string{
		`{"t":1000000,"s":1,"tx":1,"ev":"query","sql":"SELECT 1"}`,
		`{"t":2000000,"s":1,"tx":1,"ev":"ready","status":"I"}`,
		`{"t":3000000,"s":1,"tx":2,"ev":"query","sql":"SELECT 2"}`,
		`{"t":4000000,"s":1,"tx":2,"ev":"ready","status":"I"}`,
		`{"t":5000000,"s":1,"tx":3,"ev":"session_end","reason":"client closed"}`,
	}
	for _, tt := range []struct {
		name     string
		idB      string
		offsetB  time.Duration
		captures int
	}{
		{"distinct ids", "bbbbbbbbbbbbbbbb", time.Millisecond, 2},
		{"same id, other start", "aaaaaaaaaaaaaaaa", time.Millisecond, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pa, pb := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
			writeCapture(t, pa, "aaaaaaaaaaaaaaaa", fleetStart, 1, a...)
			writeCapture(t, pb, tt.idB, fleetStart.Add(tt.offsetB), 1, b...)
			for _, workers := range []int{1, 2} {
				rep, warns, err := traffic.Analyze(&analyzer.Config{Workers: workers}, []string{pa, pb}, traffic.Options{})
				if err != nil || len(warns) > 0 {
					t.Fatal(err, warns)
				}
				if len(rep.Findings) != 0 {
					t.Errorf("workers %d: sessions of two instances were mixed: %+v", workers, rep.Findings)
				}
				if s := rep.Summary; s.Captures != tt.captures || s.Sessions != 2 || s.Files != 2 || s.CaptureFiles != 2 || s.Statements != 3 {
					t.Errorf("workers %d: summary %+v", workers, s)
				}
			}
		})
	}
	// The same events as one capture's session 1 do make the finding:
	// the test above can fail.
	dir := t.TempDir()
	p := filepath.Join(dir, "one.jsonl")
	writeCapture(t, p, "cccccccccccccccc", fleetStart, 1, append(a[:len(a):len(a)], b[2:]...)...)
	rep, _, err := traffic.Analyze(&analyzer.Config{}, []string{p}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != "session-set" {
		t.Errorf("one session: findings %+v, want session-set", rep.Findings)
	}
}

// TestAnalyzeFleetDuplicateFile: a copy of a capture part (the same
// capture_id, start and part) is read once, with a warning, whatever the
// order the files come in.
func TestAnalyzeFleetDuplicateFile(t *testing.T) {
	src, err := os.ReadFile("testdata/captures/two_sessions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	orig, copied := filepath.Join(dir, "a", "capture.jsonl"), filepath.Join(dir, "b", "capture.jsonl")
	for _, p := range []string{orig, copied} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	one, _, err := traffic.Analyze(&analyzer.Config{}, []string{orig}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{{orig, copied}, {copied, orig}} {
		rep, warns, err := traffic.Analyze(&analyzer.Config{}, paths, traffic.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(warns) != 1 || !strings.Contains(warns[0], copied) || !strings.Contains(warns[0], "read once") {
			t.Errorf("%v: warnings %q, want one naming %s", paths, warns, copied)
		}
		if got, want := reportJSON(t, rep), reportJSON(t, one); got != want {
			t.Errorf("%v: the copy changed the report:\n%s\nwant\n%s", paths, got, want)
		}
	}
}

// TestAnalyzeFleetDeterministic analyzes the golden captures as a fleet
// (each capture an instance, some rotated into two parts) with several
// worker counts and file orders: the report is the same every time, and
// its counts add up over the instances.
func TestAnalyzeFleetDeterministic(t *testing.T) {
	srcs, _ := filepath.Glob("testdata/captures/*.jsonl")
	if len(srcs) < 10 {
		t.Fatalf("%d golden captures", len(srcs))
	}
	dir := t.TempDir()
	var paths []string
	sumStatements, sumSessions := 0, 0
	for i, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		var events []string
		for _, l := range lines[1:] {
			if !strings.Contains(l, `"trailer":true`) {
				events = append(events, l)
			}
		}
		id := fmt.Sprintf("f1ee7%011d", i)
		start := fleetStart.Add(time.Duration(i) * 250 * time.Millisecond)
		base := filepath.Join(dir, fmt.Sprintf("pooler-%d", i), "capture.jsonl")
		if i%3 == 0 && len(events) > 2 {
			// Rotated: the parts of one capture are one instance.
			half := len(events) / 2
			writeCapture(t, base, id, start, 1, events[:half]...)
			writeCapture(t, capture.PartPath(base, 2), id, start, 2, events[half:]...)
			paths = append(paths, base, capture.PartPath(base, 2))
		} else {
			writeCapture(t, base, id, start, 1, events...)
			paths = append(paths, base)
		}
		single, _, err := traffic.Analyze(&analyzer.Config{}, []string{src}, traffic.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sumStatements += single.Summary.Statements
		sumSessions += single.Summary.Sessions
	}
	var want string
	for _, workers := range []int{1, 2, 7} {
		for round := range 3 {
			order := slices.Clone(paths)
			rand.New(rand.NewPCG(uint64(workers), uint64(round))).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			rep, warns, err := traffic.Analyze(&analyzer.Config{Workers: workers}, order, traffic.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatal(err, warns)
			}
			got := reportJSON(t, rep)
			if want == "" {
				want = got
				s := rep.Summary
				if s.Captures != len(srcs) || s.Files != len(paths) || s.CaptureFiles != len(paths) ||
					s.Statements != sumStatements || s.Sessions != sumSessions || len(rep.Findings) == 0 {
					t.Errorf("summary %+v: want %d captures, %d files, %d statements, %d sessions", s, len(srcs), len(paths), sumStatements, sumSessions)
				}
				continue
			}
			if got != want {
				t.Fatalf("workers %d, round %d: the report depends on the reading order:\n%s\nwant\n%s", workers, round, got, want)
			}
		}
	}
}

// TestAnalyzeFleetError: a capture that cannot be read fails the analysis
// with its own error, whichever worker reads it.
func TestAnalyzeFleetError(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	writeCapture(t, good, "aaaaaaaaaaaaaaaa", fleetStart, 1, `{"t":1,"s":1,"tx":0,"ev":"session_start"}`)
	bad := filepath.Join(dir, "bad.jsonl")
	writeCapture(t, bad, "bbbbbbbbbbbbbbbb", fleetStart.Add(time.Second), 1, `{"t":1,"s":1,"tx":0,"ev":"session_start"}`, `{not json`)
	for _, workers := range []int{1, 4} {
		_, _, err := traffic.Analyze(&analyzer.Config{Workers: workers}, []string{good, bad}, traffic.Options{Strict: true})
		if err == nil || !strings.Contains(err.Error(), "bad.jsonl:3") {
			t.Errorf("workers %d: error %v, want bad.jsonl:3", workers, err)
		}
	}
}

// reportJSON encodes a report for comparison.
func reportJSON(t *testing.T, rep *analyzer.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkAnalyzeFleet measures analyze over the captures of four
// instances (100 sessions of 50 transactions each), read by one worker
// and by two, per event.
func BenchmarkAnalyzeFleet(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	events := 0
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("pooler-%d.jsonl", i))
		events += writeLoadCapture(b, p, 100, 50)
		paths = append(paths, p)
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			cfg := &analyzer.Config{Workers: workers}
			for b.Loop() {
				rep, _, err := traffic.Analyze(cfg, paths, traffic.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Summary.Captures != 4 || rep.Summary.Sessions != 400 {
					b.Fatalf("summary %+v", rep.Summary)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
		})
	}
}
