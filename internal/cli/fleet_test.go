package cli

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
)

// fleetCapture is one instance's capture: its files in part order.
type fleetCapture struct {
	start time.Time
	files []string
}

// recordInstance records a capture as a proxy instance does, through the
// capture writer, rotating it into parts: every instance numbers its
// sessions from 1, so the instances' session ids collide.
func recordInstance(t *testing.T, path string, app string) {
	t.Helper()
	w, err := capture.Create(path, capture.Header{Mode: "record"}, capture.Options{MaxBytes: 1500})
	if err != nil {
		t.Fatal(err)
	}
	for i, script := range [][]string{
		{"SET search_path = " + app + ", public", "SELECT * FROM invoices", "SELECT 1"},
		{"SELECT pg_advisory_lock(7)", "UPDATE jobs SET state = 'done'", "SELECT pg_advisory_unlock(7)"},
		{"BEGIN", "SET LOCAL statement_timeout = '5s'", "SELECT 2", "COMMIT", "SELECT 3"},
	} {
		s := w.StartSession(capture.SessionInfo{User: "app", Database: "app", ApplicationName: fmt.Sprintf("%s-%d", app, i)})
		inTx := false
		for _, q := range script {
			s.Frontend('Q', append([]byte(q), 0), len(q)+1)
			s.Backend('C', []byte("SELECT 1\x00"))
			switch q {
			case "BEGIN":
				inTx = true
			case "COMMIT":
				inTx = false
			}
			status := byte('I')
			if inTx {
				status = 'T'
			}
			s.Backend('Z', []byte{status})
		}
		s.End("client closed")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// buildFleet writes the captures of a fleet below dir: two instances
// recorded through the capture writer (rotated into parts) and one
// instance per golden capture of the analyzer (some split into two parts),
// each with a capture id and a start of its own. It returns the captures
// in start order.
func buildFleet(t *testing.T, dir string) []fleetCapture {
	t.Helper()
	var caps []fleetCapture
	for i, app := range []string{"billing", "reports"} {
		path := filepath.Join(dir, fmt.Sprintf("rec-%d", i), "capture.jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		recordInstance(t, path, app)
		fc := fleetCapture{}
		for n := 1; ; n++ {
			p := capture.PartPath(path, n)
			if _, err := os.Stat(p); err != nil {
				break
			}
			fc.files = append(fc.files, p)
		}
		if len(fc.files) < 2 {
			t.Fatalf("%s: %d parts, want a rotated capture", path, len(fc.files))
		}
		f, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fc.start = f.Header().Start
		f.Close()
		caps = append(caps, fc)
	}

	srcs, _ := filepath.Glob("../../analyzer/traffic/testdata/captures/*.jsonl")
	if len(srcs) < 10 {
		t.Fatalf("%d golden captures", len(srcs))
	}
	base := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	for i, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		var h capture.Header
		if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
			t.Fatal(err)
		}
		var events []string
		for _, l := range lines[1:] {
			if !strings.Contains(l, `"trailer":true`) {
				events = append(events, l)
			}
		}
		// An hour apart: no two instances' events fall on the same
		// instant, so "the first occurrence" is the same one in the
		// fleet and in the concatenation.
		h.ID = fmt.Sprintf("f1ee7%011d", i)
		h.Start = base.Add(time.Duration(i) * time.Hour)
		path := filepath.Join(dir, fmt.Sprintf("pooler-%02d", i), "capture.jsonl")
		fc := fleetCapture{start: h.Start}
		parts := [][]string{events}
		if i%3 == 0 && len(events) > 2 {
			parts = [][]string{events[:len(events)/2], events[len(events)/2:]}
		}
		for n, evs := range parts {
			h.Part = n + 1
			p := capture.PartPath(path, n+1)
			writeLines(t, p, h, evs)
			fc.files = append(fc.files, p)
		}
		caps = append(caps, fc)
	}
	slices.SortStableFunc(caps, func(a, b fleetCapture) int { return a.start.Compare(b.start) })
	return caps
}

func writeLines(t *testing.T, path string, h capture.Header, events []string) {
	t.Helper()
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	text := string(head) + "\n" + strings.Join(events, "\n") + "\n" +
		fmt.Sprintf(`{"trailer":true,"t":0,"events":%d,"dropped":0}`, len(events)) + "\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// concatenate writes the captures as one capture at path: one header (the
// earliest start), every event with its time moved onto that start and its
// session id made distinct. It returns, for each line of path, the file and
// line the event came from.
func concatenate(t *testing.T, path string, caps []fleetCapture) map[int]string {
	t.Helper()
	start := caps[0].start
	origin := map[int]string{}
	var out []string
	for i, fc := range caps {
		shift := fc.start.Sub(start).Nanoseconds()
		for _, file := range fc.files {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			for line := 1; sc.Scan(); line++ {
				if line == 1 || strings.Contains(sc.Text(), `"trailer":true`) {
					continue
				}
				var ev map[string]json.RawMessage
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("%s:%d: %v", file, line, err)
				}
				var s, tm int64
				json.Unmarshal(ev["s"], &s)
				json.Unmarshal(ev["t"], &tm)
				ev["s"] = json.RawMessage(strconv.FormatInt(int64(i+1)*1000+s, 10))
				ev["t"] = json.RawMessage(strconv.FormatInt(tm+shift, 10))
				b, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
				origin[len(out)+1] = fmt.Sprintf("%s:%d", file, line)
			}
			f.Close()
		}
	}
	writeLines(t, path, capture.Header{Format: capture.Format, Version: capture.Version, ID: "c0ca7c0ca7c0ca70", Part: 1, Start: start, Mode: "record"}, out)
	return origin
}

// TestAnalyzeFleetEqualsConcatenation: analyze over the captures of many
// instances (a directory) reports what analyze over one capture that is
// their concatenation (session ids made distinct) reports: the same
// findings with the same counts, sessions, times and application names,
// pointing at the same events, and the same summary apart from the line
// that counts the instances and files.
func TestAnalyzeFleetEqualsConcatenation(t *testing.T) {
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet")
	caps := buildFleet(t, fleet)
	files := 0
	for _, c := range caps {
		files += len(c.files)
	}
	all := filepath.Join(dir, "all.jsonl")
	origin := concatenate(t, all, caps)
	located := regexp.MustCompile(`^` + regexp.QuoteMeta(all) + `:(\d+):`)
	relocate := func(s string) string {
		m := located.FindStringSubmatch(s)
		if m == nil {
			return s
		}
		n, _ := strconv.Atoi(m[1])
		return origin[n] + ":" + s[len(m[0]):]
	}

	for _, target := range []string{"pgbouncer", "generic"} {
		t.Run(target, func(t *testing.T) {
			// JSON: the findings, with the concatenation's locations
			// taken back to the files the events came from.
			fleetOut := analyzeJSON(t, "--target", target, fleet)
			allOut := analyzeJSON(t, "--target", target, all)
			for i := range allOut.Findings {
				f := &allOut.Findings[i]
				loc := strings.SplitN(relocate(fmt.Sprintf("%s:%d:", f.File, f.Line)), ":", 3)
				f.File = loc[0]
				f.Line, _ = strconv.Atoi(loc[1])
			}
			sortFindings(allOut.Findings)
			if len(fleetOut.Findings) < 10 {
				t.Fatalf("only %d findings: the fleet is too small to compare", len(fleetOut.Findings))
			}
			if got, want := mustJSON(t, fleetOut.Findings), mustJSON(t, allOut.Findings); got != want {
				t.Errorf("findings differ:\n--- fleet ---\n%s\n--- concatenation ---\n%s", got, want)
			}
			fs, as := fleetOut.Summary, allOut.Summary
			if fs.Captures != len(caps) || fs.CaptureFiles != files || fs.Files != files || as.Captures != 1 || as.Files != 1 {
				t.Errorf("instances: fleet %+v, concatenation %+v; want %d captures in %d files", fs, as, len(caps), files)
			}
			fs.Captures, fs.CaptureFiles, fs.Files = as.Captures, as.CaptureFiles, as.Files
			if got, want := mustJSON(t, fs), mustJSON(t, as); got != want {
				t.Errorf("summary: fleet %s, concatenation %s", got, want)
			}

			// Text: the same findings (located the same) and the same
			// summary but for the instance count line.
			fleetText, _, _ := runCLI(t, "", "analyze", "--target", target, "--fail-on", "never", fleet)
			allText, _, _ := runCLI(t, "", "analyze", "--target", target, "--fail-on", "never", all)
			fb, fsum := textBlocks(fleetText, nil)
			ab, asum := textBlocks(allText, relocate)
			if !slices.Equal(fb, ab) {
				t.Errorf("text findings differ:\n--- fleet ---\n%s\n--- concatenation ---\n%s", strings.Join(fb, ""), strings.Join(ab, ""))
			}
			wantLine := fmt.Sprintf("traffic from %d proxy instances (%d capture files)", len(caps), files)
			if !slices.Contains(fsum, wantLine) || !slices.Contains(asum, "traffic from 1 proxy instance (1 capture file)") {
				t.Errorf("instance lines: fleet %q, concatenation %q; want %q", fsum, asum, wantLine)
			}
			drop := func(lines []string) []string {
				return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.HasPrefix(l, "traffic from ") })
			}
			if !slices.Equal(drop(fsum), drop(asum)) {
				t.Errorf("text summary: fleet %q, concatenation %q", fsum, asum)
			}
		})
	}
}

