package app;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

class TenantDao {
    void forTenant(Connection conn, String tenant) throws Exception {
        conn.setSchema(tenant);
        conn.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        conn.setClientInfo("ApplicationName", "tenant-" + tenant);
        conn.setReadOnly(true);
        Statement st = conn.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY, ResultSet.HOLD_CURSORS_OVER_COMMIT);
        st.setFetchSize(500);
    }
}
