package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fatih/color"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

func render(t *testing.T, format string, rep *analyzer.Report, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, format, rep, opt); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return buf.Bytes()
}

func TestFormats(t *testing.T) {
	if got, want := Formats(), []string{"text", "json", "sarif", "github"}; !slices.Equal(got, want) {
		t.Errorf("Formats() = %q, want %q", got, want)
	}
	err := Write(&bytes.Buffer{}, "xml", cases[0].rep, Options{})
	if err == nil || !strings.Contains(err.Error(), "text, json, sarif, github") {
		t.Errorf("Write(xml) = %v, want an error listing the formats", err)
	}
	if err := Write(&bytes.Buffer{}, "text", nil, Options{}); err == nil {
		t.Error("Write(nil report) succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	for _, format := range Formats() {
		if err := Write(failWriter{}, format, cases[1].rep, Options{}); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("Write(%s) to a failing writer = %v", format, err)
		}
	}
}

// loadSARIFSchema compiles the official SARIF 2.1.0 schema from testdata,
// registered under its own id so that nothing is fetched from the network.
func loadSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	obj, _ := doc.(map[string]any)
	id, _ := obj["$id"].(string)
	if id == "" {
		id, _ = obj["id"].(string) // draft-04 spelling, as in the OASIS file
	}
	if title, _ := obj["title"].(string); id == "" || !strings.Contains(title, "SARIF") || !strings.Contains(title, "2.1.0") {
		t.Fatalf("testdata schema: id %q, title %q: not the SARIF 2.1.0 schema", id, title)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(noNetwork{})
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// noNetwork refuses every URL the compiler would load.
type noNetwork struct{}

func (noNetwork) Load(url string) (any, error) {
	return nil, errors.New("schema loading disabled in tests: " + url)
}

func TestSARIFSchema(t *testing.T) {
	sch := loadSARIFSchema(t)
	check := func(t *testing.T) {
		for _, c := range cases {
			out := render(t, "sarif", c.rep, Options{})
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s: SARIF output does not validate: %v", c.name, err)
			}
		}
	}
	t.Run("catalogue", check)
	t.Run("test-catalogue", func(t *testing.T) {
		useTestCatalogue(t)
		check(t)
	})
	t.Run("invalid", func(t *testing.T) {
		// The schema must reject something, or the test proves nothing.
		bad := `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "r", "message": {"text": "m"}, "level": "critical"}]}]}`
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Error("a result with level critical validated")
		}
	})
}

