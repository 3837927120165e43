package extract

import "testing"

var elixirCases = []litCase{
	{name: "interpolation", src: `Repo.query!("SELECT * FROM #{table} WHERE id = $1 AND x = \"y\"\s", [id])`, want: []string{"SELECT * FROM " + Placeholder + " WHERE id = $1 AND x = \"y\" "}},
	{name: "heredoc", src: "  q = \"\"\"\n  SELECT *\n    FROM t\n  WHERE a = #{\n    b}\n  \"\"\"\n", want: []string{"SELECT *\n  FROM t\nWHERE a = " + Placeholder + "\n"}},
	{name: "heredoc line continuation", src: "    IO.warn(\n      \"\"\"\n      SET a \\\n      = 1 \\\n      \"\"\"\n    )\n  x = \"\"\"\n  y\n  \"\"\"", want: []string{"SET a = 1 ", "y\n"}},
	{name: "heredoc CRLF", src: "q = \"\"\"\r\n  SELECT 1\r\n  \"\"\"\r\n", want: []string{"SELECT 1\r\n"}},
	{name: "sigils", src: "a = ~s(SELECT (1\\))\nb = ~S|SELECT #{x}|\nc = ~q[LISTEN x]\nd = ~SQL\"\"\"\n  SET a = 1\n  \"\"\"\ne = ~s{x\\}y}", want: []string{"SELECT (1)", "SELECT #{x}", "LISTEN x", "SET a = 1\n", "x}y"}},
	{name: "skipped sigils", src: "a = ~r/\"'/i\nb = ~w(a b)a\nc = ~D[2020-01-01]\nd = \"z\"", want: []string{"z"}},
	{name: "concatenation", src: "q = \"SELECT * \" <>\n  \"FROM \" <> table\n  <> \" WHERE a = 1\"", want: []string{"SELECT * FROM " + Placeholder + " WHERE a = 1"}},
	{name: "character literals", src: "a = ?\"\nb = ?\\\"\nc = valid?(x)\nd = \"LISTEN q\"", want: []string{"LISTEN q"}},
	{name: "atoms", src: "a = :\"SELECT 1\"\nb = [key: \"SET x\", other: :'y']\nc = Foo.\"bar\"()", want: []string{"SET x", "bar"}},
	{name: "comments", src: "# it's \"SET\"\nx = \"y\" # \"z\"", want: []string{"y"}, comments: []string{` it's "SET"`, ` "z"`}},
	{name: "comment markers in string", src: `x = "SELECT '#' -- #{y} # z"`, want: []string{"SELECT '#' -- " + Placeholder + " # z"}, comments: []string{}},
	{name: "quoted keyword keys", src: "x = [\"Query APIs\": [1], 'b': 2, \"c\": 3, d: \"e\"]\nf = ~s(g): 1", want: []string{"e", "g"}},
	{name: "delete escape", src: `x = "\d\a"`, want: []string{"\x7f\a"}},
	{name: "charlist", src: `x = 'SELECT 1'`, want: []string{"SELECT 1"}},
	{name: "log message", src: `Logger.error("could not SET timeout: #{inspect(e)}")`, want: []string{"could not SET timeout: " + Placeholder}},
	{name: "unterminated", src: `x = "abc`, want: []string{}},
}

func TestElixir(t *testing.T) { runCases(t, Elixir, elixirCases) }
