package sqlparse

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// FuzzSplit checks the splitter, the parser wrapper, routine bodies and
// the position mapping on arbitrary bytes: nothing panics, every range
// stays inside the text and in order, and on text that libpg_query parses
// whole (and has no psql syntax) the statements and comments are the same
// as the parser's own.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"SELECT 1; SELECT 2",
		"SELECT 1; SELEC 2; SELECT 3",
		"-- c\nSET search_path = a; /* x */ LISTEN b;",
		"COPY t FROM stdin;\n1\t2\n\\.\nSELECT 1;",
		"\\set x 1\nSELECT :x, :'x', :\"x\";",
		"CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(1); EXECUTE 'SET a = 1'; END $$;",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT currval(''s'')';",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END;",
		"DO $x$ DECLARE r record; BEGIN FOR r IN SELECT 1 LOOP PERFORM 1; END LOOP; END $x$;",
		"SELECT 'a\r\nb', E'\\'', $a$ $b$ $a$;\r\n",
		"CREATE RULE r AS ON INSERT TO t DO (INSERT INTO a VALUES (1); DELETE FROM b);",
		"SELECT 'ü€😀' /* \xff */;",
		"DO'00PERFORM'", // PERFORM ending a body that libpg_query cannot compile
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sc := Split(src)
		x := NewLineIndex(src)
		prev := 0
		var starts []int
		for _, c := range sc.Chunks {
			if c.Start < prev || c.End < c.Start || c.End > len(src) {
				t.Fatalf("chunk %+v out of order or range (prev end %d, len %d)", c, prev, len(src))
			}
			prev = c.End
			for _, st := range ParseChunk(src, c) {
				if st.Start < c.Start || st.End > c.End || st.Start > st.End {
					t.Fatalf("statement [%d,%d) outside chunk %+v", st.Start, st.End, c)
				}
				if st.Err != nil && (st.Err.Offset < c.Start || st.Err.Offset > c.End) {
					t.Fatalf("error offset %d outside chunk %+v", st.Err.Offset, c)
				}
				if st.Err == nil {
					starts = append(starts, st.Start)
				}
				for _, b := range Bodies(src, &st, nil) {
					if b.Start < 0 || b.End > len(src) || b.Start > b.End {
						t.Fatalf("body statement [%d,%d) outside text of %d bytes", b.Start, b.End, len(src))
					}
				}
			}
		}
		for _, cm := range sc.Comments {
			if cm.Start < 0 || cm.End > len(src) || cm.Start >= cm.End {
				t.Fatalf("comment %+v out of range", cm)
			}
		}
		// Positions are monotonic and agree with a naive count.
		last := Position{1, 1}
		for off := 0; off <= len(src); off += 1 + len(src)/17 {
			p := x.Position(off)
			if p.Line < last.Line || (p.Line == last.Line && p.Column < last.Column) {
				t.Fatalf("position of %d is %v, before %v", off, p, last)
			}
			last = p
			if utf8.Valid(src) && !bytes.ContainsRune(src, '\r') && utf8.RuneStart(at(src, off)) {
				line := bytes.Count(src[:off], []byte("\n")) + 1
				ls := bytes.LastIndexByte(src[:off], '\n') + 1
				col := utf8.RuneCount(src[ls:off]) + 1
				if p != (Position{line, col}) {
					t.Fatalf("position of %d is %v, want %d:%d", off, p, line, col)
				}
			}
		}
		// Differential check against the parser on plain SQL.
		if bytes.ContainsAny(src, "\\:\x00") || bytes.Contains(bytes.ToLower(src), []byte("stdin")) {
			return
		}
		res, err := pg.Parse(string(src))
		if err != nil {
			return
		}
		var want []int
		for _, raw := range res.Stmts {
			end := len(src)
			if raw.StmtLen > 0 {
				end = int(raw.StmtLocation + raw.StmtLen)
			}
			want = append(want, skipSpaceAndComments(src, int(raw.StmtLocation), end))
		}
		if !slices.Equal(starts, want) {
			t.Fatalf("statement starts %v, parser says %v", starts, want)
		}
		if msg := compareComments(src); msg != "" && !strings.Contains(string(src), "$") {
			t.Fatal(msg)
		}
	})
}

func at(b []byte, i int) byte {
	if i >= len(b) {
		return 0
	}
	return b[i]
}
