package app;

class ConnectionTest {
    void readOnly(Connection con) throws SQLException {
        // The extractor does not join the pieces around a method call: the
        // last piece continues ALTER DATABASE, it is not a SET of its own.
        con.createStatement().execute("ALTER DATABASE " + Db.name() + " SET default_transaction_read_only=on;");
        assertFirstParameterTypeName("set parameter to DATE", "date", ps);
        assertEquals("SET search_path TO app", generated);
        con.createStatement().execute("SET search_path TO app, public"); // want session-set:critical
    }

    String oracleTrigger(String name) {
        return "DECLARE n NUMBER; BEGIN EXECUTE IMMEDIATE ('create or replace trigger " + name + "'); END;";
    }
}
