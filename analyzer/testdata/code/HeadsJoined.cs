using System.Text;
using Npgsql;

public class TenantSession
{
    public void Enter(NpgsqlConnection conn, string schema, string kind, long key)
    {
        using var set = new NpgsqlCommand("SET search_path TO " + schema, conn); // want session-set:critical
        using var lk = new NpgsqlCommand($"SELECT pg_advisory_{kind}({key})", conn); // want advisory-lock-session:error
        using var xact = new NpgsqlCommand($"SELECT pg_advisory_xact_lock({key})", conn);
        var sb = new StringBuilder();
        sb.Append("SET statement_timeout = "); // want session-set:error
        sb.Append(timeout);
    }
}
