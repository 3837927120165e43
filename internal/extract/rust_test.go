package extract

import "testing"

var rustCases = []litCase{
	{name: "escapes", src: `let s = "SELECT \n\r\t\\\0\'\"\x41\x7F\u{e9}\u{1_F600}";`, want: []string{"SELECT \n\r\t\\\x00'\"A\x7f\u00e9\U0001F600"}},
	{name: "invalid escapes", src: `let s = "SELECT \q \u{} \u{1234567} \x4";`, want: []string{`SELECT q u{} u{1234567} x4`}},
	{name: "line continuation", src: "let s = \"SELECT 1 \\\n        FROM t \\\r\n\t  WHERE x\";", want: []string{"SELECT 1 FROM t WHERE x"}},
	{name: "multi-line string", src: "let s = \"SELECT *\n  FROM t\";", want: []string{"SELECT *\n  FROM t"}},
	{name: "CRLF in a string", src: "let s = \"SELECT *\r\n  FROM t\";\r\nlet r = r\"a\r\nb\";", want: []string{"SELECT *\n  FROM t", "a\nb"}},
	{name: "raw strings", src: `let a = r"SELECT '\n' FROM t"; let b = r#"SET x = "y""#; let c = r##"LISTEN "#a"#"##;`, want: []string{`SELECT '\n' FROM t`, `SET x = "y"`, `LISTEN "#a"#`}},
	{name: "raw string with fewer hashes inside", src: `let q = r###"SELECT '"##' AS a"###; let r = "b";`, want: []string{`SELECT '"##' AS a`, "b"}},
	{name: "byte and C strings", src: `let a = b"SELECT \x41\xff"; let b = br#"SET "x""#; let c = c"LISTEN y"; let d = cr"NOTIFY z";`, want: []string{"SELECT A\xff", `SET "x"`, "LISTEN y", "NOTIFY z"}},
	{name: "raw identifier", src: `let r#type = "SELECT 1"; let r = r#match;`, want: []string{"SELECT 1"}},
	{name: "nested block comments", src: "/* outer /* \"inner\" */ 'still \"comment\" */ let s = \"SELECT 1\";", want: []string{"SELECT 1"}, comments: []string{` outer /* "inner" */ 'still "comment" `}},
	{name: "line and doc comments", src: "//! crate \"doc\"\n/// it's \"SET\"\n// don't 'LISTEN'\nfn f() -> &'static str { \"SELECT 1\" } // 'x'", want: []string{"SELECT 1"}, comments: []string{`! crate "doc"`, `/ it's "SET"`, ` don't 'LISTEN'`, ` 'x'`}},
	{name: "comment markers in string", src: `let s = "SELECT 1 -- // /* */";`, want: []string{"SELECT 1 -- // /* */"}, comments: []string{}},
	{name: "lifetimes", src: "fn f<'a, 'b: 'a>(x: &'a str, y: &'b [u8]) -> &'a str { 'outer: loop { break 'outer; } \"SELECT 1\" }", want: []string{"SELECT 1"}},
	{name: "lifetime before quote", src: `impl<'a> Q<'a> { fn s(&'a self) -> &'static str { "SET a = '1'" } }`, want: []string{"SET a = '1'"}},
	{name: "char literals", src: `let a = '"'; let b = '\''; let c = '\u{1F600}'; let d = 'é'; let e = b'"'; let f = '\x22'; let s = "SELECT 1";`, want: []string{"SELECT 1"}},
	{name: "char then lifetime", src: `match c { '{' => x, _ => y } fn g<'a>() {} let s = "LISTEN a";`, want: []string{"LISTEN a"}},
	{name: "concat", src: `let q = concat!("SELECT * ", "FROM t ", "WHERE a = $1");`, want: []string{"SELECT * FROM t WHERE a = $1"}},
	{name: "concat trailing comma and newlines", src: "const Q: &str = concat!(\n    \"SET a = 1;\",\n    r#\"SET b = \"x\";\"#,\n);", want: []string{`SET a = 1;SET b = "x";`}},
	{name: "concat inside a call", src: `sqlx::query(concat!("SELECT ", "1"), x); f("a", "b");`, want: []string{"SELECT 1", "a", "b"}},
	{name: "format holes", src: `let q = format!("SELECT {} FROM {table} WHERE id = {0:?} AND j = '{{}}' {:>10}", a, b);`, want: []string{"SELECT " + Placeholder + " FROM " + Placeholder + " WHERE id = " + Placeholder + " AND j = '{}' " + Placeholder}},
	{name: "format raw string", src: `let q = format!(r#"SET "{}" = {v}"#, k);`, want: []string{`SET "` + Placeholder + `" = ` + Placeholder}},
	{name: "format arguments are not format strings", src: `let q = format!("SELECT {}", "{a}"); let j = "SELECT '{}'::jsonb";`, want: []string{"SELECT " + Placeholder, "{a}", "SELECT '{}'::jsonb"}},
	{name: "write format string is the second argument", src: `write!(sql, "UPDATE t SET a = {}", "{b}")?;`, want: []string{"UPDATE t SET a = " + Placeholder, "{b}"}},
	{name: "unmatched format braces", src: `let q = format!("SELECT '{' {x");`, want: []string{"SELECT '{' {x"}},
	{name: "not a macro", src: `if a != "SET x" { b } let c = x ! ("SELECT {}");`, want: []string{"SET x", "SELECT {}"}},
	{name: "plus", src: "let q = \"SELECT * FROM \".to_owned() + table + \" WHERE a = 1\";\nq += \"b\";", want: []string{"SELECT * FROM ", " WHERE a = 1", "b"}},
	{name: "string plus path", src: `let q = String::new() + "SELECT " + self::COLS + " FROM t";`, want: []string{"SELECT " + Placeholder + " FROM t"}},
	{name: "numbers and ranges", src: `let a = 1.5e3; let b = 0..10; let c = x.0.1; let d = 1u8; let s = "SELECT 1";`, want: []string{"SELECT 1"}},
	{name: "attributes", src: "#![allow(dead_code)]\n#[derive(Debug)]\n#[sqlx(rename = \"x\")]\nstruct A;", want: []string{"x"}},
	{name: "shebang", src: "#!/usr/bin/env run-cargo-script\nfn main() { let s = \"SELECT 1\"; }", want: []string{"SELECT 1"}, comments: []string{"/usr/bin/env run-cargo-script"}},
	{name: "sqlx", src: "sqlx::query!(\"SELECT pg_advisory_lock($1)\", id).execute(&pool).await?;\nlet u = sqlx::query_as::<_, User>(\"SELECT * FROM users WHERE id = $1\").fetch_one(&pool).await?;", want: []string{"SELECT pg_advisory_lock($1)", "SELECT * FROM users WHERE id = $1"}},
	{name: "tokio-postgres", src: "client.batch_execute(\"SET search_path TO app\").await?;\nlet rows = client.query(\"SELECT $1::TEXT\", &[&\"hello world\"]).await?;", want: []string{"SET search_path TO app", "SELECT $1::TEXT", "hello world"}},
	{name: "unterminated string", src: "let a = \"x\"; let b = \"SELECT 1\n", want: []string{"x"}},
	{name: "unterminated raw string", src: `let a = "x"; let b = r#"SELECT 1"`, want: []string{"x"}},
	{name: "unterminated block comment", src: `let a = "x"; /* /* */ "y"`, want: []string{"x"}},
	{name: "lone quote", src: "let a = '\nlet s = \"SELECT 1\";", want: []string{"SELECT 1"}},
}

func TestRust(t *testing.T) { runCases(t, Rust, rustCases) }

// TestRustMacro checks the macro name recorded for literals that are
// direct arguments of a macro invocation.
func TestRustMacro(t *testing.T) {
	src := []byte(`log::info!(target: "db", "LISTEN {}", ch); println! ["a"]; sqlx::query!("SELECT 1"); f(warn!("x", g("y"))); "z";`)
	lits, _, _ := Literals(Rust, src)
	want := []struct{ value, macro string }{
		{"db", "info"}, {"LISTEN " + Placeholder, "info"}, {"a", "println"}, {"SELECT 1", "query"},
		{"x", "warn"}, {"y", ""}, {"z", ""},
	}
	if len(lits) != len(want) {
		t.Fatalf("got %d literals: %+v", len(lits), lits)
	}
	for i, w := range want {
		if lits[i].Value != w.value || lits[i].Macro != w.macro {
			t.Errorf("literal %d: got %q in %q, want %q in %q", i, lits[i].Value, lits[i].Macro, w.value, w.macro)
		}
	}
}
