package extract

import "testing"

var rubyCases = []litCase{
	{name: "double", src: `execute("SET statement_timeout = 0")`, want: []string{"SET statement_timeout = 0"}},
	{name: "single escapes", src: `x = 'it\'s \n \\ x'`, want: []string{`it's \n \ x`}},
	{name: "double escapes", src: `x = "a\tb\"\e\s\101\x41\u00e9\u{41 42}\#{x}"`, want: []string{"a\tb\"\x1b AA\u00e9AB#{x}"}},
	{name: "control escapes", src: `x = "\C-z\cA\M-a\M-\C-b\c?"`, want: []string{"\x1a\x01\xe1\x82\x7f"}},
	{name: "interpolation", src: `x = "SELECT * FROM #{table.name} WHERE id = #{ids.map { |i| "#{i}" }.join(",")}"`, want: []string{"SELECT * FROM " + Placeholder + " WHERE id = " + Placeholder}},
	{name: "instance variable interpolation", src: `x = "SET search_path = #@schema, #$global, #@@cls #x"`, want: []string{"SET search_path = " + Placeholder + ", " + Placeholder + ", " + Placeholder + " #x"}},
	{name: "percent literals", src: "a = %q(SELECT (1) 'x')\nb = %Q{SELECT #{x} {}}\nc = %(SET a = 1)\nd = %[LISTEN x]\ne = %q|a\\|b|", want: []string{"SELECT (1) 'x'", "SELECT " + Placeholder + " {}", "SET a = 1", "LISTEN x", "a|b"}},
	{name: "skipped percent literals", src: "a = %w[SELECT it's]\nb = %i(x y)\nc = %r{\"/}i\nd = %s(sym)\ne = \"z\"", want: []string{"z"}},
	{name: "modulo", src: "a = x % y\nb = \"SELECT 1\" % [1]\nc = 10 %(3)", want: []string{"SELECT 1"}},
	{name: "squiggly heredoc", src: "sql = <<~SQL\n  SELECT *\n    FROM t\n\n  WHERE a = #{b}\nSQL\nx = 1\n", want: []string{"SELECT *\n  FROM t\n\nWHERE a = " + Placeholder + "\n"}},
	{name: "dash heredoc", src: "def q\n  <<-SQL\n    SELECT 1\n  SQL\nend", want: []string{"    SELECT 1\n"}},
	{name: "bare heredoc", src: "x = <<SQL\nSELECT 1\n  SQL\nSQL\n", want: []string{"SELECT 1\n  SQL\n"}},
	{name: "two heredocs", src: "foo(<<~A, <<~'B')\n  SELECT 1\nA\n  SELECT #{x}\nB\nbar(\"LISTEN y\")", want: []string{"SELECT 1\n", "SELECT #{x}\n", "LISTEN y"}},
	{name: "heredoc with method and args", src: "execute <<~SQL.squish, name # it's\n  UPDATE t\n  SET a = 1\nSQL\n", want: []string{"UPDATE t\nSET a = 1\n"}, comments: []string{" it's"}},
	{name: "heredoc CRLF", src: "x = <<~SQL\r\n  SELECT 1\r\n  FROM t\r\n  SQL\r\ny = 'z'\r\n", want: []string{"SELECT 1\r\nFROM t\r\n", "z"}},
	{name: "heredoc plus", src: "x = \"BEGIN; \" + <<~SQL\n  SELECT 1\nSQL\n", want: []string{"BEGIN; SELECT 1\n"}},
	{name: "shift is not heredoc", src: "class << self\nend\narr << CONST\narr <<x\ny = \"q\"", want: []string{"q"}},
	{name: "character literals", src: "a = ?a\nb = ?\"\nc = x ? \"SELECT 1\" : \"no\"\nd = empty? ? 'y' : ?'", want: []string{"SELECT 1", "no", "y"}},
	{name: "regex", src: "a = x =~ /\"foo'/\nb = s.split /,'/\nc = total / 2 / 'x'.size\nd = %r{'}", want: []string{"x"}},
	{name: "regex after keyword", src: "if /'/ =~ s then 'SELECT 1' end", want: []string{"SELECT 1"}},
	{name: "comments", src: "# it's \"SET\"\n=begin\n\"LISTEN\" 'x\n=end\nx = 'y' # UNLISTEN \"z\"", want: []string{"y"}, comments: []string{` it's "SET"`, "\n\"LISTEN\" 'x\n", ` UNLISTEN "z"`}},
	{name: "comment markers in string", src: `x = "SELECT '#' -- #not"`, want: []string{"SELECT '#' -- #not"}, comments: []string{}},
	{name: "plus across lines", src: "q = \"SELECT * \" +\n  \"FROM t\" +\n  table", want: []string{"SELECT * FROM t" + Placeholder}},
	{name: "adjacent and continuation", src: "q = \"SELECT 1 \" \\\n  'FROM t'\nr = \"a\"\n\"b\"", want: []string{"SELECT 1 FROM t", "a", "b"}},
	{name: "symbols", src: "a = :\"SELECT 1\"\nb = :'x'\nc = {name: \"LISTEN q\", :sym => 'v'}\nd(name:\"k\")", want: []string{"LISTEN q", "v", "k"}},
	{name: "operator symbols", src: "h.sub!(/.*/, &m.method(:%))\nops = {:/ => \"slash\", :<=> => 'ufo', :[]= => \"set\"}", want: []string{"slash", "ufo", "set"}},
	{name: "ternary with strings", src: `q = @id.include?('"')?"'":'"'`, want: []string{`"`, "'", `"`}},
	{name: "end marker", src: "x = 'a'\n__END__\n\"not code\"", want: []string{"a"}},
	{name: "backticks", src: "x = `ls #{dir}`\ny = 'z'", want: []string{"z"}},
	{name: "log message", src: `Rails.logger.warn "could not SET timeout: #{e.message}"`, want: []string{"could not SET timeout: " + Placeholder}},
	{name: "unterminated heredoc", src: "x = <<~SQL\n  SELECT 1\n", want: []string{}},
}

func TestRuby(t *testing.T) { runCases(t, Ruby, rubyCases) }
