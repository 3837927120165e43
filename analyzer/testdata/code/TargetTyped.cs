// Target-typed new: the command type is on the left.
using System;
using Npgsql;

public sealed class Tenants
{
    private readonly NpgsqlCommand _listen = new("LISTEN tenant_changed"); // want listen

    public void Use(NpgsqlConnection conn, string schema)
    {
        NpgsqlCommand cmd = new("SET search_path TO tenant", conn); // want session-set:critical
        Npgsql.NpgsqlCommand? reset = new("RESET ROLE", conn); // want session-role
        NpgsqlBatchCommand step = new("CREATE TEMP TABLE scratch (id int)"); // want temp-table
        Exception e = new("SET search_path failed");
        var ok = cmd == new("SELECT 1");
    }
}
