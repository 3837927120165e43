package extract

import (
	"strings"
	"testing"
)

// TestTransactionSpans checks which literals the transaction spans cover:
// every literal "IN" must be inside one, every "OUT" outside all, and
// literals "IN1" and "IN2" inside one transaction (the same span or
// spans of one Tx number), and "INX" inside another.
func TestTransactionSpans(t *testing.T) {
	for _, tt := range []struct {
		name string
		lang Language
		file string
		src  string
	}{
		// Transactions held in variables and committed: up to the commit.
		{"go tx variable", Go, "a.go", `func f() error { tx, _ := c.Begin(ctx); defer tx.Rollback(ctx); tx.Exec(ctx, "IN1"); c.Exec(ctx, "OUT"); tx.QueryRow(ctx, "IN2"); return tx.Commit(ctx) }`},
		{"go after commit", Go, "a.go", `func f() { tx, _ := c.Begin(ctx); tx.Exec(ctx, "IN"); tx.Commit(ctx); c.Exec(ctx, "OUT") }`},
		{"go never committed", Go, "a.go", `func f() { tx, _ := c.Begin(ctx); tx.Exec(ctx, "OUT") }`},
		{"java autocommit off", Java, "A.java", `void f() { conn.setAutoCommit(false); st.execute("IN1"); st.execute("IN2"); conn.commit(); st.execute("OUT"); }`},
		{"python begin variable", Python, "a.py", "def f(conn):\n    trans = conn.begin()\n    conn.execute(\"IN\")\n    trans.commit()\n    conn.execute(\"OUT\")\n"},
		// Parameters and receivers typed as transactions.
		{"go tx parameter", Go, "a.go", "func (s *S) f(ctx context.Context, tx pgx.Tx) error {\n\ttx.Exec(ctx, \"IN1\")\n\ts.pool.Exec(ctx, \"OUT\")\n\treturn tx.QueryRow(ctx, \"IN2\").Scan(&id)\n}\n"},
		{"go sql.Tx parameter", Go, "a.go", "func f(tx *sql.Tx) (int, error) {\n\ttx.Exec(\"IN\")\n}\nfunc g(db *sql.DB) { db.Exec(\"OUT\") }\n"},
		{"go BeginFunc callback", Go, "a.go", "func f() error {\n\tc.Exec(ctx, \"OUT\")\n\treturn pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {\n\t\t_, err := tx.Exec(ctx, \"IN\")\n\t\treturn err\n\t})\n}\n"},
		{"go function type parameter", Go, "a.go", "func WithTx(ctx context.Context, fn func(tx pgx.Tx) error) error {\n\ttx.Exec(ctx, \"OUT\")\n\treturn nil\n}\n"},
		{"kotlin receiver", Kotlin, "A.kt", "fun JdbcTransaction.add() {\n    exec(\"IN1\")\n    exec(\"IN2\")\n}\nfun other() { exec(\"OUT\") }\n"},
		{"kotlin generic receiver", Kotlin, "A.kt", "suspend fun <T> R2dbcTransaction.add(x: T): T {\n    exec(\"IN\")\n}\n"},
		// Blocks and callbacks.
		{"kotlin transaction block", Kotlin, "A.kt", "fun f() {\n    transaction(db) {\n        exec(\"IN1\")\n        exec(\"IN2\")\n    }\n    transaction {\n        exec(\"INX\")\n    }\n}\n"},
		{"kotlin template", Kotlin, "A.kt", "fun f() = transactionTemplate.execute {\n    jdbc.update(\"IN\")\n}\nfun g() = jdbc.update(\"OUT\")\n"},
		{"kotlin definition", Kotlin, "A.kt", "fun transaction(block: () -> Unit) {\n    exec(\"OUT\")\n}\n"},
		{"java template callback", Java, "A.java", `void f() { txTemplate.execute(status -> { jdbc.update("IN"); return null; }); jdbc.update("OUT"); }`},
		{"java jdbi", Java, "A.java", `void f() { jdbi.inTransaction(h -> h.execute("IN")); jdbi.useHandle(h -> h.execute("OUT")); }`},
		{"js knex", JavaScript, "a.js", "await knex.transaction(async (trx) => {\n  await trx.raw('IN')\n})\nawait knex.raw('OUT')\n"},
		{"ts prisma", JavaScript, "a.ts", "await prisma.$transaction(async (tx) => { await tx.$queryRaw`IN` })\nawait prisma.$queryRaw`OUT`\n"},
		{"js pg-promise", JavaScript, "a.js", "db.tx(t => t.one('IN'))\ndb.one('OUT')\n"},
		{"python with transaction", Python, "a.py", "async def f(conn):\n    async with conn.transaction():\n        await conn.execute(\"IN1\")\n        await conn.fetchval(\"IN2\")\n    await conn.fetchval(\"OUT\")\n"},
		{"python atomic", Python, "a.py", "def f(cur):\n    with transaction.atomic():\n        cur.execute(\"IN\")\n    cur.execute(\"OUT\")\n"},
		{"python engine begin", Python, "a.py", "def f(engine):\n    with engine.begin() as conn:\n        conn.execute(text(\"IN\"))\n    engine.connect().execute(text(\"OUT\"))\n"},
		{"python atomic decorator", Python, "a.py", "@transaction.atomic\ndef f(cur):\n    cur.execute(\"IN\")\n\ndef g(cur):\n    cur.execute(\"OUT\")\n"},
		{"psycopg implicit", Python, "a.py", "import psycopg2\n\ndef f(conn):\n    cur = conn.cursor()\n    cur.execute(\"IN1\")\n    cur.execute(\"IN2\")\n    conn.commit()\n    cur.execute(\"INX\")\n"},
		{"psycopg autocommit", Python, "a.py", "import psycopg\n\ndef f():\n    conn = psycopg.connect(dsn, autocommit=True)\n    conn.execute(\"OUT\")\n"},
		{"pgdb script", Python, "a.py", "import pgdb\nc = pgdb.connect(dsn)\ncu = c.cursor()\ncu.execute(\"IN1\")\n\ndef f(x):\n    return x\n\ncu.execute(\"IN2\")\nc.commit()\ncu.execute(\"INX\")\n"},
		{"psycopg module constants", Python, "a.py", "import psycopg2\nQ = \"OUT\"\n\nclass S:\n    def f(self, conn):\n        conn.commit()\n        conn.cursor().execute(\"IN\")\n"},
		{"asyncpg", Python, "a.py", "import asyncpg\n\nasync def f(conn):\n    await conn.execute(\"OUT\")\n"},
		{"ruby transaction block", Ruby, "a.rb", "ActiveRecord::Base.transaction do\n  conn.execute(\"IN1\")\n  conn.select_value(\"IN2\")\nend\nconn.select_value(\"OUT\")\n"},
		{"elixir transaction", Elixir, "a.ex", "Repo.transaction(fn ->\n  Repo.query!(\"IN\")\nend)\nRepo.query!(\"OUT\")\n"},
		// Methods marked @Transactional.
		{"spring method", Java, "A.java", "class S {\n  @Transactional\n  public long add() { jdbc.update(\"IN1\"); return jdbc.queryForObject(\"IN2\", Long.class); }\n  public long other() { return jdbc.queryForObject(\"OUT\", Long.class); }\n}\n"},
		{"spring class", Java, "A.java", "@Transactional(readOnly = false)\nclass S {\n  private final String q = \"OUT\";\n  public long add() throws SQLException { jdbc.update(\"IN1\"); return jdbc.queryForObject(\"IN2\", Long.class); }\n}\n"},
		{"spring event listener", Java, "A.java", "class S {\n  @TransactionalEventListener\n  public void on(E e) { jdbc.update(\"OUT\"); }\n}\n"},
		{"kotlin spring method", Kotlin, "A.kt", "class S {\n    @Transactional\n    fun add(): Long {\n        jdbc.update(\"IN\")\n    }\n    fun other() { jdbc.update(\"OUT\") }\n}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lits, comments, err := Literals(tt.lang, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			spans := TransactionSpans(tt.lang, tt.file, []byte(tt.src), lits, comments)
			// txOf returns the transaction of the innermost span holding
			// at: its Tx number, or its index as a negative number.
			txOf := func(at int) (int, bool) {
				k := -1
				for i, s := range spans {
					if s.Start <= at && at < s.End && (k < 0 || s.Start > spans[k].Start) {
						k = i
					}
				}
				if k < 0 {
					return 0, false
				}
				if spans[k].Tx > 0 {
					return spans[k].Tx, true
				}
				return -1 - k, true
			}
			markers := 0
			for _, w := range []string{"IN", "IN1", "IN2", "INX", "OUT"} {
				for from := 0; ; {
					at := indexLiteral(tt.src[from:], w)
					if at < 0 {
						break
					}
					at += from
					from = at + 1
					markers++
					if _, in := txOf(at); in != strings.HasPrefix(w, "IN") {
						t.Errorf("%s at %d inside a transaction span: %v (spans %v)", w, at, in, spans)
					}
				}
			}
			if markers == 0 {
				t.Fatal("no marker")
			}
			if a, b := indexLiteral(tt.src, "IN1"), indexLiteral(tt.src, "IN2"); a >= 0 && b >= 0 {
				ta, _ := txOf(a)
				tb, _ := txOf(b)
				if ta != tb {
					t.Errorf("IN1 and IN2 in different transactions (spans %v)", spans)
				}
				if x := indexLiteral(tt.src, "INX"); x >= 0 {
					if tx, _ := txOf(x); tx == ta {
						t.Errorf("INX in the transaction of IN1 (spans %v)", spans)
					}
				}
			}
		})
	}
}

