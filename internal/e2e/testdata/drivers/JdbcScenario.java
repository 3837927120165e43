// One pgjdbc scenario: java -cp postgresql.jar:. JdbcScenario URL SCENARIO.
//
// pgjdbc sends every statement with the extended protocol, Parse to Sync
// in one round trip. A PreparedStatement run prepareThreshold times (5 by
// default) switches to a named server statement S_N: parsed once, then
// only bound in every later round trip. With autocommit off, BEGIN goes in
// the same round trip as the transaction's first statement.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

public class JdbcScenario {
    static void check(Object got, Object want, String what) {
        if (!want.equals(got)) {
            throw new IllegalStateException(what + ": got " + got + ", want " + want);
        }
    }

    static Object one(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getObject(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = args[0], scenario = args[1];
        // postgres://user@host:port/db?… → jdbc:postgresql://host:port/db?user=…
        java.net.URI u = new java.net.URI(url);
        String jdbc = "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath() + "?user=" + u.getUserInfo();
        if (scenario.startsWith("threshold0")) {
            jdbc += "&prepareThreshold=0";
        } else if (scenario.equals("current-schema")) {
            jdbc += "&currentSchema=public";
        }
        try (Connection c = DriverManager.getConnection(jdbc)) {
            switch (scenario) {
                case "prepared":
                case "threshold0":
                    try (PreparedStatement ps = c.prepareStatement("SELECT ?::int + 1")) {
                        for (int i = 0; i < 7; i++) {
                            ps.setInt(1, i);
                            try (ResultSet rs = ps.executeQuery()) {
                                rs.next();
                                check(rs.getInt(1), i + 1, "select");
                            }
                        }
                    }
                    break;
                case "set":
                    try (Statement st = c.createStatement()) {
                        st.execute("SET statement_timeout = 5000");
                    }
                    check(one(c, "SHOW statement_timeout"), "5s", "statement_timeout");
                    break;
                case "set-local":
                case "threshold0-set-local":
                    c.setAutoCommit(false);
                    try (Statement st = c.createStatement()) {
                        st.execute("SET LOCAL statement_timeout = 5000");
                    }
                    check(one(c, "SHOW statement_timeout"), "5s", "inside");
                    c.commit();
                    check(one(c, "SHOW statement_timeout"), "0", "after commit");
                    c.commit();
                    break;
                case "isolation":
                    // pgjdbc sends SET SESSION CHARACTERISTICS AS
                    // TRANSACTION ISOLATION LEVEL … for this.
                    c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
                    check(one(c, "SHOW transaction_isolation"), "serializable", "isolation");
                    break;
                case "current-schema":
                    check(one(c, "SHOW search_path"), "public", "search_path");
                    break;
                case "schema":
                    // setSchema: SET SESSION SCHEMA '…', the search_path.
                    c.setSchema("public");
                    check(one(c, "SELECT count(*) > 0 FROM pg_class"), true, "select");
                    break;
                case "fetch-size":
                    // A fetch size inside a transaction: a named portal
                    // read with several Executes, each ended by a Sync.
                    c.setAutoCommit(false);
                    try (Statement st = c.createStatement()) {
                        st.setFetchSize(3);
                        int n = 0;
                        try (ResultSet rs = st.executeQuery("SELECT generate_series(1, 10)")) {
                            while (rs.next()) {
                                n++;
                            }
                        }
                        check(n, 10, "rows");
                    }
                    c.commit();
                    break;
                case "advisory-lock":
                    c.setAutoCommit(false);
                    one(c, "SELECT pg_advisory_lock(4245)");
                    c.commit();
                    one(c, "SELECT count(*) FROM pg_class");
                    c.commit();
                    check(one(c, "SELECT pg_advisory_unlock(4245)"), true, "unlock");
                    c.commit();
                    break;
                default:
                    throw new IllegalArgumentException("unknown scenario " + scenario);
            }
        }
    }
}
