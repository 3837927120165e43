package extract

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

const csP = Placeholder

var csharpCases = []litCase{
	{name: "escapes", src: `var s = "SELECT \' \" \\ \0 \a \b \f \n \r \t \v \e";`, want: []string{"SELECT ' \" \\ \x00 \a \b \f \n \r \t \v \x1b"}},
	{name: "hex and unicode escapes", src: `var s = "SELECT \x41\x0041BC \u00e9 \U0001F600 \uD83D\uDE00 \xD83D\xDE00";`, want: []string{"SELECT AABC \u00e9 \U0001F600 \U0001F600 \U0001F600"}},
	{name: "lone surrogate and invalid escapes", src: `var s = "SET \uD800 \q \xg \u12 \U00110000";`, want: []string{"SET \ufffd \\q \\xg \\u12 \\U00110000"}},
	{name: "empty strings", src: `var a = ""; var b = @""; var c = $""; var d = "SELECT 1";`, want: []string{"", "", "", "SELECT 1"}},
	{name: "verbatim", src: "var s = @\"SELECT \"\"a\"\" \\n\r\n  FROM t\";", want: []string{"SELECT \"a\" \\n\r\n  FROM t"}},
	{name: "verbatim identifier", src: `var @class = "SELECT 1"; @event(@"SET a = 1");`, want: []string{"SELECT 1", "SET a = 1"}},
	{name: "interpolated", src: `var q = $"SELECT * FROM {table} WHERE id = {id,5:N0} AND j = '{{}}' AND k = {f(a, "}")}";`, want: []string{"SELECT * FROM " + csP + " WHERE id = " + csP + " AND j = '{}' AND k = " + csP}},
	{name: "interpolated verbatim", src: "var q = $@\"SET search_path TO {schema}, \"\"x\"\"\n\"; var r = @$\"LISTEN {{{ch}}}\";", want: []string{"SET search_path TO " + csP + ", \"x\"\n", "LISTEN {" + csP + "}"}},
	{name: "nested interpolated strings", src: `var q = $"SELECT {(a ? $"{b}" : @"c")} FROM t"; var r = "SET x = 1";`, want: []string{"SELECT " + csP + " FROM t", "SET x = 1"}},
	{name: "hole with braces, colons and chars", src: `var q = $"UPDATE t SET a = {x switch { 1 => '}', _ => y }} WHERE b = {global::M.F(n: 1):D2}";`, want: []string{"UPDATE t SET a = " + csP + " WHERE b = " + csP}},
	{name: "hole over lines", src: "var q = $\"SELECT {\n  f(x)\n} FROM t\";", want: []string{"SELECT " + csP + " FROM t"}},
	{name: "raw single line", src: `var q = """SELECT "a", 'b' \n FROM t"""; var r = """"SET x = '"""'"""";`, want: []string{`SELECT "a", 'b' \n FROM t`, `SET x = '"""'`}},
	{name: "raw multi-line", src: "var q = \"\"\"\n        SELECT *\n          FROM t\n\n        WHERE a = \"b\"\n        \"\"\";", want: []string{"SELECT *\n  FROM t\n\nWHERE a = \"b\""}},
	{name: "raw multi-line blanks after quotes and short blank line", src: "var q = \"\"\"  \t\n    SELECT 1\n  \n      FROM t\n    \"\"\";", want: []string{"SELECT 1\n\n  FROM t"}},
	{name: "raw multi-line no indentation", src: "var q = \"\"\"\n  SELECT 1\n\"\"\";", want: []string{"  SELECT 1"}},
	{name: "raw multi-line CRLF", src: "var q = \"\"\"\r\n    SELECT 1\r\n    FROM t\r\n    \"\"\";\r\nvar r = \"x\";", want: []string{"SELECT 1\r\nFROM t", "x"}},
	{name: "raw multi-line empty", src: "var q = \"\"\"\n    \"\"\"; var r = \"\"\"\n\n    \"\"\";", want: []string{"", ""}},
	{name: "raw multi-line more quotes", src: "var q = \"\"\"\"\n    SELECT '\"\"\"'\n    \"\"\"\";", want: []string{`SELECT '"""'`}},
	{name: "interpolated raw", src: "var q = $\"\"\"\n    SELECT {x} FROM {{t}}\n    \"\"\";", want: []string{"SELECT " + csP + " FROM {" + csP + "}"}},
	{name: "interpolated raw two dollars", src: "var q = $$\"\"\"\n    SELECT '{\"a\": {{n}}}'::jsonb, {{{v}}}\n      WHERE x = {{f(\n  \"}}\")}}\n    \"\"\";", want: []string{"SELECT '{\"a\": " + csP + "}'::jsonb, {" + csP + "}\n  WHERE x = " + csP}},
	{name: "interpolated raw single line", src: `var q = $$"""SET a = {{v}} {x}""";`, want: []string{"SET a = " + csP + " {x}"}},
	{name: "raw closing quotes not on their own line", src: "var q = \"\"\"\n    SELECT 1 \"\"\"; var r = \"SET x\";", want: []string{"SET x"}},
	{name: "u8 suffix", src: `var a = "SELECT 1"u8; var b = """SET x"""U8; var c = "LISTEN a"u8x;`, want: []string{"SELECT 1", "SET x", "LISTEN a"}},
	{name: "char literals", src: `char a = '"'; char b = '\''; char c = '\u0022'; char d = '{'; var s = "SELECT 1";`, want: []string{"SELECT 1"}},
	{name: "comments", src: "/// <summary>it's \"SET\"</summary>\n// don't 'LISTEN'\n/* \"x\" /* */ var s = \"SELECT 1\"; // \"y\"", want: []string{"SELECT 1"}, comments: []string{`/ <summary>it's "SET"</summary>`, ` don't 'LISTEN'`, ` "x" /* `, ` "y"`}},
	{name: "comment markers in strings", src: `var s = "SELECT 1 -- // /* */ #x";`, want: []string{"SELECT 1 -- // /* */ #x"}, comments: []string{}},
	{name: "preprocessor lines", src: "#region Queries \"x\n#pragma warning disable CS0168 // it's\nvar s = \"SELECT 1\";\n  #endregion 'y\n#if DEBUG\nvar t = @\"SET a\";\n#endif", want: []string{"SELECT 1", "SET a"}, comments: []string{}},
	{name: "concatenation", src: "var q = \"SELECT * FROM \" + table + \" WHERE id = @id\" +\n    $\" AND t = {t}\" + Sql.Order;", want: []string{"SELECT * FROM " + csP + " WHERE id = @id AND t = " + csP + csP}},
	{name: "concatenation goes on after a call", src: `var q = "SET a = " + F(x) + "b"; q += "c";`, want: []string{"SET a = " + csP + "b", "c"}},
	{name: "string.Format", src: `var q = string.Format("SELECT {0} FROM {1,-8:x} WHERE j = '{{}}' AND {x}", a, "{2}"); var r = String.Format(CultureInfo.InvariantCulture, @"SET ""{0}"" = {1}", k, v);`, want: []string{"SELECT " + csP + " FROM " + csP + " WHERE j = '{}' AND {x}", "{2}", `SET "` + csP + `" = ` + csP}},
	{name: "AppendFormat and other calls", src: `sb.AppendFormat("LISTEN {0}", ch); sb.Append("SELECT '{0}'"); Format("SET {0}");`, want: []string{"LISTEN " + csP, "SELECT '{0}'", "SET {0}"}},
	{name: "string.Format raw", src: "var q = string.Format(\"\"\"\n    SELECT {0}\n    \"\"\", x);", want: []string{"SELECT " + csP}},
	{name: "generics, lambdas and operators", src: `var rows = await conn.QueryAsync<Job>("SELECT * FROM jobs WHERE id = @Id", new { Id = id }); Func<int, bool> f = x => x >= 1 && x != 2; var y = a?.b ?? c;`, want: []string{"SELECT * FROM jobs WHERE id = @Id"}},
	{name: "npgsql", src: "await using var cmd = new NpgsqlCommand(\"SET search_path TO app\", conn);\ncmd.CommandText = \"LISTEN jobs\";\nawait cmd.ExecuteNonQueryAsync();", want: []string{"SET search_path TO app", "LISTEN jobs"}},
	{name: "ef core", src: `var u = db.Users.FromSqlInterpolated($"SELECT * FROM users WHERE id = {id}").ToList(); db.Database.ExecuteSqlRaw("SELECT pg_advisory_lock({0})", id);`, want: []string{"SELECT * FROM users WHERE id = " + csP, "SELECT pg_advisory_lock({0})"}},
	{name: "attributes", src: "[Table(\"jobs\", Schema = \"app\")]\npublic class Job { [Column(\"id\")] public long Id { get; set; } }", want: []string{"jobs", "app", "id"}},
	{name: "unterminated regular", src: "var a = \"x\";\nvar b = \"SELECT 1\nvar c = \"y\";", want: []string{"x", "y"}},
	{name: "unterminated verbatim", src: `var a = "x"; var b = @"SELECT 1`, want: []string{"x"}},
	{name: "unterminated interpolation", src: `var a = "x"; var b = $"SELECT {f(`, want: []string{"x"}},
	{name: "unterminated raw single line", src: "var a = \"\"\"x\nvar b = \"y\";", want: []string{"y"}},
	{name: "unterminated raw multi-line", src: "var a = \"x\"; var b = \"\"\"\n  SELECT 1\n", want: []string{"x"}},
	{name: "unterminated block comment", src: `var a = "x"; /* "y"`, want: []string{"x"}},
}

