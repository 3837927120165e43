// Load through a PostgreSQL pooler with pgjdbc, checking every result.
//
// Usage: java -cp .:postgresql.jar Load HOST PORT VARIANT CLIENTS ROUNDS
//
// Variants (connection properties):
//   default           prepareThreshold=5 (pgjdbc's default): a statement run
//                     5 times through a PreparedStatement (and the driver's
//                     statement cache) becomes a named S_N statement
//   threshold1        prepareThreshold=1: named from the first run
//   threshold0        prepareThreshold=0: unnamed statements only
//   forcebinary       prepareThreshold=-1: named at once, binary transfer
//   batch             the default, and the transaction step inserts 3 rows
//                     with addBatch/executeBatch (one Sync); the error step
//                     runs a batch whose second row fails
//   fetchsize         the default, and the transaction step also reads rows
//                     with setFetchSize(7) (a portal run 7 rows at a time:
//                     PortalSuspended, then more Executes)
//   cache-everything  preferQueryMode=extendedCacheEverything: plain
//                     Statements are cached and prepared too
//   extended-for-prepared  preferQueryMode=extendedForPrepared: plain
//                     Statements use the simple protocol
//   simple            preferQueryMode=simple: the simple protocol only, the
//                     driver interpolates the parameters
//
// CLIENTS threads each run ROUNDS rounds (see ../../drivers_test.go) and one
// line of JSON is printed: ok, errors, first_error and rows.

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

public class Load {
    static final String A = "SELECT ?::int + 1";
    static final String B = "SELECT ?::text || '-' || ?::int";
    static final String DIV = "SELECT 1 / ?::int";
    static final String TXID = "SELECT txid_current(), pg_backend_pid()";
    static final String INSERT = "INSERT INTO driver_rows (variant, client, round) VALUES (?, ?, ?)";
    static final String INSERT_DIV = "INSERT INTO driver_rows (variant, client, round) VALUES (?, ?, 1 / ?)";

    static final AtomicInteger ok = new AtomicInteger();
    static final AtomicInteger errors = new AtomicInteger();
    static final AtomicInteger rowsTotal = new AtomicInteger();
    static final AtomicReference<String> firstError = new AtomicReference<>();

    static class Mismatch extends Exception {
        Mismatch(String msg) {
            super(msg);
        }
    }

    static void expect(Object got, Object want, String what) throws Mismatch {
        if (!Objects.equals(got, want)) {
            throw new Mismatch(what + ": got " + got + ", want " + want);
        }
    }

    static void expectState(SQLException e, String state, String what) throws Mismatch {
        expect(e.getSQLState(), state, what + " (" + e.getMessage() + ")");
    }

    final String variant;
    final int n;
    final Connection conn;

    Load(String url, Properties props, String variant, int n) throws SQLException {
        this.variant = variant;
        this.n = n;
        this.conn = DriverManager.getConnection(url, props);
    }

