package extract

import "testing"

var pythonCases = []litCase{
	{name: "quotes", src: "cur.execute('SELECT 1')\ncur.execute(\"SET x = 1\")", want: []string{"SELECT 1", "SET x = 1"}},
	{name: "triple multi-line", src: "def f():\n    \"\"\"Docstring: it's \"quoted\".\"\"\"\n    q = '''\n    SELECT *\n      FROM t\n    '''\n", want: []string{"Docstring: it's \"quoted\".", "\n    SELECT *\n      FROM t\n    "}},
	{name: "raw", src: `p = r'a\nb\'c'`, want: []string{`a\nb\'c`}},
	{name: "escapes", src: `s = 'SELECT \x41\n\u00e9\'\101\N{DASH}\q'`, want: []string{"SELECT A\né'A\\N{DASH}\\q"}},
	{name: "bytes", src: `s = b'SELECT \xff\u00e9'`, want: []string{"SELECT \xff\\u00e9"}},
	{name: "subscript operand", src: `q = "SELECT currval('" + m[1] + "_seq')"`, want: []string{"SELECT currval('" + Placeholder + "_seq')"}},
	{name: "f-string", src: `q = f"SELECT * FROM {table} WHERE id = {id!r:>{w}} AND x = '{{lit}}'"`, want: []string{"SELECT * FROM " + Placeholder + " WHERE id = " + Placeholder + " AND x = '{lit}'"}},
	{name: "f-string nested quotes", src: `q = f"SELECT {x["a"]} FROM {t['b']}"`, want: []string{"SELECT " + Placeholder + " FROM " + Placeholder}},
	{name: "raw f-string", src: `q = rf'SELECT \d {x}'`, want: []string{`SELECT \d ` + Placeholder}},
	{name: "prefix cases", src: `a = Rb'x' ; b = BR"y"; c = u'z'; d = F'{q}'`, want: []string{"x", "y", "z", Placeholder}},
	{name: "adjacent in parens", src: "cur.execute(\n    \"SELECT * \"\n    'FROM t '  # comment 'x'\n    f\"WHERE id = {i}\"\n)", want: []string{"SELECT * FROM t WHERE id = " + Placeholder}, comments: []string{" comment 'x'"}},
	{name: "plus", src: `q = "SELECT * FROM " + table + " WHERE a = 1"`, want: []string{"SELECT * FROM " + Placeholder + " WHERE a = 1"}},
	{name: "statements not joined", src: "a = \"x\"\n\"y\"", want: []string{"x", "y"}},
	{name: "line continuation joins", src: "q = \"SELECT 1 \" \\\n    \"FROM t\"", want: []string{"SELECT 1 FROM t"}},
	{name: "comment with quotes", src: "# it's \"SET\" here\nx = 1 # LISTEN 'x'", want: []string{}, comments: []string{` it's "SET" here`, " LISTEN 'x'"}},
	{name: "comment markers in string", src: `q = "SELECT '#' -- x /* y */"`, want: []string{"SELECT '#' -- x /* y */"}, comments: []string{}},
	{name: "percent format", src: `cur.execute("SELECT %s, %(name)s" % (a,))`, want: []string{"SELECT %s, %(name)s"}},
	{name: "log message", src: `logger.warning("could not SET timeout: %s", e)`, want: []string{"could not SET timeout: %s"}},
	{name: "CRLF", src: "q = \"\"\"SELECT 1\r\nFROM t\"\"\"\r\nx = 'y'\r\n", want: []string{"SELECT 1\r\nFROM t", "y"}},
	{name: "unterminated", src: "x = 'abc\ny = \"d\"", want: []string{"d"}},
	{name: "escaped newline", src: "x = 'SELECT \\\n1'", want: []string{"SELECT 1"}},
	{name: "not a prefix", src: `x = rbx'a'`, want: []string{"a"}},
	{name: "plus equals", src: `q = "a"` + "\n" + `q += "b"`, want: []string{"a", "b"}},
}

func TestPython(t *testing.T) { runCases(t, Python, pythonCases) }
