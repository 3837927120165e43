package shop.db.h2;

// A class for H2, named so: its SQL is not sent to PostgreSQL, and none
// of it is checked.
public class H2Sequences {
    String lastId(String seq) {
        return "call CURRVAL('" + seq + "')";
    }

    String lastInserted() {
        return "SELECT lastval()";
    }
}
