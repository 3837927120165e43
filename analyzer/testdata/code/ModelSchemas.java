package app.export;

import java.sql.Connection;
import java.sql.SQLException;

// setSchema of a model class sets a field, not the server's search_path:
// only the JDBC connection's call is reported.
public class ModelSchemas {
    private Connection conn;

    void copy(TableModel source, String targetSchema) throws SQLException {
        TableModel copy = source.copy();
        copy.setSchema(targetSchema);
        SchemaExporter exporter = new SchemaExporter(conn);
        exporter.setSchema("reporting");
        conn.setSchema("reporting"); // want session-set:critical
    }

    void later(Connection other) throws SQLException {
        other.setSchema(targetFor(other)); // want session-set:critical
        var model = new TableModel("orders");
        model.setSchema("archive");
    }
}
