using Dapper;
using Npgsql;

namespace Jobs;

public sealed class Worker(NpgsqlDataSource dataSource, ILogger<Worker> logger)
{
    private const string Tenant = """
        SELECT set_config('app.tenant', @tenant, false)
        """;

    public async Task RunAsync(string schema, CancellationToken ct)
    {
        await using var conn = await dataSource.OpenConnectionAsync(ct);
        await conn.ExecuteAsync($"SET search_path TO {schema}, public");
        await conn.ExecuteAsync(Tenant, new { tenant = schema });
        conn.Notification += (_, e) => logger.LogInformation("{Payload}", e.Payload);
        await using (var listen = new NpgsqlCommand("LISTEN jobs", conn))
        {
            await listen.ExecuteNonQueryAsync(ct);
        }
        while (!ct.IsCancellationRequested)
        {
            await conn.WaitAsync(ct);
            // pgpoolcheck:ignore session-set the lock timeout is meant for the whole session
            await conn.ExecuteAsync(@"SET lock_timeout = '1s'");
            logger.LogWarning("SET ROLE skipped");
        }
    }
}
