package extract

import (
	"reflect"
	"strings"
	"testing"
)

func TestJavaCalls(t *testing.T) {
	names := map[string]bool{"setSchema": true, "setClientInfo": true, "transactionIsolation": true}
	for _, c := range []struct {
		name   string
		lang   Language
		src    string
		want   []string // receiver.name(args…), literal arguments marked with L:
		assign bool
	}{
		{name: "simple", lang: Java, src: `conn.setSchema("app");`, want: []string{`conn.setSchema(L:"app")`}},
		{name: "chained receiver", lang: Java, src: "this.ds.getConnection()\n    .setSchema(tenant(t, \"x\"));", want: []string{`.setSchema(tenant(t, "x"))`}},
		{name: "two arguments", lang: Java, src: `c.setClientInfo("ApplicationName", name + "-" + id);`, want: []string{`c.setClientInfo(L:"ApplicationName",name + "-" + id)`}},
		{name: "parentheses in strings and chars", lang: Java, src: `c.setSchema(f(")", ')', "(")); c.setSchema(y);`, want: []string{`c.setSchema(f(")", ')', "("))`, "c.setSchema(y)"}},
		{name: "declaration", lang: Java, src: "public void setSchema(String schema) { this.schema = schema; }", want: nil},
		{name: "method reference", lang: Java, src: "list.forEach(conn::setSchema);", want: nil},
		{name: "comment and string", lang: Java, src: "// conn.setSchema(\"x\")\nString s = \"conn.setSchema(y)\"; /* c.setSchema(z) */", want: nil},
		{name: "no call", lang: Java, src: "x = conn.setSchema;", want: nil},
		{name: "unterminated", lang: Java, src: "conn.setSchema(\"x\"", want: nil},
		{name: "kotlin safe call", lang: Kotlin, src: `conn?.setSchema("app")`, want: []string{`conn.setSchema(L:"app")`}},
		{name: "kotlin property assignment", lang: Kotlin, src: "conn.transactionIsolation = Connection.TRANSACTION_SERIALIZABLE\nval x = 1", want: []string{"conn.transactionIsolation=Connection.TRANSACTION_SERIALIZABLE"}},
		{name: "kotlin assignment before a comment", lang: Kotlin, src: "c.transactionIsolation = 8 // serial\nc.transactionIsolation = /* x */ 2", want: []string{"c.transactionIsolation=8"}},
		{name: "kotlin comparison is no assignment", lang: Kotlin, src: "if (conn.transactionIsolation == 8) {}", want: nil},
		{name: "kotlin template", lang: Kotlin, src: `val s = "${conn.setSchema("x")}"`, want: nil},
		{name: "range is no receiver", lang: Kotlin, src: "for (i in 0..setSchema(1)) {}", want: nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := []byte(c.src)
			lits, comments, err := Literals(c.lang, src)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, call := range JavaCalls(src, lits, comments, names) {
				if !strings.HasPrefix(c.src[call.NameStart:], call.Name) || call.End > len(src) {
					t.Fatalf("call %+v: bad offsets", call)
				}
				var args []string
				for _, a := range call.Args {
					s := c.src[a.Start:a.End]
					if a.Lit >= 0 {
						if lits[a.Lit].Start != a.Start {
							t.Fatalf("argument %q: literal %d starts at %d", s, a.Lit, lits[a.Lit].Start)
						}
						s = "L:" + s
					}
					args = append(args, s)
				}
				if call.Assign {
					got = append(got, call.Receiver+"."+call.Name+"="+strings.Join(args, ","))
				} else {
					got = append(got, call.Receiver+"."+call.Name+"("+strings.Join(args, ",")+")")
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func FuzzJavaCalls(f *testing.F) {
	for _, c := range javaCases {
		f.Add([]byte(c.src))
	}
	f.Add([]byte(`c.setSchema(f(")", ')', "(")); k?.setReadOnly(true); x.setTransactionIsolation = 1`))
	names := map[string]bool{"setSchema": true, "setReadOnly": true, "setTransactionIsolation": true}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, lang := range []Language{Java, Kotlin} {
			lits, comments, _ := Literals(lang, src)
			prev := -1
			for _, call := range JavaCalls(src, lits, comments, names) {
				if call.NameStart <= prev || call.End > len(src) || call.NameStart+len(call.Name) > call.End {
					t.Fatalf("call %+v out of order or range (previous %d)", call, prev)
				}
				prev = call.NameStart
				for _, a := range call.Args {
					if a.Start > a.End || a.Start < call.NameStart || a.End > call.End {
						t.Fatalf("argument %+v outside call %+v", a, call)
					}
				}
			}
		}
	})
}

// TestDeclaredType checks which type a file declares for a receiver.
func TestDeclaredType(t *testing.T) {
	for _, tt := range []struct {
		name string
		lang Language
		src  string
		v    string
		want string
	}{
		{"local", Java, `void f() { Table t = new Table(); t.setSchema("s"); }`, "t", "Table"},
		{"generic field below", Java, `void f() { conn.setSchema("s"); } private final java.sql.Connection conn;`, "conn", "Connection"},
		{"var new", Java, `void f() { var e = new DbExport(p); e.setSchema("s"); }`, "e", "DbExport"},
		{"parameter", Java, `void f(HikariConfig cfg, int n) { cfg.setSchema("s"); }`, "cfg", "HikariConfig"},
		{"nearest before", Java, `void f(Table x) { } void g() { Connection x = ds.getConnection(); x.setSchema("s"); }`, "x", "Connection"},
		{"in a comment", Java, `// Table t;
void f() { t.setSchema("s"); }`, "t", ""},
		{"unknown", Java, `void f() { t.setSchema("s"); }`, "t", ""},
		{"kotlin property", Kotlin, `class A(private val conn: Connection) { fun f() { conn.setSchema("s") } }`, "conn", "Connection"},
		{"kotlin constructor", Kotlin, `fun f() { val t = Table("x"); t.setSchema("s") }`, "t", "Table"},
		{"kotlin ternary-like text in java", Java, `void f() { Object o = c ? t : Other.X; t.setSchema("s"); }`, "t", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			lits, comments, err := Literals(tt.lang, src)
			if err != nil {
				t.Fatal(err)
			}
			at := strings.Index(tt.src, tt.v+".setSchema")
			if got := DeclaredType(tt.lang, src, lits, comments, tt.v, at); got != tt.want {
				t.Errorf("DeclaredType(%q) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}
