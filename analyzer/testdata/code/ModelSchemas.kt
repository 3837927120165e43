package app.export

import java.sql.Connection

// setSchema of a model class sets a field, not the server's search_path:
// only the JDBC connection's call is reported.
class ModelSchemas(private val conn: Connection) {
    fun copy(source: TableModel, target: String) {
        val copy = TableModel(source.name)
        copy.setSchema(target)
        source.setSchema(target)
        conn.setSchema(target) // want session-set:critical
    }
}
