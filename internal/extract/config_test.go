package extract

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// configCase is one table test of ConfigValues: the source, the values
// expected in order as key=value, and optionally the comment texts.
type configCase struct {
	name     string
	src      string
	want     []string
	comments []string
}

var dotEnvCases = []configCase{
	{name: "plain and comments", src: "# db\nDATABASE_URL=postgres://db/app?options=-c%20search_path%3Dapp # main\nEMPTY=\n", want: []string{"DATABASE_URL=postgres://db/app?options=-c%20search_path%3Dapp", "EMPTY="}, comments: []string{" db", " main"}},
	{name: "export and quotes", src: "export A=\"x \\\"y\\\" \\n\"\nB='it''s #not a comment'\r\nC = spaced  \n", want: []string{"A=x \"y\" \n", "B=it", "C=spaced"}},
	{name: "multi-line double quotes", src: "KEY=\"line one\nline two\" # c\nNEXT=1", want: []string{"KEY=line one\nline two", "NEXT=1"}, comments: []string{" c"}},
	{name: "hash inside value", src: "PASSWORD=a#b\n", want: []string{"PASSWORD=a#b"}},
	{name: "not assignments", src: "just words\n=novalue\nKEY\n", want: []string{}},
	{name: "unterminated quote", src: "A=\"open\nB=1\n", want: []string{}},
}

var propertiesCases = []configCase{
	{name: "separators", src: "a=1\nb: 2\nc 3\nd\t=\t4\n", want: []string{"a=1", "b=2", "c=3", "d=4"}},
	{name: "comments", src: "# one\n! two\n  #three\nk=v # not a comment\n", want: []string{"k=v # not a comment"}, comments: []string{" one", " two", "three"}},
	{name: "escapes", src: "spring.datasource.url=jdbc\\:postgresql\\://db/app?currentSchema\\=x\nu=\\u0041\\tB\n", want: []string{"spring.datasource.url=jdbc:postgresql://db/app?currentSchema=x", "u=A\tB"}},
	{name: "escaped key", src: "my\\ key=v\n", want: []string{"my key=v"}},
	{name: "continuation", src: "url=jdbc:postgresql://db/app?\\\n    currentSchema=x\r\nnext=1", want: []string{"url=jdbc:postgresql://db/app?currentSchema=x", "next=1"}},
	{name: "continuation at end of file", src: "url=abc\\", want: []string{"url=abc"}},
	{name: "key only", src: "flag\n", want: []string{"flag="}},
	{name: "byte order mark", src: "\ufeffa=1\n", want: []string{"a=1"}},
}

