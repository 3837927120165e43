package extract

import (
	"strings"
	"testing"
)

var phpCases = []litCase{
	{name: "single quotes", src: `<?php $pdo->exec('SET x = \'y\' \\ \n $z {$w}');`, want: []string{`SET x = 'y' \ \n $z {$w}`}},
	{name: "double escapes", src: `<?php $s = "SELECT \x41\X41\101\400\u{e9}\u00e9\e\v\f\a\b\'\"\$\\ \t\n\r\q";`, want: []string{"SELECT AAA\x00\u00e9\\u00e9\x1b\v\f\\a\\b\\'\"$\\ \t\n\r\\q"}},
	{name: "escapes that are text", src: `<?php $s = "\x \u{} \u{110000} \u{zz} \8";`, want: []string{`\x \u{} \u{110000} \u{zz} \8`}},
	{name: "surrogate code point", src: `<?php $s = "\u{D800}";`, want: []string{"\xed\xa0\x80"}},
	{name: "simple interpolation", src: `<?php $q = "SELECT * FROM $table WHERE id = $id[0] AND a = $a[k] AND b = $b[$i] AND c = $c[-1] AND d = $o->name->x AND e = $o?->p";`, want: []string{"SELECT * FROM " + Placeholder + " WHERE id = " + Placeholder + " AND a = " + Placeholder + " AND b = " + Placeholder + " AND c = " + Placeholder + " AND d = " + Placeholder + "->x AND e = " + Placeholder}},
	{name: "braced interpolation", src: `<?php $q = "SET search_path = {$this->schemas['a']}, ${name}, ${arr['}']} {x} { $y}";`, want: []string{"SET search_path = " + Placeholder + ", " + Placeholder + ", " + Placeholder + " {x} { " + Placeholder + "}"}},
	{name: "dollar is text", src: `<?php pg_query_params($c, "SELECT $1, $ 2, \$x, \{$y}", [1]);`, want: []string{"SELECT $1, $ 2, $x, \\{" + Placeholder + "}"}},
	{name: "nested strings in interpolation", src: `<?php $q = "SELECT {$a["x"]} FROM {$t->f("}", 'y')}"; $r = 'LISTEN z';`, want: []string{"SELECT " + Placeholder + " FROM " + Placeholder, "LISTEN z"}},
	{name: "heredoc", src: "<?php\n$sql = <<<SQL\n    SELECT *\n      FROM t\n\n    WHERE a = {$b} AND c = \"\\$d\"\n    SQL;\n", want: []string{"SELECT *\n  FROM t\n\nWHERE a = " + Placeholder + " AND c = \"$d\""}},
	{name: "heredoc quoted marker", src: "<?php\n$sql = <<<\"SQL\"\nSET a = $b\nSQL;\n", want: []string{"SET a = " + Placeholder}},
	{name: "heredoc escaped quote", src: "<?php\n$s = <<<EOT\n\\\"x\\\" \\t\nEOT;\n", want: []string{"\\\"x\\\" \t"}},
	{name: "nowdoc", src: "<?php\n$sql = <<<'SQL'\n  SELECT '$x' \\n {$y}\n  SQL;\n", want: []string{"SELECT '$x' \\n {$y}"}},
	{name: "heredoc marker spacing and tabs", src: "<?php\n$a = <<<  EOT\n\t\tLISTEN x\n\t\tEOT;\n", want: []string{"LISTEN x"}},
	{name: "heredoc closing marker in argument list", src: "<?php\nDB::statement(<<<SQL\n    SET a = 1\n    SQL, [1]);\n$b = \"SELECT 2\";", want: []string{"SET a = 1", "SELECT 2"}},
	{name: "heredoc identifier prefix is content", src: "<?php\n$a = <<<EOT\n  EOTX\n  EOT\n  ;\n", want: []string{"EOTX"}},
	{name: "empty heredoc", src: "<?php\n$a = <<<EOT\nEOT;\n$b = 'x';", want: []string{"", "x"}},
	{name: "heredoc CRLF", src: "<?php\r\n$sql = <<<SQL\r\n  SELECT 1\r\n  FROM t\r\n  SQL;\r\n$x = 'y';\r\n", want: []string{"SELECT 1\r\nFROM t", "y"}},
	{name: "heredoc interpolation across lines", src: "<?php\n$sql = <<<SQL\n  SELECT {$f(\n    'a'\n  )} FROM t\n  SQL;\n", want: []string{"SELECT " + Placeholder + " FROM t"}},
	{name: "heredoc concatenation", src: "<?php\n$sql = <<<SQL\n  BEGIN;\n  SQL . 'SELECT 1';\n", want: []string{"BEGIN;SELECT 1"}},
	{name: "binary strings", src: "<?php $a = b'SELECT 1'; $b = B\"SET $x\"; $c = b<<<EOT\n LISTEN y\n EOT;\n", want: []string{"SELECT 1", "SET " + Placeholder, "LISTEN y"}},
	{name: "backticks", src: "<?php $out = `ls \"$dir\" 'x'`; $q = 'SELECT 1';", want: []string{"SELECT 1"}},
	{name: "concatenation", src: "<?php\n$q = 'SELECT * FROM ' . $table\n  . \" WHERE id = ?\" .\n  self::ORDER . $this->db->suffix;", want: []string{"SELECT * FROM " + Placeholder + " WHERE id = ?" + Placeholder + Placeholder}},
	{name: "call operand", src: `<?php $q = "SET a = " . f($x) . "b";`, want: []string{"SET a = " + Placeholder + "b"}},
	{name: "call operand with string arguments", src: `<?php pg_query($r, 'SELECT CURRVAL(\'' . str_replace('\'', '\\\'', $name) . '\') AS c');`, want: []string{"SELECT CURRVAL('" + Placeholder + "') AS c"}},
	{name: "subscript operands", src: `<?php $q = "SELECT currval('" . $m[1] . "_seq')" . $row['k'] . $a[1][2] . f($x)[0] . 'x' . $b ['c'];`, want: []string{"SELECT currval('" + Placeholder + "_seq')" + Placeholder + Placeholder + Placeholder + "x" + Placeholder, "c"}},
	{name: "concatenation assignment", src: `<?php $q = "a"; $q .= "b"; $r = "c" . 1.5 . "d"; f(...$args);`, want: []string{"a", "b", "c", "d"}},
	{name: "arguments not joined", src: `<?php pg_prepare($conn, "q", "SELECT $1");`, want: []string{"q", "SELECT $1"}},
	{name: "comments", src: "<?php\n// it's \"SET\"\n# don't 'LISTEN'\n/* \"x\" */ /** @var 'y' */ $s = 'z'; // 'w'", want: []string{"z"}, comments: []string{` it's "SET"`, ` don't 'LISTEN'`, ` "x" `, `* @var 'y' `, ` 'w'`}},
	{name: "comment markers in string", src: `<?php $s = "SELECT 1 -- // # /* */ ?>";`, want: []string{"SELECT 1 -- // # /* */ ?>"}, comments: []string{}},
	{name: "attribute", src: "<?php\n#[Route('/jobs', methods: ['GET'])]\nfunction f() { return 'SELECT 1'; }", want: []string{"/jobs", "GET", "SELECT 1"}, comments: []string{}},
	{name: "inline html", src: "<html><p>Don't \"quote\"</p>\n<?php echo 'a'; ?>\n<p>it's</p><?= \"b\" ?><?xml 'c' ?><? 'd' ?><?php", want: []string{"a", "b"}},
	{name: "comment ends at close tag", src: "<?php // it's ?> don't <?php # x ?> 'y' <?PHP\n$s = 'SET x = 1';", want: []string{"SET x = 1"}, comments: []string{" it's ", " x "}},
	{name: "open tag needs a blank", src: "<?php$x = 'a'; <?phpx 'b' <?php\t'c'", want: []string{"c"}},
	{name: "no open tag", src: "SELECT 'x' FROM t;", want: []string{}},
	{name: "halt compiler", src: "<?php $a = 'x'; __halt_compiler(); 'y' \"z", want: []string{"x"}},
	{name: "log message", src: `<?php error_log("could not SET timeout: {$e->getMessage()}");`, want: []string{"could not SET timeout: " + Placeholder}},
	{name: "laravel and doctrine", src: "<?php\nDB::unprepared('LISTEN jobs');\n$conn->executeStatement(\"SET search_path TO {$schema}\");\n$conn->fetchOne('SELECT pg_advisory_lock(?)', [$id]);", want: []string{"LISTEN jobs", "SET search_path TO " + Placeholder, "SELECT pg_advisory_lock(?)"}},
	{name: "unterminated single", src: "<?php $a = 'x';\n$b = 'abc\n$c = \"d\";", want: []string{"x"}},
	{name: "unterminated double", src: "<?php $a = 'x'; $b = \"abc {$d", want: []string{"x"}},
	{name: "unterminated heredoc", src: "<?php $a = 'x'; $b = <<<EOT\n  SELECT 1\n", want: []string{"x"}},
	{name: "not a heredoc", src: "<?php $a = $b <<< 'x';", want: []string{"x"}},
}

func TestPHP(t *testing.T) { runCases(t, PHP, phpCases) }

// TestPHPNestedHeredocs lexes heredocs nested in the interpolations of
// heredocs; lexing each interpolation once keeps this linear (lexing them
// once per pass takes 2^40 steps here).
func TestPHPNestedHeredocs(t *testing.T) {
	const depth = 40
	src := []byte("<?php $a = " + strings.Repeat("<<<A\n{$x(", depth) + strings.Repeat(")}\nA\n", depth) + ";")
	lits, comments, _ := Literals(PHP, src)
	if len(lits) != 1 || lits[0].Value != Placeholder {
		t.Fatalf("got %+v", lits)
	}
	if err := checkInvariants(src, lits, comments); err != nil {
		t.Fatal(err)
	}
}