func TestCSharp(t *testing.T) { runCases(t, CSharp, csharpCases) }

// TestCSharpLines checks the line of each literal and of a word inside it
// in a file that mixes every form.
func TestCSharpLines(t *testing.T) {
	src := []byte("class A {\n" + // 1
		"  const string Q = \"\"\"\n" + // 2
		"      SELECT 1\n" + // 3
		"      \"\"\";\n" + // 4
		"  string R = @\"\n" + // 5
		"SET a = 1\";\n" + // 6
		"  string S = $\"{x\n" + // 7
		"  } LISTEN b\";\n" + // 8
		"  string T = $$\"\"\"\n" + // 9
		"    {{y}}\n" + // 10
		"    NOTIFY c\n" + // 11
		"    \"\"\";\n" + // 12
		"}\n")
	lits, comments, _ := Literals(CSharp, src)
	if err := checkInvariants(src, lits, comments); err != nil {
		t.Fatal(err)
	}
	line := func(off int) int { return 1 + bytes.Count(src[:off], []byte("\n")) }
	want := []struct {
		start int
		word  string
		line  int
	}{{2, "SELECT", 3}, {5, "SET", 6}, {7, "LISTEN", 8}, {9, "NOTIFY", 11}}
	if len(lits) != len(want) {
		t.Fatalf("got %d literals: %+v", len(lits), lits)
	}
	for i, w := range want {
		l := lits[i]
		if got := line(l.Start); got != w.start {
			t.Errorf("literal %d %q starts on line %d, want %d", i, l.Value, got, w.start)
		}
		k := strings.Index(l.Value, w.word)
		if k < 0 {
			t.Fatalf("literal %d %q lacks %s", i, l.Value, w.word)
		}
		off := l.SourceOffset(k)
		if got := line(off); got != w.line || !bytes.HasPrefix(src[off:], []byte(w.word)) {
			t.Errorf("%s maps to line %d (%q), want line %d", w.word, got, src[off:min(len(src), off+8)], w.line)
		}
	}
}

func TestCSharpSubscriptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string // API and receiver of each subscription, in order
	}{
		{
			name: "notification handler and waits",
			src: "using Npgsql;\nawait using var conn = new NpgsqlConnection(cs);\nconn.Notification += (o, e) => Console.WriteLine(e.Payload);\n" +
				"while (true) { conn.Wait(); await conn.WaitAsync(ct); }",
			want: []string{"NpgsqlConnection.Notification conn", "NpgsqlConnection.Wait conn", "NpgsqlConnection.WaitAsync conn"},
		},
		{
			name: "declared field and parameter",
			src:  "class L { private readonly NpgsqlConnection _conn; void Run(NpgsqlConnection? other) { this._conn.Wait(1000); other?.Wait(); } }",
			want: []string{"NpgsqlConnection.Wait _conn", "NpgsqlConnection.Wait other"},
		},
		{
			name: "opened from a data source",
			src:  "using Npgsql;\nvar listener = await dataSource.OpenConnectionAsync(ct);\nawait listener.WaitAsync(ct);\nvar c2 = ds.OpenConnection();\nc2.Wait();",
			want: []string{"NpgsqlConnection.WaitAsync listener", "NpgsqlConnection.Wait c2"},
		},
		{
			name: "handler makes a connection",
			src:  "using Npgsql;\nvoid Listen(DbConnection c) { ((NpgsqlConnection)c).Open(); conn.Notification += OnNote; conn.Wait(); }",
			want: []string{"NpgsqlConnection.Notification conn", "NpgsqlConnection.Wait conn"},
		},
		{
			name: "task and semaphore waits",
			src:  "using Npgsql;\nvar conn = new NpgsqlConnection(cs);\ntask.Wait(); semaphore.WaitAsync(); Task.WaitAll(a, b); conn.Open();",
		},
		{
			name: "without Npgsql",
			src:  "bus.Notification += OnNote; var c = pool.OpenConnection(); c.Wait();",
		},
		{
			name: "in strings and comments",
			src:  "NpgsqlConnection conn = new(cs);\n// conn.Wait();\nvar s = \"conn.Wait()\"; var t = $\"{conn.Wait()}\";\n/* conn.Notification += h; */",
		},
		{
			name: "removed handler",
			src:  "NpgsqlConnection conn = Open(); conn.Notification -= OnNote;",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			var got []string
			for _, s := range Subscriptions(CSharp, src) {
				got = append(got, s.API+" "+s.Receiver)
				if name := s.API[strings.IndexByte(s.API, '.')+1:]; string(src[s.Start:s.End]) != name {
					t.Errorf("%s at [%d,%d) is %q", s.API, s.Start, s.End, src[s.Start:s.End])
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if s := Subscriptions(Go, []byte("conn.Notification += h; conn.Wait()")); s != nil {
		t.Errorf("Go: %v", s)
	}
}

// TestCSharpNestedRaw lexes interpolated raw strings nested in the holes of
// interpolated raw strings: each hole is lexed once, when the closing line
// is looked for, which keeps this linear (lexing holes again to build the
// value takes 2^40 steps here).
func TestCSharpNestedRaw(t *testing.T) {
	const depth = 40
	src := []byte("var a = " + strings.Repeat("$\"\"\"\n  {f(\n", depth) + strings.Repeat(")}\n  \"\"\"\n", depth) + ";")
	lits, comments, _ := Literals(CSharp, src)
	if len(lits) != 1 || lits[0].Value != Placeholder {
		t.Fatalf("got %+v", lits)
	}
	if err := checkInvariants(src, lits, comments); err != nil {
		t.Fatal(err)
	}
}

// FuzzCSharpSubscriptions checks that every subscription found in any
// input names the member at its range.
func FuzzCSharpSubscriptions(f *testing.F) {
	f.Add([]byte("using Npgsql;\nvar conn = new NpgsqlConnection(cs);\nconn.Notification += h;\nawait conn.WaitAsync();"))
	for _, c := range csharpCases {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, s := range Subscriptions(CSharp, src) {
			if s.Start < 0 || s.Start >= s.End || s.End > len(src) || s.Receiver == "" {
				t.Fatalf("%+v in %d bytes", s, len(src))
			}
			if name := s.API[strings.IndexByte(s.API, '.')+1:]; string(src[s.Start:s.End]) != name {
				t.Fatalf("%s at %q", s.API, src[s.Start:s.End])
			}
		}
	})
}