var yamlCases = []configCase{
	{name: "rails database.yml", src: "default: &default\n  adapter: postgresql\n  encoding: unicode\n\nproduction:\n  <<: *default\n  url: <%= ENV['DATABASE_URL'] %>\n  schema_search_path: \"app,public\" # tenants\n  variables:\n    statement_timeout: 5000\n",
		want:     []string{"default.adapter=postgresql", "default.encoding=unicode", "production.url=<%= ENV['DATABASE_URL'] %>", "production.schema_search_path=app,public", "production.variables.statement_timeout=5000"},
		comments: []string{" tenants"}},
	{name: "spring application.yml", src: "spring:\n  datasource:\n    url: jdbc:postgresql://db/app?currentSchema=x\n    hikari:\n      schema: app\n  jpa:\n    open-in-view: false\n", want: []string{"spring.datasource.url=jdbc:postgresql://db/app?currentSchema=x", "spring.datasource.hikari.schema=app", "spring.jpa.open-in-view=false"}},
	{name: "compose environment list", src: "services:\n  web:\n    environment:\n      - DATABASE_URL=postgres://db/app?options=-c%20x%3D1\n      - \"OTHER=2\"\n    ports:\n    - 80:80\n", want: []string{"services.web.environment=DATABASE_URL=postgres://db/app?options=-c%20x%3D1", "services.web.environment=OTHER=2", "services.web.ports=80:80"}},
	{name: "kubernetes env", src: "env:\n- name: DATABASE_URL\n  value: 'postgres://db/app?search_path=x'\n- name: B\n  value: it''s\n", want: []string{"env.name=DATABASE_URL", "env.value=postgres://db/app?search_path=x", "env.name=B", "env.value=it''s"}},
	{name: "quotes and escapes", src: "a: \"x\\ty \\u00e9 \\\"q\\\"\"\nb: 'it''s'\n\"quoted key\": v\n", want: []string{"a=x\ty é \"q\"", "b=it's", "quoted key=v"}},
	{name: "multi-line quoted", src: "a: \"one\n   two\"\nb: 1\n", want: []string{"a=one two", "b=1"}},
	{name: "literal block", src: "sql: |\n  SET a = 1;\n\n  SET b = 2;\n\nnext: x\n", want: []string{"sql=SET a = 1;\n\nSET b = 2;", "next=x"}},
	{name: "folded block", src: "url: >-\n  postgres://db/app?\n  options=x\nn: 1\n", want: []string{"url=postgres://db/app? options=x", "n=1"}},
	{name: "block at end", src: "k: |\n  v\n", want: []string{"k=v"}},
	{name: "empty block", src: "k: |\nn: 1\n", want: []string{"n=1"}},
	{name: "tags anchors aliases", src: "a: !!str 5\nb: &x y\nc: *x\n", want: []string{"a=5", "b=y", "c.c=*x"}[:2]},
	{name: "documents and comments", src: "%YAML 1.2\n---\na: 1 # one\n# two\n...\n---\nb: 2\n", want: []string{"a=1", "b=2"}, comments: []string{" one", " two"}},
	{name: "flow collection", src: "args: [\"--url\", \"postgres://h/d?search_path=x\"]\n", want: []string{"args=[\"--url\", \"postgres://h/d?search_path=x\"]"}},
	{name: "url value with colons", src: "url: jdbc:postgresql://h:5432/d\n", want: []string{"url=jdbc:postgresql://h:5432/d"}},
	{name: "unterminated quote", src: "a: \"open\nb: 1\n", want: []string{}},
	{name: "crlf", src: "a:\r\n  b: x\r\n", want: []string{"a.b=x"}},
}

var appSettingsCases = []configCase{
	{name: "connection strings", src: "{\n  // the database\n  \"ConnectionStrings\": {\n    \"Default\": \"Host=db;Database=app;Search Path=tenant\",\n    \"Other\": \"x\\\"y\\u0041\"\n  },\n  /* block */ \"Logging\": { \"Level\": [\"a\", 1, true, null] },\n}\n",
		want:     []string{"ConnectionStrings.Default=Host=db;Database=app;Search Path=tenant", "ConnectionStrings.Other=x\"yA", "Logging.Level=a"},
		comments: []string{" the database", " block "}},
	{name: "unterminated string", src: "{\"a\": \"b\n, \"c\": \"d\"}", want: []string{"c=d"}},
	{name: "top-level string", src: "\"x\"", want: []string{"=x"}},
	{name: "byte order mark", src: "\ufeff{\"a\": \"b\"}", want: []string{"a=b"}},
	{name: "unbalanced", src: "}}]] {\"a\": [\"b\"", want: []string{"a=b"}},
}

func runConfigCases(t *testing.T, f ConfigFormat, cases []configCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			vals, comments := ConfigValues(f, src)
			if err := checkConfigInvariants(src, vals, comments); err != nil {
				t.Fatalf("invariant: %v\nvalues: %#v", err, vals)
			}
			got := []string{}
			for _, v := range vals {
				got = append(got, v.Key+"="+v.Value)
			}
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("values\n got: %q\nwant: %q", got, want)
			}
			if tc.comments != nil {
				texts := []string{}
				for _, c := range comments {
					texts = append(texts, c.Text)
				}
				if !reflect.DeepEqual(texts, tc.comments) {
					t.Fatalf("comments\n got: %q\nwant: %q", texts, tc.comments)
				}
			}
		})
	}
}