// TestAnalyzeFleetArguments: a directory, a quoted glob pattern and the
// files themselves (in any order, named twice, a part named before its
// first part) give the same report, with any worker count.
func TestAnalyzeFleetArguments(t *testing.T) {
	dir := t.TempDir()
	caps := buildFleet(t, dir)
	var files []string
	for _, c := range caps {
		files = append(files, c.files...)
	}
	slices.Reverse(files)
	want, stderr, code := runCLI(t, "", "analyze", "--fail-on", "never", dir)
	if code != 0 || stderr != "" || !strings.Contains(want, fmt.Sprintf("traffic from %d proxy instances", len(caps))) {
		t.Fatalf("analyze %s: exit %d, stderr %q\n%s", dir, code, stderr, want)
	}
	for _, args := range [][]string{
		{filepath.Join(dir, "*")},
		{filepath.Join(dir, "*", "capture*.jsonl")},
		append([]string{"--workers", "1"}, files...),
		append([]string{"--workers", "3", files[0]}, files...),
		{"--workers", "16", dir, filepath.Join(dir, "pooler-00")},
		// A first part brings its other parts along.
		{filepath.Join(dir, "*", "capture.jsonl")},
	} {
		got, stderr, code := runCLI(t, "", append([]string{"analyze", "--fail-on", "never"}, args...)...)
		if code != 0 || stderr != "" || got != want {
			t.Errorf("analyze %q: exit %d, stderr %q, output differs:\n%s\nwant\n%s", args, code, stderr, got, want)
		}
	}
}

