using Npgsql;
using Xunit;

public class TenantTests
{
    [Fact]
    public async Task RunsInATransactionItNeverCommits()
    {
        await using var conn = await dataSource.OpenConnectionAsync();
        await using var tx = await conn.BeginTransactionAsync();
        await using var cmd = new NpgsqlCommand("SET search_path TO tenant_a, public", conn, tx);
        await cmd.ExecuteNonQueryAsync();
    }

    public async Task Commits()
    {
        await using var conn = await dataSource.OpenConnectionAsync();
        await using var tx = await conn.BeginTransactionAsync();
        await using var cmd = new NpgsqlCommand("SET search_path TO app", conn, tx); // want session-set:critical
        await cmd.ExecuteNonQueryAsync();
        await tx.CommitAsync();
    }
}

public class DdlTests
{
    [Fact]
    public void WritesRoleChanges()
    {
        writer.ToString().ShouldContain("SET ROLE OCD_DBA;");
        Assert.Equal("RESET ROLE;", lines[1]);
    }
}
