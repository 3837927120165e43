package extract

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestPythonOracle compares the Python lexer's string pieces with those of
// CPython's own tokenize module. It runs when EXTRACT_PYTHON_ORACLE names a
// JSON file of [{file, strings: [{start, end, value}]}] (byte offsets,
// UTF-8 value in base64 or null; an end of -1 is not compared), as written
// by testdata/oracle/pytok.py. The oracle tests are run by hand; see
// testdata/oracle/README.md.
func TestPythonOracle(t *testing.T) {
	runOracle(t, "EXTRACT_PYTHON_ORACLE", lexPython)
}

// TestJavaScriptOracle compares the JavaScript lexer's string pieces with
// the string literals and template literals (cooked, substitutions replaced
// by Placeholder) of a real parser (acorn). It runs when
// EXTRACT_JAVASCRIPT_ORACLE names a JSON file in the same format.
func TestJavaScriptOracle(t *testing.T) {
	runOracle(t, "EXTRACT_JAVASCRIPT_ORACLE", lexJavaScript)
}

// TestJavaOracle compares the Java lexer's string pieces with the string
// literals (text blocks included) of javac's own parser, run with string
// folding off. It runs when EXTRACT_JAVA_ORACLE names a JSON file in the
// same format.
func TestJavaOracle(t *testing.T) {
	runOracle(t, "EXTRACT_JAVA_ORACLE", func(src []byte) *lexer { return lexJava(src, false) })
}

// TestRubyOracle compares where the Ruby lexer's string pieces start and
// end with the string and heredoc tokens of Ruby's own Ripper (outside
// interpolations). It runs when EXTRACT_RUBY_ORACLE names a JSON file in
// the same format.
func TestRubyOracle(t *testing.T) {
	runOracle(t, "EXTRACT_RUBY_ORACLE", lexRuby)
}

// TestElixirOracle compares the Elixir lexer's string pieces with the
// string, charlist, heredoc and ~s/~S sigil tokens of Elixir's own
// tokenizer (values unescaped, interpolations replaced by Placeholder). It
// runs when EXTRACT_ELIXIR_ORACLE names a JSON file in the same format.
func TestElixirOracle(t *testing.T) {
	runOracle(t, "EXTRACT_ELIXIR_ORACLE", lexElixir)
}