// indexLiteral returns where the quoted literal w ("w", 'w' or `w`)
// starts in src, or -1.
func indexLiteral(src, w string) int {
	best := -1
	for _, q := range []string{`"`, `'`, "`"} {
		if at := strings.Index(src, q+w+q); at >= 0 && (best < 0 || at < best) {
			best = at
		}
	}
	return best
}

// TestDBAPIInherited checks which Python functions continue their
// caller's DB-API transaction: the literal "R" is read in an inherited
// span, after a call handed the transaction's connection (handed), in
// another span (own), or in none.
func TestDBAPIInherited(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  string
		want string // "inherited", "own" or "none"
	}{
		{"given cursor, no driver", "def f(cu):\n    cu.execute(\"INSERT INTO t DEFAULT VALUES\")\n    cu.execute(\"R\")  # currval()\n", "inherited"},
		{"cursor from a given connection", "def f(conn):\n    cur = conn.cursor()\n    cur.execute(\"R\")  # lastval()\n", "inherited"},
		{"with a given connection's cursor", "def f(conn):\n    with conn.cursor() as cur:\n        cur.execute(\"R\")  # lastval()\n", "inherited"},
		{"self", "class S:\n    def f(self):\n        self.cursor.execute(\"R\")  # lastval()\n", "inherited"},
		{"after a COMMIT executed", "def f(cu):\n    cu.execute(\"COMMIT\")\n    cu.execute(\"R\")  # lastval()\n", "own"},
		{"after commit, no driver", "def f(conn):\n    conn.commit()\n    conn.execute(\"R\")  # lastval()\n", "own"},
		{"after commit, psycopg", "import psycopg2\ndef f(conn):\n    conn.commit()\n    conn.execute(\"R\")  # lastval()\n", "own"},
		{"own connection, psycopg", "import psycopg2\ndef f(dsn):\n    conn = psycopg2.connect(dsn)\n    conn.execute(\"R\")  # lastval()\n", "own"},
		{"pgdb given cursor", "import pgdb\ndef f(cu):\n    cu.execute(\"R\")\n", "inherited"},
		{"no sequence read, no driver", "def f(cu):\n    cu.execute(\"R\")\n", "none"},
		{"autocommit", "def f(conn):\n    conn.autocommit = True\n    conn.execute(\"R\")  # lastval()\n", "none"},
		{"django", "from django.db import connection\ndef f(cursor):\n    cursor.execute(\"R\")  # lastval()\n", "none"},
		{"pg8000 native", "import pg8000.native\ndef f(conn):\n    conn.execute(\"R\")  # lastval()\n", "none"},
		{"awaited", "async def f(conn):\n    await conn.execute(\"R\")  # lastval()\n", "none"},
		{"awaited beside DB-API code", "def g(cu):\n    cu.execute(\"SELECT 1\")\n\nasync def f(conn):\n    await conn.execute(\"R\")  # lastval()\n", "none"},
		{"psycopg awaited", "import psycopg\nasync def f(conn):\n    await conn.execute(\"R\")  # lastval()\n", "inherited"},
		{"handed the connection", "def f(conn):\n    conn.commit()\n    helper(conn)\n    conn.execute(\"R\")  # lastval()\n", "handed"},
		{"handed the cursor by keyword", "import psycopg2\ndef f(db):\n    cu = db.cursor()\n    db.commit()\n    helper(x, cursor=cu)\n    cu.execute(\"R\")  # lastval()\n", "handed"},
		{"handed before a commit", "def f(conn):\n    helper(conn)\n    conn.commit()\n    conn.execute(\"R\")  # lastval()\n", "own"},
		{"handed self", "class S:\n    def f(self):\n        self.commit()\n        wx.Button(self)\n        self.execute(\"R\")  # lastval()\n", "own"},
		{"a def is not a hand-off", "def f(conn):\n    conn.commit()\n    def g(conn):\n        pass\n    conn.execute(\"R\")  # lastval()\n", "own"},
		{"script, no driver", "cu = db.cursor()\ncu.execute(\"INSERT INTO t DEFAULT VALUES\")\ncu.execute(\"R\")  # currval()\n", "own"},
		{"psycopg beside django", "import psycopg2\nfrom django.db import connection\ndef f(cursor):\n    cursor.execute(\"R\")  # lastval()\n", "own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			lits, comments, err := Literals(Python, src)
			if err != nil {
				t.Fatal(err)
			}
			at := indexLiteral(tt.src, "R")
			got := "none"
			k := -1
			spans := TransactionSpans(Python, "a.py", src, lits, comments)
			for i, s := range spans {
				if s.Start <= at && at < s.End && (k < 0 || s.Start > spans[k].Start) {
					k = i
				}
			}
			if k >= 0 {
				got = "own"
				if spans[k].Inherited {
					got = "inherited"
				}
				if spans[k].HandedOff {
					got = "handed"
				}
			}
			if got != tt.want {
				t.Errorf("got %s, want %s (spans %v)", got, tt.want, spans)
			}
		})
	}
}

