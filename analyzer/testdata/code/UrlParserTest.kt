package app.config

import org.junit.jupiter.api.Test

class UrlParserTest {
    // Parsed and compared, never connected: no finding.
    @Test
    fun `reads the schema from the url`() {
        val url = "jdbc:postgresql://db.internal:5432/app?currentSchema=billing"
        val parsed = DbUrl.parse(url)
        assertEquals("billing", parsed.schema)
    }

    // Connects with it: the pooler sees the startup parameter.
    @Test
    fun `connects with the schema`() {
        val url = "jdbc:postgresql://db.internal:5432/app?currentSchema=billing" // want startup-parameter
        DriverManager.getConnection(url).use { it.isValid(1) }
    }
}
