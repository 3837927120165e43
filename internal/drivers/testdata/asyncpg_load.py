"""Load through a PostgreSQL pooler with asyncpg, checking every result.

Usage: python3 asyncpg_load.py URL VARIANT CLIENTS ROUNDS

Variants:
  default      asyncpg.connect(url): every statement is prepared as a named
               __asyncpg_stmt_N__ kept in the statement cache
  nocache      statement_cache_size=0: unnamed statements only
  executemany  the default, and the transaction step inserts 3 rows with
               executemany (Bind/Execute per row, one Sync), the error step
               runs an executemany whose second row fails
  cursor       the default, and the transaction step also reads rows through
               a cursor 7 rows at a time (a portal run with Execute of 7
               rows: PortalSuspended, then more Executes)
  pool         asyncpg.create_pool(max_size=CLIENTS): every step acquires a
               connection and releases it (which resets it: CLOSE ALL,
               UNLISTEN *, RESET ALL, pg_advisory_unlock_all())

CLIENTS asyncio tasks each run ROUNDS rounds (see ../drivers_test.go) and
one line of JSON is printed: ok, errors, first_error and rows.
"""

import asyncio
import contextlib
import sys

import asyncpg

from loadstats import Mismatch, Stats, expect

A = "SELECT $1::int + 1"
B = "SELECT $1::text || '-' || $2::int"
DIV = "SELECT 1 / $1::int"
TXID = "SELECT txid_current() AS txid, pg_backend_pid() AS pid"
INSERT = "INSERT INTO driver_rows (variant, client, round) VALUES ($1, $2, $3)"


class Client:
    def __init__(self, variant, n, pool=None):
        self.variant, self.n, self.pool = variant, n, pool
        self.conn = None

    async def connect(self, url):
        if self.pool is None:
            kw = {"statement_cache_size": 0} if self.variant == "nocache" else {}
            self.conn = await asyncpg.connect(url, **kw)

    @contextlib.asynccontextmanager
    async def acquire(self):
        """The client's connection, or one from the pool for this step."""
        if self.pool is None:
            yield self.conn
        else:
            async with self.pool.acquire() as conn:
                yield conn

    async def run_round(self, r):
        c = self.n
        v = c * 100000 + r
        rows = 0
        async with self.acquire() as conn:
            expect(await conn.fetchval(A, v), v + 1, "SELECT $1::int + 1")
        async with self.acquire() as conn:
            expect(await conn.fetchval(B, str(c), r), f"{c}-{r}", "concatenation")

        if r % 10 == 9:
            async with self.acquire() as conn:
                async with conn.transaction():
                    first = tuple(await conn.fetchrow(TXID))
                    if self.variant == "executemany":
                        name = f"asyncpg/{self.variant}"
                        await conn.executemany(INSERT, [(name, c, r), (name, c, r), (name, c, r)])
                        rows += 3
                    else:
                        await conn.execute(INSERT, f"asyncpg/{self.variant}", c, r)
                        rows += 1
                    if self.variant == "cursor":
                        total = 20 + c
                        got = 0
                        async for rec in conn.cursor("SELECT g FROM generate_series(1, $1) g", total, prefetch=7):
                            got += rec["g"]
                        expect(got, total * (total + 1) // 2, "sum through a cursor")
                    expect(tuple(await conn.fetchrow(TXID)), first, "txid and backend within a transaction")

        if r % 25 == 24:
            # An error outside a transaction, then more queries.
            async with self.acquire() as conn:
                try:
                    if self.variant == "executemany":
                        await conn.executemany(DIV, [(1,), (0,), (2,)])
                    else:
                        await conn.fetchval(DIV, 0)
                    raise Mismatch("division by zero did not fail")
                except asyncpg.DivisionByZeroError:
                    pass
                expect(await conn.fetchval(A, v), v + 1, "query after an error")

        if r % 50 == 49:
            # An error inside a transaction, rolled back.
            async with self.acquire() as conn:
                tx = conn.transaction()
                await tx.start()
                try:
                    expect(await conn.fetchval("SELECT $1::int", v), v, "in a transaction")
                    try:
                        await conn.fetchval(DIV, 0)
                        raise Mismatch("division by zero did not fail")
                    except asyncpg.DivisionByZeroError:
                        pass
                    try:
                        await conn.fetchval("SELECT 1")
                        raise Mismatch("a query in an aborted transaction did not fail")
                    except asyncpg.InFailedSQLTransactionError:
                        pass
                finally:
                    await tx.rollback()
                expect(conn.is_in_transaction(), False, "in a transaction after the rollback")
        return rows


async def run(url, variant, clients, rounds):
    stats = Stats()
    pool = None
    if variant == "pool":
        pool = await asyncpg.create_pool(url, min_size=clients, max_size=clients)
    conns = [Client(variant, i, pool) for i in range(clients)]
    await asyncio.gather(*(cl.connect(url) for cl in conns))

    async def work(cl):
        rows = 0
        for r in range(rounds):
            try:
                rows += await cl.run_round(r)
                stats.ok += 1
            except Exception as e:  # noqa: BLE001 - every failure is counted
                stats.fail(cl.n, r, e)
                if cl.conn is not None and cl.conn.is_closed():
                    break
        stats.rows += rows
        if cl.conn is not None:
            await cl.conn.close()

    await asyncio.gather(*(work(cl) for cl in conns))
    if pool is not None:
        await pool.close()
    print(stats.summary())


def main():
    url, variant = sys.argv[1], sys.argv[2]
    clients, rounds = int(sys.argv[3]), int(sys.argv[4])
    if variant not in ("default", "nocache", "executemany", "cursor", "pool"):
        sys.exit(f"unknown variant {variant}")
    asyncio.run(run(url, variant, clients, rounds))


if __name__ == "__main__":
    main()
