package shop;

// currval() and lastval() in the transaction of the INSERT that set them
// are safe behind a transaction pooler; in a later transaction they are not.
public class SequenceTransactions {
    private final JdbcTemplate jdbc;
    private final TransactionTemplate txTemplate;
    private final DataSource ds;

    @Transactional
    public long addInvoice(long customer) {
        jdbc.update("INSERT INTO invoices (customer_id) VALUES (?)", customer);
        return jdbc.queryForObject("SELECT currval('invoices_id_seq')", Long.class);
    }

    public long addInTemplate(long customer) {
        return txTemplate.execute(status -> {
            jdbc.update("INSERT INTO invoices (customer_id) VALUES (?)", customer);
            return jdbc.queryForObject("SELECT lastval()", Long.class);
        });
    }

    public long addWithConnection(long customer) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO invoices (customer_id) VALUES (?)")) {
                ins.setLong(1, customer);
                ins.executeUpdate();
            }
            long id;
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT lastval()")) {
                rs.next();
                id = rs.getLong(1);
            }
            c.commit();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT currval('invoices_id_seq')")) { // want sequence-session
                rs.next();
            }
            return id;
        }
    }

    // No transaction: JdbcTemplate commits each statement on its own.
    public long addAutocommit(long customer) {
        jdbc.update("INSERT INTO invoices (customer_id) VALUES (?)", customer);
        return jdbc.queryForObject("SELECT lastval()", Long.class); // want sequence-session
    }
}