func TestDotEnv(t *testing.T)      { runConfigCases(t, DotEnv, dotEnvCases) }
func TestProperties(t *testing.T)  { runConfigCases(t, Properties, propertiesCases) }
func TestYAML(t *testing.T)        { runConfigCases(t, YAML, yamlCases) }
func TestAppSettings(t *testing.T) { runConfigCases(t, AppSettings, appSettingsCases) }

// checkConfigInvariants is checkInvariants for configuration values, whose
// folded line breaks stand for a blank or a line break.
func checkConfigInvariants(src []byte, vals []ConfigValue, comments []Comment) error {
	for n, v := range vals {
		l := v.Literal
		if l.Start < 0 || l.Start > l.End || l.End > len(src) {
			return fmt.Errorf("value %d: range [%d,%d) outside file of %d bytes", n, l.Start, l.End, len(src))
		}
		if len(l.Segments) == 0 || l.Segments[0].Value != 0 {
			return fmt.Errorf("value %d: first segment %v", n, l.Segments)
		}
		for k, s := range l.Segments {
			if s.Source < l.Start || (s.Source >= l.End && l.Value != "") {
				return fmt.Errorf("value %d: segment %d source %d outside [%d,%d)", n, k, s.Source, l.Start, l.End)
			}
			if k > 0 {
				p := l.Segments[k-1]
				if s.Value <= p.Value || s.Source <= p.Source {
					return fmt.Errorf("value %d: segment %d %v not after %v", n, k, s, p)
				}
			}
		}
		escapes := bytes.IndexByte(src[l.Start:l.End], '\\') >= 0 || bytes.Contains(src[l.Start:l.End], []byte("''"))
		prev := -1
		for i := 0; i < len(l.Value); i++ {
			off := l.SourceOffset(i)
			if off < l.Start || off >= l.End || off < prev {
				return fmt.Errorf("value %d: SourceOffset(%d) = %d (previous %d, range [%d,%d))", n, i, off, prev, l.Start, l.End)
			}
			prev = off
			if escapes {
				continue
			}
			c := l.Value[i]
			if src[off] != c && !((c == '\n' || c == ' ') && (src[off] == '\r' || src[off] == '\n')) {
				return fmt.Errorf("value %d: value[%d] = %q but src[%d] = %q", n, i, c, off, src[off])
			}
		}
	}
	for n, c := range comments {
		if c.Start < 0 || c.Start > c.End || c.End > len(src) || len(c.Text) > c.End-c.Start {
			return fmt.Errorf("comment %d: range [%d,%d) text %q", n, c.Start, c.End, c.Text)
		}
	}
	return nil
}

func TestConfigFormatFor(t *testing.T) {
	for path, want := range map[string]ConfigFormat{
		".env": DotEnv, "app/.env.production": DotEnv, "prod.env": DotEnv,
		"src/main/resources/application.properties": Properties, "db.properties": Properties,
		"config/database.yml": YAML, "docker-compose.yaml": YAML,
		"appsettings.json": AppSettings, "Api/appsettings.Development.json": AppSettings,
	} {
		if got, ok := ConfigFormatFor(path); !ok || got != want {
			t.Errorf("ConfigFormatFor(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
	for _, path := range []string{"package.json", "a.sql", "env", "settings.json", "a.go"} {
		if got, ok := ConfigFormatFor(path); ok {
			t.Errorf("ConfigFormatFor(%q) = %q, want none", path, got)
		}
	}
}

func fuzzConfig(f *testing.F, format ConfigFormat, cases []configCase) {
	for _, c := range cases {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		vals, comments := ConfigValues(format, src)
		if err := checkConfigInvariants(src, vals, comments); err != nil {
			t.Fatalf("%v\nsource: %q\nvalues: %+v", err, src, vals)
		}
	})
}

func FuzzDotEnv(f *testing.F)      { fuzzConfig(f, DotEnv, dotEnvCases) }
func FuzzProperties(f *testing.F)  { fuzzConfig(f, Properties, propertiesCases) }
func FuzzYAML(f *testing.F)        { fuzzConfig(f, YAML, yamlCases) }
func FuzzAppSettings(f *testing.F) { fuzzConfig(f, AppSettings, appSettingsCases) }
