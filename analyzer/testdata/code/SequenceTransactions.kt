package shop

// currval() and lastval() in the transaction of the INSERT that set them
// are safe behind a transaction pooler; in a later transaction they are not.
class OrderStore(private val db: Database) {
    // Runs inside the caller's transaction: the INSERT and lastval() share it.
    fun JdbcTransaction.addOrder(customer: Long): Long {
        exec("INSERT INTO orders (customer_id) VALUES ($customer)")
        return exec("SELECT lastval()") { it.getLong(1) }
    }

    // The same, with the sequence named and the statement chosen per database.
    suspend fun R2dbcTransaction.addLine(order: Long, dialect: Dialect): Long {
        exec("INSERT INTO order_lines (order_id) VALUES ($order)")
        val read = when (dialect) {
            Dialect.POSTGRES -> "SELECT currval('order_lines_id_seq')"
            else -> "SELECT LAST_INSERT_ID()"
        }
        return exec(read) { it.getLong(1) }
    }

    fun addInBlock(customer: Long): Long = transaction(db) {
        exec("INSERT INTO orders (customer_id) VALUES ($customer)")
        exec("SELECT lastval()") { it.getLong(1) }
    }

    // Two transactions: the second may run on another server connection.
    fun addThenRead(customer: Long): Long {
        transaction(db) {
            exec("INSERT INTO orders (customer_id) VALUES ($customer)")
        }
        return transaction(db) {
            exec("SELECT lastval()") { it.getLong(1) } // want sequence-session
        }
    }

    // A transaction of its own with no INSERT before the read.
    fun JdbcTransaction.lastOrder(): Long = exec("SELECT currval('orders_id_seq')") { it.getLong(1) } // want sequence-session

    // Outside any transaction: each statement commits on its own.
    fun addAutocommit(customer: Long): Long {
        db.connection.createStatement().executeUpdate("INSERT INTO orders (customer_id) VALUES ($customer)")
        return db.connection.createStatement().executeQuery("SELECT lastval()").getLong(1) // want sequence-session
    }
}

// MyBatis runs a @SelectKey with before = false after the INSERT, in its
// transaction.
interface OrderMapper {
    @Insert("INSERT INTO orders (customer_id) VALUES (#{customerId})")
    @SelectKey(statement = ["SELECT lastval()"], keyProperty = "id", before = false, resultType = Long::class)
    fun insert(order: Order): Int
}
