package analyzer

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// streamInputs are the sample corpus and the application-code samples in
// reverse order, one path given twice and one input read from stdin.
func streamInputs(t *testing.T) []Input {
	t.Helper()
	var in []Input
	for _, dir := range []string{"../testdata/sample", "testdata/code"} {
		files, err := Collect([]string{dir}, Walk{Wants: func(string) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, files...)
	}
	if len(in) < 20 {
		t.Fatalf("only %d inputs", len(in))
	}
	slices.Reverse(in)
	in = append(in, in[3], Input{Name: "<stdin>", Data: []byte("LISTEN a;\nSET ROLE admin;\n")})
	return in
}

// TestStreamOrder checks that Stream delivers each file once, in the
// order of names, and that its findings, one file after the other, are
// exactly the findings of every input sorted together (the order the
// output had when the whole report was built first).
func TestStreamOrder(t *testing.T) {
	inputs := streamInputs(t)
	var all []Finding
	var want Summary
	// The whole: every input analyzed alone, with the routines the scan's
	// pre-pass finds (calls.go).
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(inputs[a].Name, inputs[b].Name) })
	whole := &Config{}
	whole.calls = whole.routines(inputs, order)
	if whole.calls == nil {
		t.Fatal("the pre-pass found no routine with findings in the sample corpus")
	}
	for _, in := range inputs {
		r := whole.analyzeInput(in)
		if r.err != nil || r.skip != "" {
			t.Fatalf("%s: %v %s", in.Name, r.err, r.skip)
		}
		all = append(all, r.res.Findings...)
		want.Files++
		want.Statements += r.res.Statements
		want.Suppressed += r.res.Suppressed
	}
	all = Sort(all)
	for _, workers := range []int{1, 2, 5} {
		cfg := &Config{Workers: workers}
		var got []Finding
		var names []string
		n := 0
		sum, err := cfg.Stream(inputs, func(fr FileResult) error {
			names = append(names, fr.File)
			n += fr.Inputs
			for _, f := range fr.Findings {
				if f.File != fr.File {
					t.Errorf("finding of %s delivered with %s", f.File, fr.File)
				}
			}
			got = append(got, fr.Findings...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Errorf("workers %d: files not delivered once each in order: %q", workers, names)
		}
		if n != len(inputs) || len(names) != len(inputs)-1 {
			t.Errorf("workers %d: %d results for %d inputs in %d files", workers, n, len(inputs), len(names))
		}
		if !reflect.DeepEqual(got, all) {
			t.Errorf("workers %d: streamed findings (%d) differ from the sorted whole (%d)", workers, len(got), len(all))
		}
		if sum.Files != want.Files || sum.Statements != want.Statements || sum.Suppressed != want.Suppressed {
			t.Errorf("workers %d: summary %+v, want %+v", workers, sum, want)
		}
	}
}

// TestStreamStops checks that an unreadable file does not end the scan
// (it is listed as skipped and unreadable, and the files after it are
// delivered), while an error from emit does.
func TestStreamStops(t *testing.T) {
	inputs := streamInputs(t)
	missing := filepath.Join("testdata", "code", "m-missing.sql")
	inputs = append(inputs, Input{Name: missing})
	var names []string
	sum, err := (&Config{Workers: 2}).Stream(inputs, func(fr FileResult) error {
		names = append(names, fr.File)
		return nil
	})
	if err != nil {
		t.Fatalf("unreadable file: err = %v, want the scan to go on", err)
	}
	after := 0
	for _, n := range names {
		if n > missing {
			after++
		}
	}
	if after == 0 {
		t.Errorf("nothing delivered after the unreadable %s: %v", missing, names)
	}
	bad := sum.Unreadable()
	if len(bad) != 1 || bad[0].File != missing || !strings.Contains(bad[0].Reason, "no such file") {
		t.Errorf("unreadable inputs = %+v, want %s with its reason", bad, missing)
	}

	stop := errors.New("stop")
	calls := 0
	_, err = (&Config{Workers: 2}).Stream(inputs, func(FileResult) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("emit error: err = %v after %d calls, want stop after 3", err, calls)
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, tt := range []struct {
		name      string
		data      string
		off       int
		line, col int
		source    string
	}{
		{"latin1", "SELECT 'caf\xe9';\n", 11, 1, 12, "SELECT 'caf\uFFFD';"},
		{"later line", "a\nbé\n\xff x", 6, 3, 1, "\uFFFD x"},
		{"after multibyte", "-- 日本\x80\x80 y\nSELECT 1;", 9, 1, 6, "-- 日本\uFFFD y"},
		{"truncated at the end", "ab\xe2\x82", 2, 1, 3, "ab\uFFFD"},
		{"surrogate", "\xed\xa0\x80", 0, 1, 1, "\uFFFD"},
		{"crlf", "x\r\n\xc3(\r\nz", 3, 2, 1, "\uFFFD("},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			why, bad := notText(data)
			if bad != tt.off || !strings.HasPrefix(why, "not UTF-8 text") {
				t.Fatalf("notText = %q, %d; want offset %d", why, bad, tt.off)
			}
			for _, part := range []string{"line " + strconv.Itoa(tt.line), "column " + strconv.Itoa(tt.col), "byte offset " + strconv.Itoa(tt.off)} {
				if !strings.Contains(why, part) {
					t.Errorf("reason %q lacks %q", why, part)
				}
			}
			fs := encodingFindings("x.sql", data, bad)
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1", len(fs))
			}
			f := fs[0]
			if f.Rule != rules.InvalidEncoding.ID || f.Severity != rules.Warning || f.File != "x.sql" ||
				f.Line != tt.line || f.Column != tt.col || f.SourceLine != tt.source {
				t.Errorf("finding %+v", f)
			}
			if !strings.Contains(f.Message, "byte offset "+strconv.Itoa(tt.off)) {
				t.Errorf("message %q does not name the offset", f.Message)
			}
		})
	}
	if why, bad := notText([]byte("SELECT\x00\xff")); why != "binary file" || bad != -1 {
		t.Errorf("binary: %q %d", why, bad)
	}
	if why, bad := notText([]byte("SELECT 'café';")); why != "" || bad != -1 {
		t.Errorf("valid UTF-8: %q %d", why, bad)
	}
}