// TestPHPOracle compares the PHP lexer's string pieces with the string
// literals that PHP's own token_get_all finds, valued by PHP itself
// (testdata/oracle/phptok.php). It reads EXTRACT_PHP_ORACLE when that is
// set, like the other oracle tests; otherwise it runs phptok.php with the
// php on PATH over testdata/oracle/php and the PHP table cases, and skips
// when php is not installed.
func TestPHPOracle(t *testing.T) {
	const env = "EXTRACT_PHP_ORACLE"
	if os.Getenv(env) != "" {
		runOracle(t, env, lexPHP)
		return
	}
	php, err := exec.LookPath("php")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("php is not installed (CI=true: .ci/run installs php-cli)")
		}
		t.Skip("php is not installed (install php-cli; .ci/run does), and " + env + " is not set")
	}
	dir := t.TempDir()
	files, err := filepath.Glob("testdata/oracle/php/*.php")
	if err != nil || len(files) == 0 {
		t.Fatalf("no PHP oracle corpus: %v", err)
	}
	for i, c := range phpCases {
		if strings.HasPrefix(c.name, "unterminated") {
			continue // PHP reads the rest of the file as an error token
		}
		path := filepath.Join(dir, fmt.Sprintf("case%02d.php", i))
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	list := filepath.Join(dir, "files.txt")
	if err := os.WriteFile(list, []byte(strings.Join(files, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(php, "-d", "short_open_tag=0", "testdata/oracle/phptok.php", list)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("phptok.php: %v\n%s", err, stderr.Bytes())
	}
	path := filepath.Join(dir, "php.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(env, path)
	runOracle(t, env, lexPHP)
}

func runOracle(t *testing.T, env string, lex func([]byte) *lexer) {
	path := os.Getenv(env)
	if path == "" {
		t.Skip(env + " not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var files []struct {
		File    string
		Strings []struct {
			Start, End int
			Value      *string
		}
	}
	if err := json.Unmarshal(data, &files); err != nil {
		t.Fatal(err)
	}
	total, bad := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f.File)
		if err != nil {
			t.Fatal(err)
		}
		// javac repeats the modifiers of a multi-variable declaration.
		sort.SliceStable(f.Strings, func(i, j int) bool { return f.Strings[i].Start < f.Strings[j].Start })
		dedup := f.Strings[:0]
		for _, s := range f.Strings {
			if len(dedup) == 0 || s.Start != dedup[len(dedup)-1].Start {
				dedup = append(dedup, s)
			}
		}
		f.Strings = dedup
		lx := lex(src)
		got := lx.pieces
		if len(got) != len(f.Strings) {
			bad++
			if bad < 10 {
				t.Errorf("%s: %d pieces, tokenize has %d", f.File, len(got), len(f.Strings))
				for i := range min(len(got), len(f.Strings)) {
					if got[i].Start != f.Strings[i].Start {
						t.Errorf("  first difference at %d: ours %d, tokenize %d", i, got[i].Start, f.Strings[i].Start)
						break
					}
				}
			}
			continue
		}
		for i, s := range f.Strings {
			total++
			g := got[i]
			if g.Start != s.Start || g.End != s.End && s.End >= 0 {
				bad++
				t.Errorf("%s: string %d at [%d,%d), tokenize [%d,%d)", f.File, i, g.Start, g.End, s.Start, s.End)
				continue
			}
			if s.Value == nil {
				continue
			}
			want, _ := base64.StdEncoding.DecodeString(*s.Value)
			if g.Value != string(want) {
				bad++
				d := 0
				for d < len(g.Value) && d < len(want) && g.Value[d] == want[d] {
					d++
				}
				from := max(0, d-40)
				t.Errorf("%s: string %d at %d differs at value offset %d: ours %q, tokenize %q", f.File, i, g.Start, d, g.Value[from:min(len(g.Value), d+40)], want[from:min(len(want), d+40)])
			}
		}
	}
	t.Logf("%d files, %d strings compared, %d differences", len(files), total, bad)
}

// TestDump prints every literal and comment of the files named by
// EXTRACT_DUMP (a file or a directory), for eyeballing a lexer on real code.
func TestDump(t *testing.T) {
	root := os.Getenv("EXTRACT_DUMP")
	if root == "" {
		t.Skip("EXTRACT_DUMP not set")
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		lang, ok := LanguageFor(path)
		if !ok {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lits, comments, _ := Literals(lang, src)
		if err := checkInvariants(src, lits, comments); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		for _, l := range lits {
			line := 1 + bytes.Count(src[:l.Start], []byte("\n"))
			t.Logf("%s:%d: %q", path, line, l.Value)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRubyValueOracle compares decoded values with Ruby's own parser
// (RubyVM::AbstractSyntaxTree string nodes without interpolation, heredocs
// included). Entries are matched by start offset; strings Ruby folds with an
// adjacent literal, and nodes that are not string literals here (character
// literals, word lists), are skipped. It runs when
// EXTRACT_RUBY_VALUE_ORACLE names a JSON file of [{file, strings: [{start,
// value}]}].
func TestRubyValueOracle(t *testing.T) {
	path := os.Getenv("EXTRACT_RUBY_VALUE_ORACLE")
	if path == "" {
		t.Skip("EXTRACT_RUBY_VALUE_ORACLE not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var files []struct {
		File    string
		Strings []struct {
			Start int
			Value string
		}
	}
	if err := json.Unmarshal(data, &files); err != nil {
		t.Fatal(err)
	}
	compared, bad := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f.File)
		if err != nil {
			t.Fatal(err)
		}
		lx := lexRuby(src)
		byStart := map[int]int{}
		for i, p := range lx.pieces {
			byStart[p.Start] = i
		}
		for _, s := range f.Strings {
			i, ok := byStart[s.Start]
			if !ok {
				continue
			}
			p := lx.pieces[i]
			if i+1 < len(lx.pieces) && p.End <= lx.pieces[i+1].Start && len(bytes.Trim(src[p.End:lx.pieces[i+1].Start], " \t\\\r\n")) == 0 {
				continue // folded with the next literal
			}
			want, _ := base64.StdEncoding.DecodeString(s.Value)
			compared++
			if p.Value != string(want) {
				bad++
				if bad < 20 {
					t.Errorf("%s: string at %d value %q, Ruby %q", f.File, s.Start, p.Value, want)
				}
			}
		}
	}
	t.Logf("%d files, %d values compared, %d differences", len(files), compared, bad)
}

// TestGoCorpus checks the Go lexer on every .go file under EXTRACT_GO_CORPUS
// against an independent go/scanner pass: each string literal must appear
// as a piece at the same offset with the value strconv.Unquote gives.
func TestGoCorpus(t *testing.T) {
	root := os.Getenv("EXTRACT_GO_CORPUS")
	if root == "" {
		t.Skip("EXTRACT_GO_CORPUS not set")
	}
	files, compared, bad := 0, 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		files++
		fset := token.NewFileSet()
		file := fset.AddFile(path, -1, len(src))
		var s scanner.Scanner
		s.Init(file, src, nil, 0)
		var want []Literal
		for {
			pos, tk, lit := s.Scan()
			if tk == token.EOF {
				break
			}
			if tk != token.STRING {
				continue
			}
			v, err := strconv.Unquote(lit)
			if err != nil {
				continue
			}
			want = append(want, Literal{Value: v, Start: file.Offset(pos)})
		}
		got := lexGo(src).pieces
		if len(got) != len(want) {
			bad++
			t.Errorf("%s: %d pieces, go/scanner %d", path, len(got), len(want))
			return nil
		}
		for i := range want {
			compared++
			if got[i].Start != want[i].Start || got[i].Value != want[i].Value {
				bad++
				t.Errorf("%s: piece %d %q at %d, want %q at %d", path, i, got[i].Value, got[i].Start, want[i].Value, want[i].Start)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d strings compared, %d differences", files, compared, bad)
}
