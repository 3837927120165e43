package extract

import "testing"

var javaCases = []litCase{
	{name: "escapes", src: `stmt.execute("SELECT 1 AS \"a\"\t\u0041\101\s");`, want: []string{"SELECT 1 AS \"a\"\tAA "}},
	{name: "char literals", src: `char c = '"'; char d = '\''; String s = "LISTEN x";`, want: []string{"LISTEN x"}},
	{name: "text block", src: "String q = \"\"\"\n        SELECT *\n          FROM t   \n        WHERE a = 'x'\n        \"\"\";", want: []string{"SELECT *\n  FROM t\nWHERE a = 'x'\n"}},
	{name: "text block closing on content line", src: "String q = \"\"\"\n    SELECT 1\n      FROM t\"\"\";", want: []string{"SELECT 1\n  FROM t"}},
	{name: "text block closing dedents", src: "String q = \"\"\"\n        SELECT 1\n    \"\"\";", want: []string{"    SELECT 1\n"}},
	{name: "text block escapes", src: "String q = \"\"\"\n    SELECT 1 \\\n    FROM t\\s\n    WHERE \\\"\"\"x\\\"\"\"\n    \"\"\";", want: []string{"SELECT 1 FROM t \nWHERE \"\"\"x\"\"\"\n"}},
	{name: "text block CRLF", src: "String q = \"\"\"\r\n    SELECT 1\r\n    FROM t\r\n    \"\"\";\r\n", want: []string{"SELECT 1\nFROM t\n"}},
	{name: "concatenation", src: "String q = \"SELECT * \" +\n    \"FROM \" + TABLE\n    + \" WHERE id = ?\";", want: []string{"SELECT * FROM " + Placeholder + " WHERE id = ?"}},
	{name: "comments", src: "// it's \"SET\"\n/* \"LISTEN\" */ String s = \"y\"; // z\"", want: []string{"y"}, comments: []string{` it's "SET"`, ` "LISTEN" `, ` z"`}},
	{name: "comment markers in string", src: `String s = "SELECT 1 -- // /* */";`, want: []string{"SELECT 1 -- // /* */"}, comments: []string{}},
	{name: "annotation", src: `@Query("SELECT u FROM User u WHERE u.name = :name")`, want: []string{"SELECT u FROM User u WHERE u.name = :name"}},
	{name: "log message", src: `log.warn("could not SET timeout {}", e);`, want: []string{"could not SET timeout {}"}},
	{name: "dollar is text", src: `String s = "SELECT $1, ${x}";`, want: []string{"SELECT $1, ${x}"}},
	{name: "unterminated", src: "String s = \"abc\nString t = \"d\";", want: []string{"d"}},
}

var kotlinCases = []litCase{
	{name: "templates", src: `val q = "SELECT * FROM $table WHERE id = ${id + 1} AND x = '${"}"}' AND y = \$z AND p = $"`, want: []string{"SELECT * FROM " + Placeholder + " WHERE id = " + Placeholder + " AND x = '" + Placeholder + "' AND y = $z AND p = $"}},
	{name: "raw string", src: "val q = \"\"\"\n    SELECT \"x\" FROM $t\n    WHERE a = '\\n'\"\"\"\"", want: []string{"\n    SELECT \"x\" FROM " + Placeholder + "\n    WHERE a = '\\n'\""}},
	{name: "raw string CRLF", src: "val q = \"\"\"SELECT 1\r\nFROM t\"\"\".trimIndent()\r\n", want: []string{"SELECT 1\r\nFROM t"}},
	{name: "nested comments", src: "/* a /* \"b\" */ \"c\" */ val s = \"d\"", want: []string{"d"}, comments: []string{` a /* "b" */ "c" `}},
	{name: "concatenation", src: "val q = \"SET a = \" +\n    value", want: []string{"SET a = " + Placeholder}},
	{name: "char literal", src: `val c = '"'; val d = '\''; val s = "LISTEN x"`, want: []string{"LISTEN x"}},
	{name: "escapes", src: `val s = "SELECT \u0041\t\"x\" \$1 \\"`, want: []string{"SELECT A\t\"x\" $1 \\"}},
	{name: "comments and markers", src: "// it's \"SET\"\nval s = \"SELECT 1 -- /* x */\" /* \"LISTEN\" */", want: []string{"SELECT 1 -- /* x */"}, comments: []string{` it's "SET"`, ` "LISTEN" `}},
	{name: "CRLF", src: "val a = \"SELECT 1\"\r\nval b = \"\"\"\r\n  LISTEN x\r\n\"\"\"\r\n", want: []string{"SELECT 1", "\r\n  LISTEN x\r\n"}},
	{name: "log message", src: `logger.warn("could not SET timeout: ${e.message}")`, want: []string{"could not SET timeout: " + Placeholder}},
	{name: "unterminated template", src: "val s = \"a ${b\nval t = \"c\"", want: []string{}},
	{name: "dollar in raw string", src: "exec(\"\"\"DO ${'$'}${'$'} BEGIN PERFORM 1; END ${'$'}${'$'}\"\"\")", want: []string{"DO $$ BEGIN PERFORM 1; END $$"}},
}

func TestJava(t *testing.T)   { runCases(t, Java, javaCases) }
func TestKotlin(t *testing.T) { runCases(t, Kotlin, kotlinCases) }

// TestTrimMargin checks which Kotlin raw strings are read with their
// margins blanked.
func TestTrimMargin(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"default margin", "val q = \"\"\"CREATE TEMP TABLE t\n    |(id int,\n    | a text)\"\"\".trimMargin()", "CREATE TEMP TABLE t\n     (id int,\n      a text)"},
		{"prefix on the next line", "val q = \"\"\"\n    #SELECT '|'\n    #FROM t\"\"\"\n        .trimMargin(\"#\")", "\n     SELECT '|'\n     FROM t"},
		{"trimIndent", "val q = \"\"\"SELECT a\n  |b\"\"\".trimIndent()", "SELECT a\n  |b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			lits, _, err := Literals(Kotlin, src)
			if err != nil || len(lits) == 0 {
				t.Fatalf("literals %v, %v", lits, err)
			}
			got := lits[0].Value
			if margin, ok := TrimMargin(src, lits[0].End); ok {
				got = BlankMargins(got, margin)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
