package app;

// SQL heads that code completes with values.
class TenantSession {
    void enter(java.sql.Statement st, String schema, String name) throws Exception {
        st.execute("SET search_path TO " + schema); // want session-set:critical
        StringBuilder sb = new StringBuilder();
        sb.append("CREATE TEMP TABLE ").append(name).append(" (id int)"); // want temp-table:error
        StringBuilder ok = new StringBuilder();
        ok.append("CREATE TEMP TABLE ").append(name).append(" (id int) ON COMMIT DROP");
        st.execute("SET LOCAL search_path TO " + schema);
    }
}
