package app

import java.sql.Connection

const val URL = "jdbc:postgresql://db/app?readOnlyMode=always" // want session-set:error

fun configure(conn: Connection, schema: String) {
    conn.setReadOnly(true) // want session-set:error
    conn.transactionIsolation = Connection.TRANSACTION_REPEATABLE_READ // want session-set:error
    val url = "postgres://app@db/app?options=-c%20search_path%3D$schema" // want startup-parameter:error
    if (conn.transactionIsolation == Connection.TRANSACTION_SERIALIZABLE) return
}
