// Connection strings that a test expects to be refused never reach a
// server; the ones it connects with do.
using System;
using Npgsql;
using Xunit;

public sealed class ConnectionPolicyTests
{
    [Fact]
    public void Refuses_options()
    {
        Assert.Throws<ArgumentException>(
            () => ConnectionPolicy.Normalize("Host=localhost;Options=-c search_path=x"));
    }

    [Fact]
    public async Task Connects()
    {
        await using var conn = new NpgsqlConnection("Host=localhost;Search Path=tenant"); // want startup-parameter
        await conn.OpenAsync();
    }
}
