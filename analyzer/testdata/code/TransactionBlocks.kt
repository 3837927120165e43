package jobs

// Statements of one transaction block run in one transaction: what the
// rules accept inside BEGIN … COMMIT they accept here, and what outlives
// COMMIT is still reported.
class Staging(private val db: Database) {
    fun stage() = transaction(db) {
        exec("CREATE TEMP TABLE staging (id bigint) ON COMMIT DROP")
        exec("INSERT INTO staging SELECT id FROM orders")
    }

    fun stageKept() = transaction(db) {
        exec("CREATE TEMP TABLE kept (id bigint)") // want temp-table
    }

    fun tenant(id: String) = transaction(db) {
        exec("SET search_path TO tenant_$id") // want session-set:critical
    }

    fun locked() = transaction(db) {
        exec("SELECT pg_advisory_lock(42)") // want advisory-lock-session:warning
        exec("SELECT pg_advisory_unlock(42)")
    }

    // Outside a block each statement commits on its own: the unlock may
    // run on another server connection than the lock.
    fun lockedOutside() {
        val st = db.connection.createStatement()
        st.execute("SELECT pg_advisory_lock(42)") // want advisory-lock-session:error
        st.execute("SELECT pg_advisory_unlock(42)") // want advisory-lock-session:info
    }
}
