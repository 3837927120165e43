package app;

import java.sql.Connection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TenantRepositoryTest {
    private Connection conn;

    @BeforeEach
    void begin() throws Exception {
        conn = dataSource.getConnection();
        conn.setAutoCommit(false);
    }

    @Test
    void readsInTenantSchema() throws Exception {
        try (var st = conn.createStatement()) {
            st.execute("SET search_path TO tenant_a, public");
            st.execute("CREATE TEMP TABLE scratch (id int)");
        }
    }

    @AfterEach
    void rollback() throws Exception {
        conn.rollback();
        conn.close();
    }
}
