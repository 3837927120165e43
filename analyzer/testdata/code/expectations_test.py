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
