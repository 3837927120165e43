package analyzer

import "testing"

func TestLooksLikeProse(t *testing.T) {
	for v, want := range map[string]bool{
		"Discard all":               true,
		"Discard All":               true, // a button label
		"Reset Password":            true,
		"Close All Tabs Now Please": false, // five words: left to the parser
		"Discard ALL":               false,
		"Listen address":            true,
		"Set up the queue":          true,
		"DISCARD ALL":               false,
		"discard all":               false,
		"Set search_path TO app":    false, // an upper-case word: SQL
		"SELECT 1":                  false,
		"S":                         false,
		"  Listen for new events":   true,
		"Select pg_backend_pid()":   false,
		"Set timezone = 'utc'":      false,
	} {
		if got := looksLikeProse(v); got != want {
			t.Errorf("looksLikeProse(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestContinuesExpression(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{`x("ALTER DATABASE " + db() + " SET a = 1")`, true},
		{"sql <>\n  \" SET a = 1\"", true},
		{"sql <>\n  \"SET a = 1\"", false}, // a script of its own
		{`q = " SET a = 1"`, false},
		{`f(a, " SET a = 1")`, false},
		{`x = a++ " SET a = 1"`, false},
		{`$q = 'ALTER DATABASE ' . db() . " SET a = 1"`, true},
		{`$q .= " SET a = 1"`, true},
		{`q += " SET a = 1"`, true},
		{`$q = " SET a = 1"`, false},
	} {
		start := indexQuote(c.src)
		v := c.src[start+1 : len(c.src)-1]
		if i := len(v) - 1; v[i] == '"' {
			v = v[:i]
		}
		if got := continuesExpression([]byte(c.src), start, v); got != c.want {
			t.Errorf("continuesExpression(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// indexQuote returns the offset of the last string literal's opening quote.
func indexQuote(s string) int {
	end := len(s) - 1
	for end >= 0 && s[end] != '"' {
		end--
	}
	i := end - 1
	for i >= 0 && s[i] != '"' {
		i--
	}
	return i
}

func TestMatchOperand(t *testing.T) {
	for src, want := range map[string]bool{
		`assert output =~ "execute ddl"`: true,
		`refute out !~ "execute ddl"`:    true,
		`x = "execute ddl"`:              false,
		`f("execute ddl")`:               false,
	} {
		start := len(src) - len(`"execute ddl"`)
		if got := matchOperand([]byte(src), start); got != want {
			t.Errorf("matchOperand(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestOtherDatabaseFile(t *testing.T) {
	for name, want := range map[string]bool{
		"database/mysql/mysql.go":                                true,
		"lib/strong_migrations/adapters/mariadb_adapter.rb":      true,
		"lib/dialects/oracle/schema/internal/trigger.js":         true,
		"src/test/java/app/compat/Mysql8CompatibilityTest.java":  true,
		`C:\src\app\sqlite\store.go`:                             true,
		"database/postgres/postgres.go":                          false,
		"lib/dialects/postgres/index.js":                         false,
		"adapters/postgresql_adapter.rb":                         false,
		"/home/ci/mysql-tools/src/app/internal/store/queries.go": false, // above the project
		"app/models/job.rb":                                      false,
		"db/platform/h2/H2SqlTemplate.java":                      true,
		"src/main/java/app/db/H2Dialect.kt":                      true,
		"src/main/java/app/db/Db2Support.java":                   true,
		"src/main/java/app/auth/oauth2/TokenStore.java":          false,
		"src/main/java/app/db/Handler.java":                      false,
	} {
		if got := otherDatabaseFile(name); got != want {
			t.Errorf("otherDatabaseFile(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNotSQLCallExpectations(t *testing.T) {
	for name, want := range map[string]bool{
		"t":                            true,
		"expect(err.message).tobe":     true,
		"tobe":                         true,
		"assertequals":                 true,
		"assertfirstparametertypename": true,
		"to.equal":                     true,
		"click_button":                 true,
		"conn.execute":                 false,
		"db.exec":                      false,
		"query":                        false,
		"echo":                         true,
		"error_log":                    true,
		"sys.exit":                     true,
		"db::statement":                false,
	} {
		if got := notSQLCall(name); got != want {
			t.Errorf("notSQLCall(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRustNotSQLCall(t *testing.T) {
	for name, want := range map[string]bool{
		".expect":     true,
		"row.expect":  true,
		"expect_err":  true,
		"query":       false,
		"sql_query":   false,
		"expectation": false,
	} {
		if got := rustNotSQLCall(name); got != want {
			t.Errorf("rustNotSQLCall(%q) = %v, want %v", name, got, want)
		}
	}
}
