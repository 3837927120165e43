package app.config;

import org.junit.jupiter.api.Test;

class UrlParserTest {
    // Parsed and compared, never connected: no finding.
    @Test
    void readsTheSchema() {
        DbUrl parsed = DbUrl.parse("jdbc:postgresql://db.internal:5432/app?currentSchema=billing");
        assertEquals("billing", parsed.schema());
    }

    // Connects with it.
    @Test
    void connects() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://db.internal:5432/app?currentSchema=billing")) { // want startup-parameter
            assertTrue(c.isValid(1));
        }
    }
}
