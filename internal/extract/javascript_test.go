package extract

import "testing"

var javascriptCases = []litCase{
	{name: "quotes and escapes", src: `db.query('SELECT 1 AS "a"\n'); db.query("SET x = 'y' \x41\u0042\u{43}\uD83D\uDE00\q")`, want: []string{"SELECT 1 AS \"a\"\n", "SET x = 'y' ABC\U0001F600q"}},
	{name: "template", src: "const q = `SELECT ${cols.map(c => `\"${c}\"`).join(', ')} FROM t WHERE id = ${ {a: 1}.a }`;", want: []string{"SELECT " + Placeholder + " FROM t WHERE id = " + Placeholder}},
	{name: "tagged template", src: "await sql`\n  LISTEN ${sql(channel)}\n`", want: []string{"\n  LISTEN " + Placeholder + "\n"}},
	{name: "template escapes", src: "x = `a\\`b\\${c}$d $`", want: []string{"a`b${c}$d $"}},
	{name: "template CRLF", src: "x = `SELECT 1\r\nFROM t`\r\n", want: []string{"SELECT 1\nFROM t"}},
	{name: "regex literals", src: "const re = /\"foo'/g; s.replace(/'/g, \"''\"); if (/`/.test(x)) {}\nreturn /[/'\"]/.exec(y)", want: []string{"''"}},
	{name: "division", src: "a = b / c / 'x'.length; d = (e) / 2 / \"y\"; f = g++ / 2; h = arr[0] / 'z'", want: []string{"x", "y", "z"}},
	{name: "comments", src: "// it's \"SET\"\n/* don't `LISTEN` */ x = 'y' // z'", want: []string{"y"}, comments: []string{` it's "SET"`, " don't `LISTEN` ", " z'"}},
	{name: "comment markers in string", src: `x = "SELECT 1 -- // /* */"; y = '/* x */'`, want: []string{"SELECT 1 -- // /* */", "/* x */"}, comments: []string{}},
	{name: "concatenation", src: "const q = 'SELECT * FROM ' + table\n  + ' WHERE id = $1' +\n  `AND x`;", want: []string{"SELECT * FROM " + Placeholder + " WHERE id = $1AND x"}},
	{name: "member operand", src: `q = "SET search_path = " + this.schema + ";"`, want: []string{"SET search_path = " + Placeholder + ";"}},
	{name: "index operand", src: `q = "SELECT currval('" + m[1] + "_seq')"`, want: []string{"SELECT currval('" + Placeholder + "_seq')"}},
	{name: "increment not concatenation", src: `x = "a"; y++ + "b"`, want: []string{"a", "b"}},
	{name: "jsx text", src: "const el = <p>Don't do this</p>\nconst q = \"SELECT 1\"", want: []string{"SELECT 1"}},
	{name: "typescript", src: "const rows: Array<Row> = await db.query<Row>(`SELECT 1`) as Row[];\nfunction f<T>(x: T): string { return 'ok' }", want: []string{"SELECT 1", "ok"}},
	{name: "log message", src: `console.error("could not SET timeout", err)`, want: []string{"could not SET timeout"}},
	{name: "hashbang", src: "#!/usr/bin/env node\n'use strict'", want: []string{"use strict"}, comments: []string{"/usr/bin/env node"}},
	{name: "unterminated", src: "x = 'abc\ny = \"d\"", want: []string{"d"}},
	{name: "line continuation", src: "x = 'SELECT \\\n1'", want: []string{"SELECT 1"}},
	{name: "nested template braces", src: "x = `a${ `b${ {c: '}'}.c }` }d`; y = 'e'", want: []string{"a" + Placeholder + "d", "e"}},
}

func TestJavaScript(t *testing.T) { runCases(t, JavaScript, javascriptCases) }
