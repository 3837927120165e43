package extract

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// connCase is one table test of ConnStrings: the text, and per connection
// string found its form, its parameters as key=value (decoded) and its
// secrets as the text they cover.
type connCase struct {
	name    string
	text    string
	want    []connWant
	secrets []string
}

type connWant struct {
	form   ConnForm
	params []string
}

var connCases = []connCase{
	// libpq URLs.
	{name: "url options escaped", text: "postgres://app@db:5432/app?sslmode=require&options=-c%20search_path%3Dtenant", want: []connWant{{ConnURL, []string{"sslmode=require", "options=-c search_path=tenant"}}}},
	{name: "url postgresql scheme plus", text: "postgresql://db/app?options=-c+statement_timeout%3D5s", want: []connWant{{ConnURL, []string{"options=-c statement_timeout=5s"}}}},
	{name: "url upper-case scheme", text: "POSTGRES://db/app?search_path=x", want: []connWant{{ConnURL, []string{"search_path=x"}}}},
	{name: "url password", text: "postgres://app:s3cr%40t@db/app?password=other&application_name=web", want: []connWant{{ConnURL, []string{"password=other", "application_name=web"}}}, secrets: []string{"s3cr%40t", "other"}},
	{name: "url unescaped blanks as whole value", text: "postgres://db/app?options=-c search_path=a,b -c lock_timeout=1s", want: []connWant{{ConnURL, []string{"options=-c search_path=a,b -c lock_timeout=1s"}}}},
	{name: "url after assignment", text: "DATABASE_URL=postgres://db/app?options=-c work_mem=64MB", want: []connWant{{ConnURL, []string{"options=-c work_mem=64MB"}}}},
	{name: "url inside text stops at blank", text: "psql postgres://db/app?search_path=x -c 'select 1'", want: []connWant{{ConnURL, []string{"search_path=x"}}}},
	{name: "two urls", text: "primary=postgres://a/x?search_path=p replica=postgres://b/x?search_path=r", want: []connWant{{ConnURL, []string{"search_path=p"}}, {ConnURL, []string{"search_path=r"}}}},
	{name: "sqlalchemy driver", text: "postgresql+psycopg2://u@h/d?options=-csearch_path%3Dapp", want: []connWant{{ConnURL, []string{"options=-csearch_path=app"}}}},
	{name: "fragment", text: "postgres://h/d?search_path=a#frag", want: []connWant{{ConnURL, []string{"search_path=a"}}}},
	{name: "bad escape kept", text: "postgres://h/d?options=-c%2", want: []connWant{{ConnURL, []string{"options=-c%2"}}}},
	{name: "empty key skipped", text: "postgres://h/d?=x&&a", want: []connWant{{ConnURL, nil}}},
	{name: "url without parameters", text: "postgres://h/d and a=b", want: []connWant{{ConnURL, nil}}},
	{name: "word ending in postgres", text: "mypostgres://h/d?search_path=x", want: nil},
	{name: "mention without scheme", text: "postgres is at host=db", want: nil},
	// JDBC.
	{name: "jdbc", text: "jdbc:postgresql://db:5432/app?currentSchema=tenant&prepareThreshold=5&ApplicationName=web", want: []connWant{{ConnJDBC, []string{"currentSchema=tenant", "prepareThreshold=5", "ApplicationName=web"}}}},
	{name: "jdbc options", text: "jdbc:postgresql://db/app?options=-c%20statement_timeout=5s&user=u&password=p", want: []connWant{{ConnJDBC, []string{"options=-c statement_timeout=5s", "user=u", "password=p"}}}, secrets: []string{"p"}},
	{name: "jdbc without host", text: "jdbc:postgresql:app?currentSchema=x", want: []connWant{{ConnJDBC, []string{"currentSchema=x"}}}},
	{name: "jdbc escaped colons decoded", text: "spring.datasource.url=jdbc:postgresql://h/d?readOnlyMode=always", want: []connWant{{ConnJDBC, []string{"readOnlyMode=always"}}}},
	{name: "jdbc other database", text: "jdbc:mysql://h/d?sessionVariables=x=1", want: nil},
	// libpq keyword/value strings.
	{name: "keywords quoted options", text: `host=db dbname=app user=app options='-c search_path=tenant -c statement_timeout=5s'`, want: []connWant{{ConnKeywords, []string{"host=db", "dbname=app", "user=app", "options=-c search_path=tenant -c statement_timeout=5s"}}}},
	{name: "keywords escapes", text: `host = db  options='-c search_path=it\'s' password=p\ w`, want: []connWant{{ConnKeywords, []string{"host=db", "options=-c search_path=it's", "password=p w"}}}, secrets: []string{`p\ w`}},
	{name: "keywords lib/pq runtime param", text: "host=db dbname=app search_path=tenant", want: []connWant{{ConnKeywords, []string{"host=db", "dbname=app", "search_path=tenant"}}}},
	{name: "keywords unknown key", text: "host=db colour=blue", want: nil},
	{name: "keywords no anchor", text: "sslmode=require options=-cx=1", want: nil},
	{name: "keywords unterminated quote", text: "host=db options='-c a=1", want: nil},
	{name: "keywords missing value sign", text: "host db", want: nil},
	{name: "keywords prose", text: "set x=1 where host=db", want: nil},
	{name: "keywords printf", text: "host=%s port=%d dbname=%s options='-c search_path=%s'", want: []connWant{{ConnKeywords, []string{"host=%s", "port=%d", "dbname=%s", "options=-c search_path=%s"}}}},
	// Npgsql.
	{name: "npgsql", text: "Host=db;Database=app;Username=app;Password=pw;Search Path=tenant,public;Options=-c statement_timeout=5s", want: []connWant{{ConnNpgsql, []string{"Host=db", "Database=app", "Username=app", "Password=pw", "Search Path=tenant,public", "Options=-c statement_timeout=5s"}}}, secrets: []string{"pw"}},
	{name: "npgsql quoted", text: `Server=db; Options="-c search_path=""a b"""; Max Auto Prepare=20;`, want: []connWant{{ConnNpgsql, []string{"Server=db", `Options=-c search_path="a b"`, "Max Auto Prepare=20"}}}},
	{name: "npgsql single host is not enough", text: "Host=db;", want: nil},
	{name: "npgsql no server", text: "Database=app;Search Path=x", want: nil},
	{name: "npgsql unterminated quote", text: `Host=db;Options="-c a=1`, want: nil},
	{name: "npgsql text after quote", text: `Host=db;Options="a" b`, want: nil},
	{name: "npgsql part without value", text: "Host=db;Trusted", want: nil},
	{name: "css is not a connection string", text: "color=red;host=x", want: nil},
	// Not connection strings at all.
	{name: "sql", text: "SET search_path = app", want: nil},
	{name: "empty", text: "", want: nil},
	{name: "only equals", text: "=", want: nil},
}

