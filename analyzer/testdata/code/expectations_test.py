"""Expected SQL in a test is text to compare, not a statement sent."""


class SchemaTest(TestCase):
    def test_temporary_table(self):
        sql, params = User._schema._create_table(temporary=True).query()
        self.assertEqual(sql, (
            'CREATE TEMPORARY TABLE IF NOT EXISTS "users" ('
            '"id" INTEGER NOT NULL PRIMARY KEY)'))
        self.cur.execute(
            "CREATE TEMPORARY TABLE scratch (id int)")  # want temp-table:error

    async def test_execute(self):
        self.assertEqual(await self.con.fetchval('EXECUTE foobar'), 1)  # want sql-prepare:error

    def test_timeout_disabled(self):
        # unittest.mock: the calls a mocked cursor expects, not statements.
        cursor = self.conn.cursor.return_value
        cursor.execute.assert_has_calls(
            [
                call("SET statement_timeout TO 0"),
                call("SELECT 1"),
            ]
        )
        cursor.execute.assert_called_once_with("RESET statement_timeout")
        cursor.execute("SET statement_timeout TO 0")  # want session-set:error