// TestPythonStatementLists checks the lists of statements a call is
// given: the literals that start with "IN" (one of which reads a
// sequence) must be spans of one list, and those that start with "OUT"
// in none.
func TestPythonStatementLists(t *testing.T) {
	for _, tt := range []struct{ name, src string }{
		{"list display argument", "run([\"IN INSERT\", \"IN currval(s)\"])\nrun(\"OUT\")\n"},
		{"keyword argument of dicts", "def f():\n    db.run(x, queries=[{'sql': \"IN INSERT\"}, {'sql': \"IN lastval()\"}])\n"},
		{"names put in a list display", "def f():\n    a = \"OUT\"\n    g(a)\n    a = \"IN INSERT\"\n    b = (\"IN currval(s)\")\n    run([(a, []), (b, [])])\n"},
		{"appended in branches", "def f(x):\n    q = []\n    if x:\n        s = \"IN INSERT 1\"\n    else:\n        s = \"IN INSERT 2\"\n    q.append({'sql': s})\n    s = \"IN currval(s)\"\n    q.append({'sql': s})\n    q += [\"IN SELECT\"]\n    run(queries = q)\n"},
		{"list display then appended", "def f():\n    q = [\"IN INSERT\"]\n    q.append(\"IN currval(s)\")\n    run(q)\n"},
		{"printed only", "def f():\n    q = [\"OUT INSERT\", \"OUT currval(s)\"]\n    print(q)\n    for s in q:\n        run(s)\n"},
		{"no sequence read", "run([\"OUT INSERT\", \"OUT SELECT\"])\n"},
		{"a parameter", "def f(q):\n    q.append(\"OUT currval(s)\")\n    run(q)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			lits, comments, err := Literals(Python, src)
			if err != nil {
				t.Fatal(err)
			}
			spans := TransactionSpans(Python, "a.py", src, lits, comments)
			tx := -1
			for _, l := range lits {
				in, out := strings.HasPrefix(l.Value, "IN"), strings.HasPrefix(l.Value, "OUT")
				if !in && !out {
					continue
				}
				k := -1
				for i, s := range spans {
					if s.Start <= l.Start && l.Start < s.End && s.Ungrouped && s.Tx > 0 {
						k = i
					}
				}
				switch {
				case out && k >= 0:
					t.Errorf("%q in a list (spans %v)", l.Value, spans)
				case in && k < 0:
					t.Errorf("%q in no list (spans %v)", l.Value, spans)
				case in && tx >= 0 && spans[k].Tx != tx:
					t.Errorf("%q in another list (spans %v)", l.Value, spans)
				case in:
					tx = spans[k].Tx
				}
			}
		})
	}
}
