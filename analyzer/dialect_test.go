package analyzer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestOtherDialect checks that a SQL file of another database is one
// other-dialect note instead of parse errors and findings, and that
// PostgreSQL files holding such words are checked as usual.
func TestOtherDialect(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		want            []string // rule:line
		inMsg           string
	}{
		{"T-SQL procedure", "dbo/Stored Procedures/User_Create.sql",
			"-- a comment\nCREATE PROCEDURE [dbo].[User_Create]\n    @Id UNIQUEIDENTIFIER\nAS\nBEGIN\n    SET NOCOUNT ON\n    INSERT INTO [dbo].[User] ([Id]) VALUES (@Id)\nEND\nGO\n",
			[]string{"other-dialect:2"}, "SQL Server (T-SQL) (a [bracketed] identifier here), not PostgreSQL: PostgreSQL refuses"},
		{"T-SQL SET options alone are no session-set", "setup.sql",
			"SET ANSI_NULLS ON\nGO\nSET QUOTED_IDENTIFIER ON\nGO\nIF OBJECT_ID('dbo.T') IS NULL CREATE TABLE T (Id INT)\nGO\n",
			[]string{"other-dialect:1"}, "a SET of a T-SQL session option here"},
		{"MySQL schema", "schema.sql",
			"CREATE TABLE `users` (\n  `id` INT NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB;\nSET NAMES utf8mb4;\n",
			[]string{"other-dialect:1"}, "MySQL (a `backquoted` identifier here)"},
		{"path names another database", "migrations/sqlite/0001.sql",
			"CREATE TEMP TABLE t(x int);\n",
			[]string{"other-dialect:1"}, "SQLite (its path names it)"},
		{"path names another database, nothing to report", "migrations/mysql/0002.sql",
			"CREATE TABLE t(x int);\n", nil, ""},
		{"PostgreSQL with the words in strings, comments and bodies", "schema.sql",
			"-- GO\n-- SET NOCOUNT ON, `x`, ENGINE=InnoDB\nCREATE TABLE engine (id int, nvarchar text, auto_increment int, tags text[]);\n" +
				"SELECT tags[1], '`x`', 'SET NOCOUNT ON' FROM engine;\n" +
				"CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM 1; -- [dbo].[x]\nEND\n$$;\n" +
				"SET search_path = tenant;\n",
			[]string{"session-set:10"}, ""},
		{"PostgreSQL with a marker but nothing refused", "schema.sql",
			"CREATE TABLE t (id int);\nSELECT 1 FROM t WHERE id = (SELECT max(id) FROM t) ;\nCREATE TEMP TABLE x (id int);\n-- made with DECLARE @x in mind\n",
			[]string{"temp-table:3"}, ""},
		{"GO alone keeps a PostgreSQL script's findings", "Northwind.sql",
			"SET client_min_messages = warning;\nGO\nCREATE TEMP TABLE x (id int);\n",
			[]string{"parse-error:2", "session-set:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := (&Config{}).AnalyzeSource(tc.file, []byte(tc.src))
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%s:%d", f.Rule, f.Line))
				if f.Rule == rules.OtherDialect.ID && !strings.Contains(f.Message, tc.inMsg) {
					t.Errorf("message %q lacks %q", f.Message, tc.inMsg)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
	// The note follows the rule selection.
	var sel []*rules.Rule
	for _, r := range rules.All() {
		if r != rules.OtherDialect {
			sel = append(sel, r)
		}
	}
	if res := (&Config{Rules: sel}).AnalyzeSource("x.sql", []byte("SET NOCOUNT ON\nGO\n")); len(res.Findings) != 0 {
		t.Errorf("other-dialect disabled: %+v", res.Findings)
	}
}
