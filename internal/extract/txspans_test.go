package extract

import (
	"strings"
	"testing"
)

// TestRolledBackSpans checks which statements of a Rust file run inside a
// diesel test transaction: each case marks the literals expected inside
// with IN and those outside with OUT.
func TestRolledBackSpans(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		helpers         map[string]bool
	}{
		{"begin_test_transaction, rest of the block", "src/a.rs", `
fn f(conn: &mut PgConnection) {
    sql_query("OUT").execute(conn);
    conn.begin_test_transaction().unwrap();
    sql_query("IN").execute(conn);
    if x { sql_query("IN").execute(conn); }
}
fn g(conn: &mut PgConnection) { sql_query("OUT").execute(conn); }`, nil},
		{"nested block ends the span", "src/a.rs", `
fn f(conn: &mut PgConnection) {
    { conn.begin_test_transaction().unwrap(); sql_query("IN").execute(conn); }
    sql_query("OUT").execute(conn);
}`, nil},
		{"test_transaction closure with turbofish", "src/a.rs", `
fn f(conn: &mut PgConnection) {
    conn.test_transaction::<_, Error, _>(|conn| { sql_query("IN").execute(conn) });
    sql_query("OUT").execute(conn);
}`, nil},
		{"helper of the file", "src/a.rs", `
fn connection() -> PgConnection { let mut c = establish(); c.begin_test_transaction().unwrap(); c }
fn plain() -> PgConnection { establish() }
fn t1() { let c = &mut connection(); sql_query("IN").execute(c); }
fn t2() { let c = &mut plain(); sql_query("OUT").execute(c); }`, nil},
		{"helper of another file in test code", "tests/update.rs", `
#[test]
fn t1() { let c = &mut crate::schema::connection(); sql_query("IN").execute(c); }`, map[string]bool{"connection": true}},
		{"helper of another file outside test code", "src/db.rs", `
fn run() { let c = &mut connection(); sql_query("OUT").execute(c); }`, map[string]bool{"connection": true}},
		{"the file's own function of the helper's name wins", "tests/x.rs", `
fn connection() -> PgConnection { establish() }
#[test]
fn t1() { let c = &mut connection(); sql_query("OUT").execute(c); }`, map[string]bool{"connection": true}},
		{"in a comment or string, not a call", "src/a.rs", `
fn f(conn: &mut PgConnection) {
    // conn.begin_test_transaction()
    let s = "x.begin_test_transaction()";
    sql_query("OUT").execute(conn);
}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := RolledBackSpans(Rust, tc.file, []byte(tc.src), tc.helpers)
			checkMarks(t, "", tc.src, spans, "in a test transaction")
		})
	}
	if got := TestTransactionHelpers(Rust, []byte(`pub fn connection() -> C { let mut r = c(); r.begin_test_transaction().unwrap(); r }
fn other() -> C { c() }
fn setup(c: &mut C) { c.begin_test_transaction().unwrap(); }`)); strings.Join(got, ",") != "connection" {
		t.Errorf("TestTransactionHelpers = %v, want [connection]", got)
	}
	if RolledBackSpans(Go, "a.go", []byte(`x.begin_test_transaction()`), nil) != nil {
		t.Error("spans for Go")
	}
}

// FuzzRolledBackSpans checks that RolledBackSpans never panics and that
// every span lies inside the source, start before end.
func FuzzRolledBackSpans(f *testing.F) {
	f.Add([]byte("fn f(c: &mut C) { c.begin_test_transaction().unwrap(); sql_query(\"x\"); }"))
	f.Add([]byte("fn f(c: &mut C) { c.test_transaction::<_, E, _>(|c| { q(\"x\") }); }"))
	f.Add([]byte("fn connection() -> C { c.begin_test_transaction(); c } fn t() { connection(); }"))
	f.Add([]byte("c.test_transaction::<<<(("))
	f.Add([]byte("#[test] fn a() { x(\"y\"); } #[ ] fn b( #[test] fn"))
	f.Add([]byte("using (new TransactionScope()) { x(\"a\"); } using var s = new TransactionScope(; using (var t = new System.Transactions.TransactionScope()) t.Complete();"))
	f.Add([]byte(`let o: PgConnectOptions = u; o.x(1)?.options([("a", "b")]); PgConnectOptions::new().options([(`))
	f.Fuzz(func(t *testing.T, src []byte) {
		spans := RolledBackSpans(Rust, "tests/x.rs", src, map[string]bool{"connection": true})
		spans = append(spans, RolledBackSpans(CSharp, "x.cs", src, nil)...)
		spans = append(spans, RustOfflineTests(src)...)
		for _, s := range spans {
			if s.Start < 0 || s.End > len(src) || s.Start > s.End {
				t.Fatalf("span %v outside %d bytes", s, len(src))
			}
		}
		TestTransactionHelpers(Rust, src)
		for _, p := range RustConnectOptions(src) {
			if p.Key < 0 || p.Value >= len(src) || p.Key >= p.Value {
				t.Fatalf("pair %v outside %d bytes", p, len(src))
			}
		}
	})
}

// TestRustConnectOptions checks which ("name", "value") tuples count as
// sqlx connect options: the names of the pairs found, in order.
func TestRustConnectOptions(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string
	}{
		{"on the constructor", `let o = PgConnectOptions::new().options([("search_path", "a"), ("x", "b")]);`, "search_path,x"},
		{"on a typed let and its rebinding", `let o: PgConnectOptions = url.parse()?; let o = o.ssl_mode(m).options(vec![("search_path", "a")]);`, "search_path"},
		{"on a parameter", `fn f(o: &PgConnectOptions) { o.clone().options([("lock_timeout", "1s")]); }`, "lock_timeout"},
		{"on a path", `let o = sqlx::postgres::PgConnectOptions::new_without_pgpass().options([("a", "1")]);`, "a"},
		{"not connect options", `use sqlx::postgres::PgConnectOptions; cmd.options([("search_path", "x")]);`, ""},
		{"not a literal pair", `let o = PgConnectOptions::new().options([(k, "x"), ("y", v)]);`, ""},
		{"no PgConnectOptions in the file", `let o = Opts::new().options([("search_path", "x")]);`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			var got []string
			for _, p := range RustConnectOptions(src) {
				lits, _, _ := Literals(Rust, src)
				for _, l := range lits {
					if l.Start == p.Key {
						got = append(got, l.Value)
					}
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("got %q, want %q", strings.Join(got, ","), tc.want)
			}
		})
	}
}

// TestCSharpTransactionScopes checks the C# scopes whose transaction is
// never completed: literals marked IN lie in one, OUT outside.
func TestCSharpTransactionScopes(t *testing.T) {
	for _, src := range []string{
		`using (new TransactionScope()) using (var c = Open()) { c.Run("IN"); } c.Run("OUT");`,
		`void F() { using var scope = new TransactionScope(TransactionScopeOption.Required); c.Run("IN"); } void G() { c.Run("OUT"); }`,
		`using (var scope = new System.Transactions.TransactionScope()) { c.Run("OUT"); scope.Complete(); }`,
		`using (var scope = new TransactionScope()) c.Run("IN");
c.Run("OUT");`,
		`var scope = new TransactionScope(); c.Run("OUT"); // not disposed by a using`,
		`using (new TransactionScope()) { c.Run("IN"); /* scope.Complete(); */ var s = ".Complete()"; }`,
	} {
		spans := RolledBackSpans(CSharp, "x.cs", []byte(src), nil)
		checkMarks(t, src, src, spans, "in a rolled-back scope")
	}
}

// TestRustOfflineTests checks which test bodies count as never reaching a
// server: literals marked IN lie in one, OUT outside.
func TestRustOfflineTests(t *testing.T) {
	for _, src := range []string{
		`#[test] fn parses() { let u = "IN"; assert_eq!(u.parse::<Opts>().unwrap().x, 1); }`,
		`#[tokio::test] async fn connects() { let c = connect("OUT").await; }`,
		`#[test] #[ignore] pub fn runs() { let u = "OUT"; sqlx::query("x").execute(&p); }`,
		`fn helper() { let u = "OUT"; }`,
		`#[cfg(test)] mod t { #[test] fn a() { let u = "IN"; } fn b() { let u = "OUT"; } }`,
		`#[sqlx::test] async fn pooled(pool: PgPool) { let u = "OUT"; pool.acquire().await; }`,
	} {
		spans := RustOfflineTests([]byte(src))
		checkMarks(t, src, src, spans, "offline")
	}
}

// checkMarks checks that every literal "IN" of src lies in one of spans and
// every "OUT" in none; what names the spans and label prefixes the errors.
func checkMarks(t *testing.T, label, src string, spans []Span, what string) {
	t.Helper()
	if label != "" {
		label += ": "
	}
	for _, mark := range []string{`"IN"`, `"OUT"`} {
		for off := 0; ; {
			k := strings.Index(src[off:], mark)
			if k < 0 {
				break
			}
			off += k + 1
			in := false
			for _, s := range spans {
				in = in || s.Start <= off-1 && off-1 < s.End
			}
			if in != (mark == `"IN"`) {
				t.Errorf("%s%s at %d: %s = %v; spans %v", label, mark, off-1, what, in, spans)
			}
		}
	}
}

func TestCloseParen(t *testing.T) {
	for _, tc := range []struct {
		src  string
		open int
		want int
	}{
		{"f(a, (b), c) + d", 1, 12},
		{`f(")", g(x))`, 1, 12},
		{"f(/* ) */ x)", 1, 12},
		{"f(a", 1, -1},
	} {
		src := []byte(tc.src)
		lits, comments, err := Literals(Go, src)
		if err != nil {
			t.Fatal(err)
		}
		if got := CloseParen(src, CodeMask(src, lits, comments), tc.open); got != tc.want {
			t.Errorf("CloseParen(%q, %d) = %d, want %d", tc.src, tc.open, got, tc.want)
		}
	}
}
