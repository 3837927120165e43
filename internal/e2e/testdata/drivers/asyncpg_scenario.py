"""One asyncpg scenario: python3 asyncpg_scenario.py URL SCENARIO.

asyncpg prepares every statement with Parse, Describe and Sync in one
round trip and binds it in the next. With its statement cache (the
default) the statement is named __asyncpg_stmt_N__ and kept; with
statement_cache_size=0 it is the unnamed statement.
"""

import asyncio
import sys

import asyncpg


def check(got, want, what):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


async def main(url, scenario):
    kw = {}
    settings = {"application_name": "e2e-asyncpg"}
    if scenario == "no-cache":
        kw["statement_cache_size"] = 0
    elif scenario == "server-settings":
        # Sent in the startup packet.
        settings["statement_timeout"] = "5000"
    if scenario == "pool":
        # A pool of one connection: release() runs asyncpg's reset query
        # (pg_advisory_unlock_all, CLOSE ALL, UNLISTEN *, RESET ALL).
        pool = await asyncpg.create_pool(url, min_size=1, max_size=1, server_settings=settings)
        for i in range(2):
            async with pool.acquire() as conn:
                check(await conn.fetchval("SELECT 1 + %d" % i), i + 1, "select")
        await pool.close()
        return
    conn = await asyncpg.connect(url, server_settings=settings, **kw)
    if scenario in ("cache", "no-cache"):
        for i in range(3):
            check(await conn.fetchval("SELECT $1::int + 1", i), i + 1, "select")
    elif scenario == "server-settings":
        check(await conn.fetchval("SHOW statement_timeout"), "5s", "statement_timeout")
    elif scenario == "advisory-lock":
        await conn.execute("SELECT pg_advisory_lock(4244)")
        await conn.execute("SELECT count(*) FROM pg_class")
        check(await conn.fetchval("SELECT pg_advisory_unlock(4244)"), True, "unlock")
    else:
        sys.exit(f"unknown scenario {scenario!r}")
    await conn.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
