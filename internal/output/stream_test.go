package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

// batchings split a report's findings into the batches a stream receives.
var batchings = []struct {
	name  string
	split func([]analyzer.Finding) [][]analyzer.Finding
}{
	{"whole", func(fs []analyzer.Finding) [][]analyzer.Finding { return [][]analyzer.Finding{fs} }},
	{"per-file", func(fs []analyzer.Finding) [][]analyzer.Finding {
		// As a scan delivers them: one batch per file, files without
		// findings as empty batches.
		out := [][]analyzer.Finding{nil}
		for i, f := range fs {
			if i > 0 && f.File != fs[i-1].File {
				out = append(out, nil, nil)
			}
			out[len(out)-1] = append(out[len(out)-1], f)
		}
		return append(out, nil)
	}},
	{"one-by-one", func(fs []analyzer.Finding) [][]analyzer.Finding {
		var out [][]analyzer.Finding
		for _, f := range fs {
			out = append(out, []analyzer.Finding{f})
		}
		return out
	}},
}

// streamReport renders rep through a Stream fed with the batches, and
// checks that every batch is written when it is given: what w holds after
// each Write is a prefix of the final output, longer for every batch with
// findings.
func streamReport(t *testing.T, format string, rep *analyzer.Report, batches [][]analyzer.Finding, opt Options) string {
	t.Helper()
	var buf bytes.Buffer
	s, err := NewStream(&buf, format, rep, opt)
	if err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	for _, b := range batches {
		before := buf.Len()
		if err := s.Write(b); err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && buf.Len() == before {
			t.Errorf("%s: a batch of %d findings wrote nothing", format, len(b))
		}
		prefixes = append(prefixes, buf.String())
	}
	if err := s.Close(rep.Summary); err != nil {
		t.Fatal(err)
	}
	for _, p := range prefixes {
		if !strings.HasPrefix(buf.String(), p) {
			t.Errorf("%s: output written early was changed later", format)
			break
		}
	}
	return buf.String()
}

// TestStreamMatchesGolden streams every golden case in every format, in
// every batching, and checks that the bytes are those of the golden file
// (which TestGolden checks against Write).
func TestStreamMatchesGolden(t *testing.T) {
	useTestCatalogue(t)
	for _, c := range cases {
		for _, format := range append(Formats(), "text-color") {
			opt, file := Options{}, c.name+"."+format
			if format == "text-color" {
				format, opt, file = "text", Options{Color: true}, c.name+"-color.text"
			}
			want, err := os.ReadFile(filepath.Join("testdata", "golden", file))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range batchings {
				got := streamReport(t, format, c.rep, b.split(c.rep.Findings), opt)
				if got != string(want) {
					t.Errorf("%s, %s batches: stream differs from the golden file\n--- got:\n%s\n--- want:\n%s", file, b.name, got, want)
				}
			}
		}
	}
}

// TestStreamMatchesWrite does the same with the real rule catalogue (the
// SARIF driver lists every rule with its documentation) and a scan of the
// repository's sample corpus.
func TestStreamMatchesWrite(t *testing.T) {
	cfg := &analyzer.Config{}
	inputs, err := analyzer.Collect([]string{"../../testdata/sample"}, analyzer.Walk{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cfg.Scan(inputs)
	if err != nil {
		t.Fatal(err)
	}
	rep.Version = "test"
	if len(rep.Findings) < 10 {
		t.Fatalf("the sample corpus gave only %d findings", len(rep.Findings))
	}
	for _, format := range Formats() {
		want := string(render(t, format, rep, Options{}))
		for _, b := range batchings {
			if got := streamReport(t, format, rep, b.split(rep.Findings), Options{}); got != want {
				t.Errorf("%s, %s batches: stream differs from Write", format, b.name)
			}
		}
	}
}

func TestStreamWriteError(t *testing.T) {
	for _, format := range Formats() {
		s, err := NewStream(failWriter{}, format, cases[1].rep, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(cases[1].rep.Findings); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: Write to a failing writer = %v", format, err)
		}
	}
	if _, err := NewStream(&bytes.Buffer{}, "xml", cases[1].rep, Options{}); err == nil {
		t.Error("NewStream accepted an unknown format")
	}
}
