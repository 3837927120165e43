package app;

class Repo {
    void lock(Connection c, long id) throws SQLException {
        c.createStatement().execute("SELECT pg_advisory_lock(" + id + ")"); // want advisory-lock-session
        log.info("SET search_path failed");
        String q = """
            PREPARE fetch_order AS -- want sql-prepare
            SELECT * FROM orders WHERE id = $1
            """;
        c.prepareStatement("SELECT * FROM orders WHERE id = ?").setLong(1, id);
        c.createStatement().execute("LOAD 'auto_explain'"); // want session-load
    }
}
