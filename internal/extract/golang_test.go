package extract

import (
	"strconv"
	"testing"
)

var goCases = []litCase{
	{name: "escapes", src: `db.Exec("SELECT 1\n\tFROM t WHERE a = \"x\"", x)`, want: []string{"SELECT 1\n\tFROM t WHERE a = \"x\""}},
	{name: "raw multi-line", src: "q := `\nSELECT *\n  FROM t\n`", want: []string{"\nSELECT *\n  FROM t\n"}},
	{name: "raw CRLF", src: "q := `SELECT 1\r\nFROM t`\r\n", want: []string{"SELECT 1\nFROM t"}},
	{name: "concatenation", src: "q := \"SELECT * \" +\n\t\"FROM t\" +\n\t`WHERE x`", want: []string{"SELECT * FROM tWHERE x"}},
	{name: "identifier operand", src: `q := "SELECT * FROM " + table + " WHERE id = $1"`, want: []string{"SELECT * FROM " + Placeholder + " WHERE id = $1"}},
	{name: "dotted operand", src: `q := "SET search_path = " + cfg.Schema`, want: []string{"SET search_path = " + Placeholder}},
	{name: "call operand", src: `q := "SET a = " + f(x, "y") + "b"`, want: []string{"SET a = " + Placeholder + "b"}},
	{name: "call operand at the end", src: `q := "SET a = " + f(x); g("b")`, want: []string{"SET a = " + Placeholder, "b"}},
	{name: "index operand", src: `q := "SELECT currval('" + names[i] + "_seq')"`, want: []string{"SELECT currval('" + Placeholder + "_seq')"}},
	{name: "comment with quotes", src: "// don't \"SET\" x\nx := \"LISTEN foo\" /* it's `raw` */", want: []string{"LISTEN foo"}, comments: []string{` don't "SET" x`, " it's `raw` "}},
	{name: "comment markers in string", src: `x := "SELECT 1 -- // /* x */"`, want: []string{"SELECT 1 -- // /* x */"}, comments: []string{}},
	{name: "log message", src: `log.Printf("could not SET timeout: %v", err)`, want: []string{"could not SET timeout: %v"}},
	{name: "rune literal", src: `c := '"'; s := "a"`, want: []string{"a"}},
	{name: "unicode escapes", src: `s := "\u00e9\x41\101\U0001F600"`, want: []string{"éAA\U0001F600"}},
	{name: "arguments not joined", src: `f("a", "b")`, want: []string{"a", "b"}},
	{name: "unterminated", src: `x := "abc` + "\n" + `y := "d"`, want: []string{"d"}},
	{name: "empty", src: `x := ""`, want: []string{""}},
	{name: "not concatenation", src: "x := \"a\"\ny := +\"b\"", want: []string{"a", "b"}},
}

func TestGo(t *testing.T) { runCases(t, Go, goCases) }

// TestGoMatchesUnquote checks the escape decoding against strconv.Unquote.
func TestGoMatchesUnquote(t *testing.T) {
	for _, lit := range []string{`"a\tb\\c\"d"`, `"\u00e9\x41\101\U0001F600\a\b\f\v\r\n"`, "`raw\\n`", `"日本\u8a9e"`} {
		lits, _, _ := Literals(Go, []byte("x := "+lit))
		want, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatal(err)
		}
		if len(lits) != 1 || lits[0].Value != want {
			t.Errorf("%s: got %+v, want %q", lit, lits, want)
		}
	}
}