func TestSARIFRules(t *testing.T) {
	rep := cases[1].rep
	var log sarifLog
	if err := json.Unmarshal(render(t, "sarif", rep, Options{}), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	var ids []string
	for _, r := range run.Tool.Driver.Rules {
		ids = append(ids, r.ID)
		if r.Name == "" || r.ShortDescription.Text == "" || r.FullDescription.Text == "" || r.Help.Text == "" {
			t.Errorf("rule %s is described incompletely: %+v", r.ID, r)
		}
		if rule := rules.Lookup(r.ID); rule != nil && rule.Security != slices.Contains(r.Properties.Tags, "security") {
			t.Errorf("rule %s: tags %q, security %v", r.ID, r.Properties.Tags, rule.Security)
		}
	}
	var want []string
	for _, r := range rules.All() {
		want = append(want, r.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("driver rules = %q, want every rule of rules.All() in order: %q", ids, want)
	}
	for i, res := range run.Results {
		if res.RuleIndex == nil || ids[*res.RuleIndex] != res.RuleID {
			t.Errorf("result %d: ruleId %s, ruleIndex %v", i, res.RuleID, res.RuleIndex)
		}
	}
}

func TestSARIFPaths(t *testing.T) {
	for _, tc := range []struct{ path, uri, base string }{
		{"db/a.sql", "db/a.sql", "%SRCROOT%"},
		{"a b#c?.sql", "a%20b%23c%3F.sql", "%SRCROOT%"},
		{"c:x/a.sql", "./c:x/a.sql", "%SRCROOT%"},
		{"/srv/a.sql", "file:///srv/a.sql", ""},
		{"C:/src/a.sql", "file:///C:/src/a.sql", ""},
	} {
		loc := sarifPhysical(analyzer.Finding{File: tc.path})
		if got := loc.ArtifactLocation; got.URI != tc.uri || got.URIBaseID != tc.base {
			t.Errorf("%q: uri %q base %q, want %q %q", tc.path, got.URI, got.URIBaseID, tc.uri, tc.base)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, c := range cases {
		out := render(t, "json", c.rep, Options{})
		var got jsonReport
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Version != JSONVersion || got.Tool != c.rep.Tool || got.ToolVersion != c.rep.Version || got.Target != string(c.rep.Target) {
			t.Errorf("%s: header %+v", c.name, got)
		}
		if len(got.Findings) != len(c.rep.Findings) {
			t.Fatalf("%s: %d findings, want %d", c.name, len(got.Findings), len(c.rep.Findings))
		}
		for i, f := range c.rep.Findings {
			want := jsonFinding{
				Rule: f.Rule, Severity: f.Severity.String(), Security: f.Security, File: f.File,
				Line: f.Line, Column: f.Column, EndLine: f.EndLine, EndColumn: f.EndColumn,
				Message: f.Message, Fix: f.Fix, Statement: f.Statement, Fingerprint: f.Fingerprint,
			}
			gotF := got.Findings[i]
			if tr := f.Traffic; tr != nil {
				if gotF.Traffic == nil || gotF.Traffic.Occurrences != tr.Count || gotF.Traffic.Sessions != tr.Sessions ||
					!slices.Equal(gotF.Traffic.ApplicationNames, tr.ApplicationNames) {
					t.Errorf("%s: finding %d traffic %+v, want %+v", c.name, i, gotF.Traffic, tr)
				}
				gotF.Traffic = nil
			}
			if len(gotF.Related) != len(f.Related) {
				t.Errorf("%s: finding %d related %+v, want %+v", c.name, i, gotF.Related, f.Related)
			}
			for k, r := range f.Related {
				if k < len(gotF.Related) && gotF.Related[k] != (jsonRelated{File: r.File, Line: r.Line, Column: r.Column, Message: r.Message}) {
					t.Errorf("%s: finding %d related %d: %+v, want %+v", c.name, i, k, gotF.Related[k], r)
				}
			}
			gotF.Related = nil
			if !reflect.DeepEqual(gotF, want) {
				t.Errorf("%s: finding %d\n got %+v\nwant %+v", c.name, i, got.Findings[i], want)
			}
			if _, err := rules.ParseSeverity(got.Findings[i].Severity); err != nil {
				t.Errorf("%s: finding %d: %v", c.name, i, err)
			}
		}
		s := got.Summary
		if s.Files != c.rep.Summary.Files || s.Statements != c.rep.Summary.Statements || s.Findings != len(c.rep.Findings) ||
			s.Suppressed != c.rep.Summary.Suppressed || len(s.Skipped) != len(c.rep.Summary.Skipped) ||
			s.Captures != c.rep.Summary.Captures || s.CaptureFiles != c.rep.Summary.CaptureFiles || s.Sessions != c.rep.Summary.Sessions {
			t.Errorf("%s: summary %+v", c.name, s)
		}
		if len(s.BySeverity) != 4 {
			t.Errorf("%s: by_severity %v, want all four severities", c.name, s.BySeverity)
		}
		if !bytes.HasSuffix(out, []byte("}\n")) {
			t.Errorf("%s: no trailing newline", c.name)
		}
	}
	if out := render(t, "json", cases[0].rep, Options{}); !bytes.Contains(out, []byte(`"findings": [],`)) {
		t.Errorf("empty report: findings is not []:\n%s", out)
	}
}

func TestColorIgnoresGlobal(t *testing.T) {
	old := color.NoColor
	t.Cleanup(func() { color.NoColor = old })
	rep := cases[1].rep

	color.NoColor = true
	if out := render(t, "text", rep, Options{Color: true}); !bytes.Contains(out, []byte("\x1b[")) {
		t.Error("Color: true wrote no colour while color.NoColor was set")
	}
	color.NoColor = false
	if out := render(t, "text", rep, Options{}); bytes.Contains(out, []byte("\x1b")) {
		t.Error("Color: false wrote colour while color.NoColor was clear")
	}
	for _, format := range []string{"json", "sarif", "github"} {
		if out := render(t, format, rep, Options{Color: true}); bytes.Contains(out, []byte("\x1b")) {
			t.Errorf("%s: wrote colour", format)
		}
	}
}

func TestUseColor(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var buf bytes.Buffer
	for _, tc := range []struct {
		mode string
		out  any
		env  func(string) string
		want bool
	}{
		{"always", &buf, env(), true},
		{"always", &buf, env("NO_COLOR", "1"), true},
		{"never", &buf, env(), false},
		{"auto", &buf, env(), false},
		{"auto", file, env(), false},
		{"auto", file, env("NO_COLOR", "1"), false},
		{"auto", (*os.File)(nil), env(), false},
	} {
		w, _ := tc.out.(interface{ Write([]byte) (int, error) })
		got, err := UseColor(tc.mode, w, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("UseColor(%q, %T) = %v, %v; want %v", tc.mode, tc.out, got, err, tc.want)
		}
	}
	for _, mode := range []string{"", "yes", "Always", "true"} {
		if _, err := UseColor(mode, &buf, env()); err == nil {
			t.Errorf("UseColor(%q) accepted", mode)
		}
	}
	// A terminal, when the test runs on one.
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if got, _ := UseColor("auto", tty, env()); !got {
			t.Error("auto on /dev/tty: no colour")
		}
		if got, _ := UseColor("auto", tty, env("NO_COLOR", "1")); got {
			t.Error("auto on /dev/tty with NO_COLOR: colour")
		}
		if got, _ := UseColor("auto", tty, env("TERM", "dumb")); got {
			t.Error("auto on /dev/tty with TERM=dumb: colour")
		}
	}
}

func TestCaretPad(t *testing.T) {
	for _, tc := range []struct {
		src  string
		col  int
		want string
	}{
		{"SET x = 1;", 1, ""},
		{"SET x = 1;", 5, "    "},
		{"\tSET x;", 2, "\t"},
		{"\t \tSET x;", 4, "\t \t"},
		{"é\tSET", 3, " \t"},
		{"e\u0301 SET", 4, "  "}, // combining accent takes no cell
		{"日本 SET", 4, "     "},   // wide characters take two cells
		{"ab", 5, "    "},        // past the end
	} {
		if got := caretPad(tc.src, tc.col); got != tc.want {
			t.Errorf("caretPad(%q, %d) = %q, want %q", tc.src, tc.col, got, tc.want)
		}
	}
}

func TestGitHubEscape(t *testing.T) {
	if got, want := escapeData("100% a,b:c\r\nd"), "100%25 a,b:c%0D%0Ad"; got != want {
		t.Errorf("escapeData = %q, want %q", got, want)
	}
	if got, want := escapeProperty("100% a,b:c\r\nd"), "100%25 a%2Cb%3Ac%0D%0Ad"; got != want {
		t.Errorf("escapeProperty = %q, want %q", got, want)
	}
	out := render(t, "github", cases[3].rep, Options{})
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if !strings.HasPrefix(line, "::") || strings.ContainsAny(line, "\r") {
			t.Errorf("not one workflow command: %q", line)
		}
	}
	if n := bytes.Count(out, []byte("\n")); n != len(cases[3].rep.Findings) {
		t.Errorf("%d lines for %d findings", n, len(cases[3].rep.Findings))
	}
}

func TestFirstParagraph(t *testing.T) {
	doc := "# id\n\n<!-- note -->\n\n```sql\nSET x;\n```\n\n- a list\n\nThe first\nparagraph.\n\nThe second.\n"
	if got, want := firstParagraph(doc, "fb"), "The first paragraph."; got != want {
		t.Errorf("firstParagraph = %q, want %q", got, want)
	}
	if got := firstParagraph("# only a heading\n", "fb"); got != "fb" {
		t.Errorf("firstParagraph of a heading = %q, want the fallback", got)
	}
	if got := camelCase("advisory-lock-session"); got != "AdvisoryLockSession" {
		t.Errorf("camelCase = %q", got)
	}
}

// TestJSONDocumented checks that docs/json-format.md documents every field
// of the json format and that its example decodes.
func TestJSONDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "json-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, v := range []any{jsonReport{}, jsonFinding{}, jsonSummary{}, jsonSkipped{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(doc, "| `"+name+"` |") && !strings.Contains(doc, "`"+name+"` (") {
				t.Errorf("docs/json-format.md does not document %s.%s (%q)", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
	_, example, _ := strings.Cut(doc, "```json\n")
	example, _, _ = strings.Cut(example, "```")
	dec := json.NewDecoder(strings.NewReader(example))
	dec.DisallowUnknownFields()
	var rep jsonReport
	if err := dec.Decode(&rep); err != nil || rep.Version != JSONVersion || len(rep.Findings) == 0 {
		t.Errorf("the example in docs/json-format.md: %v (version %d)", err, rep.Version)
	}
}
