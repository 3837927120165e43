// System.Transactions: a TransactionScope that is never completed rolls
// its transaction back when disposed.
using System.Transactions;
using Npgsql;

public sealed class Scopes
{
    public void RolledBack(NpgsqlDataSource dataSource)
    {
        using (new TransactionScope())
        using (var conn = dataSource.OpenConnection())
        {
            conn.ExecuteNonQuery("CREATE TEMP TABLE scratch (id INT)");
            conn.ExecuteNonQuery("SET search_path TO tenant");
        }
    }

    public void DeclaredScope(NpgsqlConnection conn)
    {
        using var scope = new TransactionScope(TransactionScopeOption.Required);
        conn.ExecuteNonQuery("CREATE TEMP TABLE scratch2 (id INT)");
    }

    public void Completed(NpgsqlConnection conn)
    {
        using (var scope = new TransactionScope())
        {
            conn.ExecuteNonQuery("CREATE TEMP TABLE kept (id INT)"); // want temp-table
            scope.Complete();
        }
        conn.ExecuteNonQuery("CREATE TEMP TABLE after_scope (id INT)"); // want temp-table
    }
}