    /** Runs one parameterised query of one row and column. */
    Object one(String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("no row");
                }
                return rs.getObject(1);
            }
        }
    }

    /** Runs a query of one row without parameters through a plain Statement. */
    String plain(String sql) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                throw new SQLException("no row");
            }
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                sb.append(rs.getString(i)).append(',');
            }
            return sb.toString();
        }
    }

    int round(int r) throws Exception {
        int c = n;
        int v = c * 100000 + r;
        int rows = 0;
        expect(one(A, v), v + 1, "SELECT $1::int + 1");
        expect(one(B, Integer.toString(c), r), c + "-" + r, "concatenation");

        if (r % 10 == 9) {
            conn.setAutoCommit(false);
            String first = plain(TXID);
            String name = "jdbc/" + variant;
            if (variant.equals("batch")) {
                try (PreparedStatement ps = conn.prepareStatement(INSERT)) {
                    for (int i = 0; i < 3; i++) {
                        ps.setString(1, name);
                        ps.setInt(2, c);
                        ps.setInt(3, r);
                        ps.addBatch();
                    }
                    int[] counts = ps.executeBatch();
                    expect(counts.length, 3, "batch results");
                }
                rows += 3;
            } else {
                try (PreparedStatement ps = conn.prepareStatement(INSERT)) {
                    ps.setString(1, name);
                    ps.setInt(2, c);
                    ps.setInt(3, r);
                    expect(ps.executeUpdate(), 1, "rows inserted");
                }
                rows += 1;
            }
            if (variant.equals("fetchsize")) {
                int total = 20 + c;
                long sum = 0;
                try (PreparedStatement ps = conn.prepareStatement("SELECT g FROM generate_series(1, ?) g")) {
                    ps.setFetchSize(7);
                    ps.setInt(1, total);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            sum += rs.getInt(1);
                        }
                    }
                }
                expect(sum, (long) total * (total + 1) / 2, "sum read 7 rows at a time");
            }
            expect(plain(TXID), first, "txid and backend within a transaction");
            conn.commit();
            conn.setAutoCommit(true);
        }

        if (r % 25 == 24) {
            // An error outside a transaction, then more queries.
            try {
                if (variant.equals("batch")) {
                    // In autocommit the batch is one implicit transaction:
                    // the failing row undoes the others.
                    try (PreparedStatement ps = conn.prepareStatement(INSERT_DIV)) {
                        for (int d : new int[] {1, 0, 1}) {
                            ps.setString(1, "jdbc/batch-failed");
                            ps.setInt(2, c);
                            ps.setInt(3, d);
                            ps.addBatch();
                        }
                        ps.executeBatch();
                    }
                } else {
                    one(DIV, 0);
                }
                throw new Mismatch("division by zero did not fail");
            } catch (BatchUpdateException e) {
                SQLException next = e.getNextException();
                expectState(next != null ? next : e, "22012", "error code");
            } catch (SQLException e) {
                expectState(e, "22012", "error code");
            }
            expect(one(A, v), v + 1, "query after an error");
        }

        if (r % 50 == 49) {
            // An error inside a transaction, rolled back.
            conn.setAutoCommit(false);
            expect(one("SELECT ?::int", v), v, "in a transaction");
            try {
                one(DIV, 0);
                throw new Mismatch("division by zero did not fail");
            } catch (SQLException e) {
                expectState(e, "22012", "error code");
            }
            try {
                plain("SELECT 1");
                throw new Mismatch("a query in an aborted transaction did not fail");
            } catch (SQLException e) {
                expectState(e, "25P02", "error code in an aborted transaction");
            }
            conn.rollback();
            conn.setAutoCommit(true);
            expect(one("SELECT ?::int", v), v, "query after the rollback");
        }
        return rows;
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String variant = args[2];
        int clients = Integer.parseInt(args[3]);
        int rounds = Integer.parseInt(args[4]);
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        props.setProperty("sslmode", "disable");
        props.setProperty("ApplicationName", "pgpoolcheck-drivers-" + variant);
        switch (variant) {
            case "default":
            case "batch":
            case "fetchsize":
                break;
            case "threshold1":
                props.setProperty("prepareThreshold", "1");
                break;
            case "threshold0":
                props.setProperty("prepareThreshold", "0");
                break;
            case "forcebinary":
                props.setProperty("prepareThreshold", "-1");
                break;
            case "cache-everything":
                props.setProperty("preferQueryMode", "extendedCacheEverything");
                break;
            case "extended-for-prepared":
                props.setProperty("preferQueryMode", "extendedForPrepared");
                break;
            case "simple":
                props.setProperty("preferQueryMode", "simple");
                break;
            default:
                System.err.println("unknown variant " + variant);
                System.exit(2);
        }
        String url = "jdbc:postgresql://" + host + ":" + port + "/postgres";
        // Every client connects before any starts.
        List<Load> loads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            loads.add(new Load(url, props, variant, i));
        }
        CyclicBarrier start = new CyclicBarrier(clients);
        List<Thread> threads = new ArrayList<>();
        for (Load l : loads) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                int rows = 0;
                for (int r = 0; r < rounds; r++) {
                    try {
                        rows += l.round(r);
                        ok.incrementAndGet();
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, "client " + l.n + " round " + r + ": " + e);
                        try {
                            if (l.conn.isClosed()) {
                                break;
                            }
                            if (!l.conn.getAutoCommit()) {
                                l.conn.rollback();
                                l.conn.setAutoCommit(true);
                            }
                        } catch (SQLException e2) {
                            break;
                        }
                    }
                }
                rowsTotal.addAndGet(rows);
                try {
                    l.conn.close();
                } catch (SQLException e) {
                    // closing is best effort
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        String fe = firstError.get();
        System.out.println("{\"ok\": " + ok.get() + ", \"errors\": " + errors.get() + ", \"first_error\": "
                + (fe == null ? "null" : quote(fe)) + ", \"rows\": " + rowsTotal.get() + "}");
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                default:
                    if (ch < 0x20) {
                        sb.append(String.format("\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
            }
        }
        return sb.append('"').toString();
    }
}
