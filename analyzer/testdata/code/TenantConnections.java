package app;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;

class TenantConnections {
    static final String URL = "jdbc:postgresql://db:5432/app?currentSchema=tenant&prepareThreshold=3"; // want startup-parameter:error protocol-prepare:info
    static final String SAFE = "jdbc:postgresql://db:5432/app?prepareThreshold=0&ApplicationName=billing&sslmode=require";
    static final String OPTS = "jdbc:postgresql://db/app?options=-c%20statement_timeout%3D5s%20-c%20TimeZone%3DUTC"; // want startup-parameter:error

    void use(Connection conn, String tenant) throws Exception {
        conn.setSchema(tenant); // want session-set:critical
        this.pool.getConnection()
            .setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE); // want session-set:error
        conn.setClientInfo("ApplicationName", "billing"); // want session-set:info
        conn.setClientInfo("ClientUser", "x");
        conn.setClientInfo(props);
        // pgjdbc's default readOnlyMode=transaction sends BEGIN READ ONLY: no SET.
        conn.setReadOnly(true);
        // pgjdbc reads a holdable result set whole, without a cursor.
        Statement st = conn.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY, ResultSet.HOLD_CURSORS_OVER_COMMIT);
        st.setFetchSize(100);
        conn.setTransactionIsolation(Connection.TRANSACTION_NONE);
        // pgpoolcheck:ignore session-set the reporting job connects directly
        conn.setSchema("reports");
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }
}
