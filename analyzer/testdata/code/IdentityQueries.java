package shop;

// Identity queries: statements a framework runs right after its own
// INSERT, in that INSERT's transaction, to read the generated key.
public class IdentityQueries {
    MutableAclService aclService(DataSource ds, LookupStrategy lookup, AclCache cache) {
        JdbcMutableAclService svc = new JdbcMutableAclService(ds, lookup, cache);
        svc.setClassIdentityQuery("SELECT currval(pg_get_serial_sequence('acl_class', 'id'))");
        svc.setSidIdentityQuery("SELECT currval(pg_get_serial_sequence('acl_sid', 'id'))");
        return svc;
    }

    interface PartMapper {
        @Insert("INSERT INTO parts (name) VALUES (#{name})")
        @SelectKey(statement = "SELECT currval('parts_id_seq')", keyProperty = "id", before = false, resultType = long.class)
        int insert(Part part);

        // Run before the INSERT: the sequence was not advanced yet in
        // this transaction.
        @Insert("INSERT INTO parts (id, name) VALUES (#{id}, #{name})")
        @SelectKey(statement = "SELECT currval('parts_id_seq') + 1", keyProperty = "id", before = true, resultType = long.class) // want sequence-session
        int insertWithKey(Part part);
    }

    // Not a setter of an identity query.
    void audit(JdbcTemplate jdbc) {
        jdbc.queryForObject("SELECT lastval()", Long.class); // want sequence-session
    }
}