func TestConnStrings(t *testing.T) {
	for _, tc := range connCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ConnStrings(tc.text)
			if err := checkConnInvariants(tc.text, got); err != nil {
				t.Fatal(err)
			}
			var gotW []connWant
			var gotSecrets []string
			for _, c := range got {
				w := connWant{form: c.Form}
				for _, p := range c.Params {
					w.params = append(w.params, p.Key+"="+p.Value)
				}
				gotW = append(gotW, w)
				for _, s := range c.Secrets {
					gotSecrets = append(gotSecrets, tc.text[s[0]:s[1]])
				}
			}
			if !reflect.DeepEqual(gotW, tc.want) {
				t.Errorf("got  %+v\nwant %+v", gotW, tc.want)
			}
			if !reflect.DeepEqual(gotSecrets, tc.secrets) {
				t.Errorf("secrets %q, want %q", gotSecrets, tc.secrets)
			}
		})
	}
}

// checkConnInvariants verifies what every result must satisfy: ranges
// inside the text, keys found where they are said to start, and value
// offsets increasing inside each parameter's range.
func checkConnInvariants(text string, cs []ConnString) error {
	for _, c := range cs {
		if c.Start < 0 || c.Start > c.End || c.End > len(text) {
			return fmt.Errorf("connection string range [%d,%d) outside text of %d bytes", c.Start, c.End, len(text))
		}
		for _, p := range c.Params {
			if p.KeyStart < c.Start || p.End > c.End || p.KeyStart > p.End {
				return fmt.Errorf("parameter %q range [%d,%d) outside [%d,%d)", p.Key, p.KeyStart, p.End, c.Start, c.End)
			}
			if c.Form == ConnKeywords || c.Form == ConnNpgsql {
				if !strings.HasPrefix(text[p.KeyStart:], p.Key) {
					return fmt.Errorf("key %q not at %d: %q", p.Key, p.KeyStart, text[p.KeyStart:])
				}
			}
			prev := p.KeyStart
			for i := 0; i <= len(p.Value); i++ {
				off := p.ValueOffset(i)
				if off < prev || off > p.End {
					return fmt.Errorf("parameter %q: value byte %d maps to %d, outside [%d,%d] or before %d", p.Key, i, off, p.KeyStart, p.End, prev)
				}
				prev = off
			}
		}
		for _, s := range c.Secrets {
			if s[0] < c.Start || s[1] > c.End || s[0] >= s[1] {
				return fmt.Errorf("secret [%d,%d) outside [%d,%d)", s[0], s[1], c.Start, c.End)
			}
		}
	}
	return nil
}

