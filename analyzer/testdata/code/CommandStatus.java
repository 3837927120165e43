package app;

import java.sql.Statement;

// Command tags compared with a statement's status are not statements.
class StatusCheck {
    boolean discarded(String status) {
        if ("DISCARD ALL".equals(status)) {
            return true;
        }
        switch (status) {
            case "DEALLOCATE ALL":
                return true;
            default:
                return status == "DISCARD TEMP";
        }
    }

    void reset(Statement st) throws Exception {
        st.execute("DISCARD ALL"); // want discard:info
    }
}