type jsonOut struct {
	Findings []jsonFindingOut `json:"findings"`
	Summary  struct {
		Files        int            `json:"files"`
		Statements   int            `json:"statements"`
		Captures     int            `json:"captures"`
		CaptureFiles int            `json:"capture_files"`
		Sessions     int            `json:"sessions"`
		Findings     int            `json:"findings"`
		BySeverity   map[string]int `json:"by_severity"`
		ByRule       map[string]int `json:"by_rule"`
	} `json:"summary"`
}

type jsonFindingOut struct {
	Rule        string          `json:"rule"`
	Severity    string          `json:"severity"`
	File        string          `json:"file"`
	Line        int             `json:"line"`
	Column      int             `json:"column"`
	Message     string          `json:"message"`
	Statement   string          `json:"statement"`
	Fingerprint string          `json:"fingerprint"`
	Traffic     json.RawMessage `json:"traffic"`
}

func analyzeJSON(t *testing.T, args ...string) jsonOut {
	t.Helper()
	stdout, stderr, code := runCLI(t, "", append([]string{"analyze", "--format", "json", "--fail-on", "never"}, args...)...)
	if code != 0 || stderr != "" {
		t.Fatalf("analyze %q: exit %d, stderr %q", args, code, stderr)
	}
	var out jsonOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sortFindings(fs []jsonFindingOut) {
	slices.SortFunc(fs, func(a, b jsonFindingOut) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// textBlocks splits text output into its findings (each with the lines
// below it, its location passed through relocate), sorted, and the lines of
// the summary.
func textBlocks(out string, relocate func(string) string) (blocks, summary []string) {
	findings, sum, _ := strings.Cut(out, "\n\n")
	for _, l := range strings.SplitAfter(findings, "\n") {
		if l == "" {
			continue
		}
		if !strings.HasPrefix(l, "    ") {
			if relocate != nil {
				l = relocate(l)
			}
			blocks = append(blocks, l)
			continue
		}
		blocks[len(blocks)-1] += l
	}
	slices.Sort(blocks)
	return blocks, strings.Split(strings.TrimRight(sum, "\n"), "\n")
}