func TestConnValueOffsets(t *testing.T) {
	text := "postgres://h/d?options=-c%20search_path%3Dx"
	c := ConnStrings(text)
	if len(c) != 1 || len(c[0].Params) != 1 {
		t.Fatalf("got %+v", c)
	}
	p := c[0].Params[0]
	k := strings.Index(p.Value, "search_path")
	if off := p.ValueOffset(k); !strings.HasPrefix(text[off:], "search_path") {
		t.Errorf("search_path maps to %d: %q", off, text[off:])
	}
	if off := p.ValueOffset(2); text[off:off+3] != "%20" {
		t.Errorf("the decoded blank maps to %q, want its escape", text[off:])
	}
}

func TestOptionSettings(t *testing.T) {
	for _, c := range []struct {
		opts string
		want []string // name=value@switch text
	}{
		{"-c search_path=app", []string{"search_path=app@-c search_path=app"}},
		{"-csearch_path=app  -c statement_timeout=5s", []string{"search_path=app@-csearch_path=app", "statement_timeout=5s@-c statement_timeout=5s"}},
		{"--search-path=a,b", []string{"search_path=a,b@--search-path=a,b"}},
		{`-c search_path=a\ b`, []string{`search_path=a b@-c search_path=a\ b`}},
		{"-c app.tenant=42 -B 100", []string{"app.tenant=42@-c app.tenant=42"}},
		{"-c", nil},
		{"-c =x -c a", nil},
		{"-c bad;name=1", nil},
		{"", nil},
	} {
		var got []string
		for _, s := range OptionSettings(c.opts) {
			got = append(got, s.Name+"="+s.Value+"@"+c.opts[s.Start:s.End])
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("OptionSettings(%q) = %q, want %q", c.opts, got, c.want)
		}
	}
}

func FuzzConnStrings(f *testing.F) {
	for _, c := range connCases {
		f.Add(c.text)
	}
	f.Add("-c a=b --c-d=e -c")
	f.Fuzz(func(t *testing.T, text string) {
		cs := ConnStrings(text)
		if err := checkConnInvariants(text, cs); err != nil {
			t.Fatalf("%v\ntext: %q\ngot: %+v", err, text, cs)
		}
		for _, c := range cs {
			for _, p := range c.Params {
				for _, s := range OptionSettings(p.Value) {
					if s.Start < 0 || s.Start > s.End || s.End > len(p.Value) {
						t.Fatalf("setting %+v outside %q", s, p.Value)
					}
				}
			}
		}
		for _, s := range OptionSettings(text) {
			if s.Start < 0 || s.Start > s.End || s.End > len(text) || s.Name == "" {
				t.Fatalf("setting %+v outside %q", s, text)
			}
		}
	})
}
