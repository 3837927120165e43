package app;

import java.sql.Connection;

class Migrator {
    void run(Connection conn) throws Exception {
        conn.setAutoCommit(false);
        try (var st = conn.createStatement()) {
            st.execute("SET search_path TO app"); // want session-set:critical
            conn.commit();
        } catch (Exception e) {
            conn.rollback();
            throw e;
        }
    }
}
