package app

// Raw strings with a margin are read as trimMargin() returns them.
class MarginSql(private val conn: Connection) {
    fun stage() {
        val create = """CREATE TEMP TABLE staged -- want temp-table
            |(
            |  id bigint
            |)""".trimMargin()
        conn.createStatement().execute(create)
        conn.createStatement().execute(
            """
            #SELECT pg_advisory_lock(7) -- want advisory-lock-session
            """.trimMargin("#"),
        )
    }
}