// TestInvalidEncodingRule checks that a file that is not UTF-8 is skipped
// and reported as an invalid-encoding finding, which follows the
// configured severity and is gone when the rule is disabled.
func TestInvalidEncodingRule(t *testing.T) {
	inputs := []Input{
		{Name: "a.sql", Data: []byte("LISTEN a;\n")},
		{Name: "b.sql", Data: []byte("-- caf\xe9\nLISTEN b;\n")},
	}
	var noEncoding []*rules.Rule
	for _, r := range rules.All() {
		if r != rules.InvalidEncoding {
			noEncoding = append(noEncoding, r)
		}
	}
	for _, tt := range []struct {
		name string
		cfg  Config
		want []string // rule:severity of the findings
	}{
		{"default", Config{}, []string{"listen:error", "invalid-encoding:warning"}},
		{"severity", Config{Severity: map[string]rules.Severity{"invalid-encoding": rules.Error}}, []string{"listen:error", "invalid-encoding:error"}},
		{"disabled", Config{Rules: noEncoding}, []string{"listen:error"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := tt.cfg.Scan(inputs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Rule+":"+f.Severity.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
			if rep.Summary.Files != 1 || len(rep.Summary.Skipped) != 1 || rep.Summary.Skipped[0].File != "b.sql" ||
				!strings.Contains(rep.Summary.Skipped[0].Reason, "byte offset 6") {
				t.Errorf("summary %+v", rep.Summary)
			}
		})
	}
}
