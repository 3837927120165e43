package sqlparse

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// stmtTexts splits and parses src and returns each statement's source text
// (or "ERR:" + text for statements that do not parse).
func stmtTexts(src string) []string {
	b := []byte(src)
	var out []string
	for _, c := range Split(b).Chunks {
		for _, s := range ParseChunk(b, c) {
			t := s.Source(b)
			if s.Err != nil {
				t = "ERR:" + t
			}
			out = append(out, t)
		}
	}
	return out
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"simple", "SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"no final semicolon", "SELECT 1;\nSELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"bad statement in the middle", "SELECT 1; SELEC 2; SELECT 3", []string{"SELECT 1", "ERR:SELEC 2", "SELECT 3"}},
		{"identifiers first", "a; b; c", []string{"ERR:a", "ERR:b", "ERR:c"}},
		{"empty statements", ";;SELECT 1;;", []string{"SELECT 1"}},
		{"leading comments", "-- one\n/* two */ SELECT 1;", []string{"SELECT 1"}},
		{"semicolon in strings", `SELECT 'a;b', E'c\';d', "e;f", $$g;h$$, $t$ i;$$ $t$;`, []string{`SELECT 'a;b', E'c\';d', "e;f", $$g;h$$, $t$ i;$$ $t$`}},
		{"semicolon in comments", "SELECT 1 -- x;y\n/* a; /* b; */ c; */ + 1; SELECT 2", []string{"SELECT 1 -- x;y\n/* a; /* b; */ c; */ + 1", "SELECT 2"}},
		{"doubled quotes", "SELECT 'it''s;'; SELECT 2", []string{"SELECT 'it''s;'", "SELECT 2"}},
		{"dollar param is not a quote", "PREPARE p AS SELECT $1; SELECT 2", []string{"PREPARE p AS SELECT $1", "SELECT 2"}},
		{"dollar in identifier", "SELECT a$b$c FROM t; SELECT 2", []string{"SELECT a$b$c FROM t", "SELECT 2"}},
		{"rule with several actions", "CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1); DELETE FROM b); SELECT 2",
			[]string{"CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1); DELETE FROM b)", "SELECT 2"}},
		{"begin atomic", "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END; SELECT 3",
			[]string{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END", "SELECT 3"}},
		{"create or replace procedure atomic", "CREATE OR REPLACE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC INSERT INTO t VALUES (1); END; SELECT 3",
			[]string{"CREATE OR REPLACE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC INSERT INTO t VALUES (1); END", "SELECT 3"}},
		{"transaction BEGIN is not atomic", "BEGIN; SELECT 1; END;", []string{"BEGIN", "SELECT 1", "END"}},
		{"psql meta-commands", "\\set ON_ERROR_STOP on\n\\connect db\nSELECT 1;\n\\i other.sql\nSELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"psql meta-command inside a statement", "SELECT 1,\n\\echo hi\n2;", []string{"SELECT 1,\n\\echo hi\n2"}},
		{"gset ends a statement", "SELECT 1 AS x \\gset\nSELECT :x;", []string{"SELECT 1 AS x", "SELECT :x"}},
		{"gexec", "SELECT format('VACUUM %I', relname) FROM pg_class\n\\gexec\nSELECT 2;", []string{"SELECT format('VACUUM %I', relname) FROM pg_class", "SELECT 2"}},
		{"psql variables", "SELECT :'name', :\"col\", :n FROM t WHERE a = :v::int;", []string{`SELECT :'name', :"col", :n FROM t WHERE a = :v::int`}},
		{"psql variable as table", "CREATE TABLE :tbl (a int);", []string{"CREATE TABLE :tbl (a int)"}},
		{"casts are not variables", "SELECT a::text, b[1:2] FROM t;", []string{"SELECT a::text, b[1:2] FROM t"}},
		{"copy from stdin data", "COPY t (a, b) FROM stdin;\n1\tSET ROLE x;\n2\t\\N\n\\.\nSELECT 2;", []string{"COPY t (a, b) FROM stdin", "SELECT 2"}},
		{"copy to stdout has no data", "COPY t TO stdout; SELECT 2;", []string{"COPY t TO stdout", "SELECT 2"}},
		{"copy data with CRLF", "COPY t FROM STDIN;\r\n1;2\r\n\\.\r\nSELECT 2;", []string{"COPY t FROM STDIN", "SELECT 2"}},
		{"unterminated string", "SELECT 1; SELECT 'abc", []string{"SELECT 1", "ERR:SELECT 'abc"}},
		{"unterminated comment", "SELECT 1; /* abc", []string{"SELECT 1"}},
		{"plpgsql dollar body", "CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN PERFORM 1; END $body$; SELECT 2",
			[]string{"CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN PERFORM 1; END $body$", "SELECT 2"}},
		{"unicode", "SELECT 'ünï;cødé' AS \"ñ\"; SELECT 2", []string{"SELECT 'ünï;cødé' AS \"ñ\"", "SELECT 2"}},
		{"byte order mark", "\xef\xbb\xbfSET a = 1; SELECT 2", []string{"SET a = 1", "SELECT 2"}},
		{"backslash semicolon", "begin\\; insert into t values (3)\\; commit; SET b = 1;", []string{"begin", "insert into t values (3)", "commit", "SET b = 1"}},
		{"psql copy from stdin data", "\\copy t FROM STDIN\n1,SET x\n\\.\nSET a = 1;", []string{"SET a = 1"}},
		{"failed copy has no data", "COPY t FROM STDIN; -- fails\nSET a = 1;\nCOPY u FROM stdin;\n1\n\\.\nSELECT 2;", []string{"COPY t FROM STDIN", "SET a = 1", "COPY u FROM stdin", "SELECT 2"}},
		{"copy data to end of text", "COPY t FROM STDIN;\nSET a = 1;", []string{"COPY t FROM STDIN", "SET a = 1"}},
		{"extension markers", "CREATE FUNCTION @extschema@.f() RETURNS int LANGUAGE sql AS 'SELECT 1'; ALTER TABLE @extschema:other@.t OWNER TO @extowner@;",
			[]string{"CREATE FUNCTION @extschema@.f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "ALTER TABLE @extschema:other@.t OWNER TO @extowner@"}},
		{"psql variable readings", ":PREFIX SELECT 1; ALTER SEQUENCE s RESTART :n; CREATE TABLESPACE t LOCATION :p; CREATE TYPE s.pk_:oid AS (a int); SELECT :{?x};",
			[]string{":PREFIX SELECT 1", "ALTER SEQUENCE s RESTART :n", "CREATE TABLESPACE t LOCATION :p", "CREATE TYPE s.pk_:oid AS (a int)", "SELECT :{?x}"}},
		{"template placeholders", "LISTEN {channel_name}; SELECT pg_advisory_lock(%(id)s), %s, ?; SELECT {{ .Table }}", []string{"LISTEN {channel_name}", "SELECT pg_advisory_lock(%(id)s), %s, ?", "SELECT {{ .Table }}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stmtTexts(tt.src)
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("Split(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseErrorPosition(t *testing.T) {
	src := []byte("SELECT 1;\n\n  SELECT * FRM t;")
	sc := Split(src)
	st := ParseChunk(src, sc.Chunks[1])[0]
	if st.Err == nil {
		t.Fatal("want a parse error")
	}
	p := NewLineIndex(src).Position(st.Err.Offset)
	if p != (Position{3, 12}) || !strings.Contains(st.Err.Message, `"FRM"`) {
		t.Errorf("error at %v: %s", p, st.Err.Message)
	}
}

func TestPosition(t *testing.T) {
	tests := []struct {
		name string
		src  string
		at   string // the text whose first byte is looked up
		want Position
	}{
		{"first", "SELECT 1", "SELECT", Position{1, 1}},
		{"LF", "a\nbc\nd", "d", Position{3, 1}},
		{"CRLF", "a\r\nbc\r\nxd", "d", Position{3, 2}},
		{"lone CR", "a\rb", "b", Position{2, 1}},
		{"tab is one column", "\t\tx", "x", Position{1, 3}},
		{"multibyte", "SELECT 'ñü€😀', x", "x", Position{1, 16}},
		{"multibyte second line", "é\n  ü x", "x", Position{2, 5}},
		{"byte order mark", "\xef\xbb\xbfSET x", "SET", Position{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off := strings.Index(tt.src, tt.at)
			got := NewLineIndex([]byte(tt.src)).Position(off)
			if got != tt.want {
				t.Errorf("Position(%q in %q) = %v, want %v", tt.at, tt.src, got, tt.want)
			}
		})
	}
	x := NewLineIndex([]byte("a\r\nb\r\n"))
	if x.LineText(1) != "a" || x.LineText(2) != "b" || x.Lines() != 3 {
		t.Errorf("LineText/Lines wrong: %q %q %d", x.LineText(1), x.LineText(2), x.Lines())
	}
}

func TestStatementPositions(t *testing.T) {
	src := "-- header\r\nSET a = 1;\r\n\r\n\t/* c */ SELECT\r\n  pg_advisory_lock(1);\r\nSELECT 'ü', pg_backend_pid();"
	b := []byte(src)
	x := NewLineIndex(b)
	var starts []Position
	var calls []Position
	for _, c := range Split(b).Chunks {
		for _, s := range ParseChunk(b, c) {
			starts = append(starts, x.Position(s.Start))
			if sel := s.Node.GetSelectStmt(); sel != nil {
				for _, tl := range sel.TargetList {
					if fc := tl.GetResTarget().GetVal().GetFuncCall(); fc != nil {
						calls = append(calls, x.Position(s.Base+int(fc.Location)))
					}
				}
			}
		}
	}
	wantStarts := []Position{{2, 1}, {4, 10}, {6, 1}}
	wantCalls := []Position{{5, 3}, {6, 13}}
	if !slices.Equal(starts, wantStarts) || !slices.Equal(calls, wantCalls) {
		t.Errorf("starts %v want %v; calls %v want %v", starts, wantStarts, calls, wantCalls)
	}
}

func TestComments(t *testing.T) {
	src := "-- a\nSELECT /* b /* nested */ */ 1; -- c\n'--not'; $$/*no*/$$; \"--no\";"
	var got []string
	b := []byte(src)
	for _, c := range Split(b).Comments {
		got = append(got, string(b[c.Start:c.End]))
	}
	want := []string{"-- a", "/* b /* nested */ */", "-- c"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("comments %q, want %q", got, want)
	}
}

// TestCommentsMatchScanner checks the splitter's comments against
// libpg_query's own scanner on text both understand.
func TestCommentsMatchScanner(t *testing.T) {
	for _, src := range []string{
		"-- a\nSELECT /* b /* nested */ */ 1; -- c\nSELECT '--not', $$/*no*/$$, \"--no\"; /* end */",
		"CREATE FUNCTION f() RETURNS int AS $x$ -- inside $x$ LANGUAGE sql; -- after\r\n-- crlf\r\nSELECT 1",
		"SELECT E'\\' -- still string', 1 -- real",
	} {
		if msg := compareComments([]byte(src)); msg != "" {
			t.Errorf("%q: %s", src, msg)
		}
	}
}

// compareComments returns a description of the first difference between
// Split's comments and pg_query.Scan's, or "" when they agree or the
// scanner rejects the text.
func compareComments(src []byte) string {
	res, err := pg.Scan(string(src))
	if err != nil {
		return ""
	}
	var want [][2]int
	for _, tok := range res.Tokens {
		if tok.Token == pg.Token_SQL_COMMENT || tok.Token == pg.Token_C_COMMENT {
			want = append(want, [2]int{int(tok.Start), int(tok.End)})
		}
	}
	var got [][2]int
	for _, c := range Split(src).Comments {
		got = append(got, [2]int{c.Start, c.End})
	}
	if len(got) != len(want) {
		return fmt.Sprintf("comments %v, scanner %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("comments %v, scanner %v", got, want)
		}
	}
	return ""
}
