// Job queue over Npgsql, Dapper and EF Core; it's "shared" by the workers.
#nullable enable
using System;
using System.Threading;
using System.Threading.Tasks;
using Dapper;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging;
using Npgsql;

/* A block comment with "SET ROLE admin" and 'LISTEN x' in it. */

namespace Jobs;

public sealed class JobQueue
{
    private const string ClaimSql = "SELECT pg_advisory_lock(@id)"; // want advisory-lock-session
    private readonly NpgsqlDataSource _dataSource;
    private readonly JobsContext _db;
    private readonly ILogger<JobQueue> _logger;
    private readonly string _schema = "jobs";

    public JobQueue(NpgsqlDataSource dataSource, JobsContext db, ILogger<JobQueue> logger) =>
        (_dataSource, _db, _logger) = (dataSource, db, logger);

    public async Task ClaimAsync(long id, string tenant, CancellationToken ct)
    {
        char quote = '"', brace = '{';
        await using var conn = await _dataSource.OpenConnectionAsync(ct);
        await using (var cmd = new NpgsqlCommand($"SET search_path TO {_schema}, public", conn)) // want session-set:critical
        {
            await cmd.ExecuteNonQueryAsync(ct);
        }
        await using var claim = new NpgsqlCommand(ClaimSql, conn);
        claim.Parameters.AddWithValue("id", id);
        await claim.ExecuteNonQueryAsync(ct);
        await using var next = conn.CreateCommand();
        next.CommandText = "SELECT currval('jobs_id_seq')"; // want sequence-session
        await next.ExecuteScalarAsync(ct);
        var batch = new NpgsqlBatch(conn)
        {
            BatchCommands =
            {
                new NpgsqlBatchCommand("SET statement_timeout = '5s'"), // want session-set
                new NpgsqlBatchCommand("SELECT * FROM jobs WHERE tenant = @tenant"),
            },
        };
        await batch.ExecuteNonQueryAsync(ct);
        var temp = new NpgsqlCommand(@"
            CREATE TEMP TABLE batch AS -- want temp-table
            SELECT * FROM jobs WHERE state = 'new'", conn);
        await temp.ExecuteNonQueryAsync(ct);
        _logger.LogInformation("SET ROLE skipped for {Tenant}", tenant);
        _logger.LogWarning($"LISTEN failed for {tenant}");
        Console.WriteLine("DISCARD ALL");
        _logger.LogError("DISCARD ALL");
        Debug.WriteLine("SET ROLE admin");
        Assert.Contains("LISTEN jobs", tenant);
        tenant.Should().Be("RESET ROLE");
        if (id < 0)
        {
            throw new InvalidOperationException("SET ROLE failed");
        }
    }

    public void Dapper(NpgsqlConnection db, long id)
    {
        db.Execute("SELECT pg_advisory_lock(@Id)", new { Id = id }); // want advisory-lock-session
        var job = db.QueryFirstOrDefault<Job>("SELECT * FROM jobs WHERE id = @Id", new { Id = id });
        var n = db.ExecuteScalar<long>("SELECT lastval()"); // want sequence-session
        db.Query<Job>("""
            DECLARE c CURSOR WITH HOLD FOR SELECT * FROM jobs -- want cursor-with-hold
            """);
        db.Execute(string.Format("PREPARE claim_{0} AS SELECT 1", id)); // want sql-prepare
        db.Execute("LOAD 'auto_explain'"); // want session-load
    }

    public async Task EfCoreAsync(string schema, long id)
    {
        await _db.Database.ExecuteSqlRawAsync("SET search_path TO " + schema); // want session-set:critical
        await _db.Database.ExecuteSqlInterpolatedAsync($"SELECT pg_advisory_unlock({id})"); // want advisory-lock-session:info
        await _db.Database.ExecuteSqlAsync($"SET SESSION AUTHORIZATION {schema}"); // want session-role
        var jobs = await _db.Jobs.FromSqlRaw("SELECT * FROM jobs WHERE id = {0}", id).ToListAsync();
        var ids = await _db.Database.SqlQuery<long>($"SELECT id FROM jobs WHERE id > {id}").ToListAsync();
        var pid = await _db.Database.SqlQueryRaw<int>("SELECT pg_backend_pid() AS \"Value\"").SingleAsync(); // want backend-pid
    }

    public async Task ListenAsync(CancellationToken ct)
    {
        await using var listener = await _dataSource.OpenConnectionAsync(ct);
        listener.Notification += (_, e) => _logger.LogInformation("{Payload}", e.Payload); // want listen
        await using (var cmd = new NpgsqlCommand("LISTEN jobs", listener)) // want listen
        {
            await cmd.ExecuteNonQueryAsync(ct);
        }
        while (!ct.IsCancellationRequested)
        {
            // The same listener as the handler above: one finding.
            await listener.WaitAsync(ct);
        }
        using var direct = _dataSource.OpenConnection();
        // pgpoolcheck:ignore listen this worker connects to the server directly
        direct.Wait();
        Task.Delay(10).Wait();
        // A mock server's expectation is text to match: no finding.
        server.ExpectSimpleQuery("DISCARD ALL");
    }
}
