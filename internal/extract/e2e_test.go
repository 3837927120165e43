package extract

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// TestNormalizedLiteralsParse runs literals from each language through
// NormalizePlaceholders and the PostgreSQL parser: SQL with the usual
// driver placeholders and interpolations parses, prose does not.
func TestNormalizedLiteralsParse(t *testing.T) {
	for _, c := range []struct {
		lang  Language
		src   string
		parse bool
	}{
		{Go, `db.Exec("SELECT pg_advisory_lock($1)", id)`, true},
		{Go, "q := `SET search_path = ` + schema", true},
		{Go, `fmt.Sprintf("SET statement_timeout = %d", ms)`, true},
		{Python, `cur.execute("SELECT * FROM jobs WHERE id = %s AND q = %(queue)s", args)`, true},
		{Python, `cur.execute(f"LISTEN {channel}")`, true},
		{Python, `cur.execute("SET search_path TO {}".format(schema))`, true},
		{Ruby, "connection.execute(<<~SQL)\n  SET LOCAL lock_timeout = #{timeout}\nSQL\n", true},
		{Ruby, `find_by_sql("SELECT * FROM t WHERE name = ? AND tags ?| array[:tags]", n)`, true},
		{JavaScript, "await sql`SELECT * FROM ${sql(table)} WHERE id = ${id}`", true},
		{JavaScript, `db.query("UNLISTEN " + channel)`, true},
		{Java, "String q = \"\"\"\n    SELECT * FROM t\n    WHERE a = :a AND b = ?\n    \"\"\";", true},
		{Java, `@Select("SELECT * FROM ${table} WHERE id = #{id}")`, true},
		{Kotlin, `exec("SET ROLE ${role}")`, true},
		{Elixir, `Repo.query!("SELECT pg_notify($1, $2)", [a, b])`, true},
		{Elixir, "Ecto.Adapters.SQL.query!(repo, ~s(SET application_name = '#{name}'))", true},
		{Java, `log.warn("could not SET timeout");`, false},
		{Python, `logger.info("LISTEN failed: %s", err)`, false},
	} {
		lits, _, err := Literals(c.lang, []byte(c.src))
		if err != nil || len(lits) == 0 {
			t.Fatalf("%s: %v, %d literals", c.src, err, len(lits))
		}
		sql := NormalizePlaceholders(lits[0].Value)
		_, err = pg.Parse(sql)
		if (err == nil) != c.parse {
			t.Errorf("%s %s: normalized %q: parse error %v, want parse %v", c.lang, c.src, sql, err, c.parse)
		}
	}
}
