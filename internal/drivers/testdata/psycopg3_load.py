"""Load through a PostgreSQL pooler with psycopg 3, checking every result.

Usage: python3 psycopg3_load.py URL VARIANT CLIENTS ROUNDS

Variants:
  default      psycopg.connect(url): not autocommit (every statement opens a
               transaction the client commits), prepare_threshold 5
  autocommit   autocommit, prepare_threshold 5: statements run 5 times are
               prepared as _pg3_N
  prepare0     autocommit, prepare_threshold=0: every statement is prepared
               on its first run
  noprepare    autocommit, prepare_threshold=None: unnamed statements only
  evict        autocommit, prepare_threshold=0 and prepared_max=2: the round
               runs more statements than the cache holds, so psycopg evicts
               them with DEALLOCATE _pg3_N (an application with more than
               100 statements does so at the default prepared_max)
  pipeline     autocommit, every round in pipeline mode (results read with
               Flush before the Sync)
  async        AsyncConnection, CLIENTS asyncio tasks, autocommit
  async-pipeline  the same in pipeline mode

CLIENTS threads (or tasks) each run ROUNDS rounds (see ../drivers_test.go)
and one line of JSON is printed: ok, errors, first_error and rows.
"""

import asyncio
import sys
import threading

import psycopg
from psycopg import errors as pgerrors
from psycopg.pq import TransactionStatus

from loadstats import Mismatch, Stats, expect

A = "SELECT %s::int + 1"
B = "SELECT %s::text || '-' || %s::int"
DIV = "SELECT 1 / %s::int"
TXID = "SELECT txid_current(), pg_backend_pid()"
INSERT = "INSERT INTO driver_rows (variant, client, round) VALUES (%s, %s, %s)"


def connect_args(variant):
    if variant == "default":
        return {}
    kw = {"autocommit": True}
    if variant in ("prepare0", "evict"):
        kw["prepare_threshold"] = 0
    elif variant == "noprepare":
        kw["prepare_threshold"] = None
    return kw


# --- threads and Connection -------------------------------------------------


class Client:
    def __init__(self, url, variant, n):
        self.variant, self.n = variant, n
        self.conn = psycopg.connect(url, **connect_args(variant))
        if variant == "evict":
            self.conn.prepared_max = 2
        self.pipeline = variant == "pipeline"

    def end(self):
        if not self.conn.autocommit:
            self.conn.commit()

    def run_round(self, r):
        conn, c = self.conn, self.n
        v = c * 100000 + r
        rows = 0
        if self.pipeline:
            with conn.pipeline():
                c1 = conn.execute(A, (v,))
                c2 = conn.execute(B, (str(c), r))
                expect(c1.fetchone()[0], v + 1, "SELECT $1::int + 1")
                expect(c2.fetchone()[0], f"{c}-{r}", "concatenation")
        else:
            expect(conn.execute(A, (v,)).fetchone()[0], v + 1, "SELECT $1::int + 1")
            expect(conn.execute(B, (str(c), r)).fetchone()[0], f"{c}-{r}", "concatenation")
            self.end()

        if r % 10 == 9:
            if self.pipeline:
                with conn.pipeline():
                    rows += self.transaction(r)
            else:
                rows += self.transaction(r)

        if r % 25 == 24:
            # An error outside a transaction, then more queries.
            try:
                if self.pipeline:
                    with conn.pipeline():
                        conn.execute(DIV, (0,))
                        conn.execute(A, (v,))
                else:
                    conn.execute(DIV, (0,))
                raise Mismatch("division by zero did not fail")
            except pgerrors.DivisionByZero:
                pass
            if not conn.autocommit:
                conn.rollback()
            expect(conn.execute(A, (v,)).fetchone()[0], v + 1, "query after an error")
            self.end()

        if r % 50 == 49:
            # An error inside a transaction, rolled back.
            with conn.transaction():
                expect(conn.execute("SELECT %s::int", (v,)).fetchone()[0], v, "in a transaction")
                try:
                    conn.execute(DIV, (0,))
                    raise Mismatch("division by zero did not fail")
                except pgerrors.DivisionByZero:
                    pass
                try:
                    conn.execute("SELECT 1")
                    raise Mismatch("a query in an aborted transaction did not fail")
                except pgerrors.InFailedSqlTransaction:
                    pass
                raise psycopg.Rollback()
            expect(conn.info.transaction_status, TransactionStatus.IDLE, "status after the rollback")
        return rows

    def transaction(self, r):
        conn, c = self.conn, self.n
        with conn.transaction():
            cur = conn.execute(TXID)
            conn.execute(INSERT, (f"psycopg3/{self.variant}", c, r))
            cur2 = conn.execute(TXID)
            first = cur.fetchone()
            expect(cur2.fetchone(), first, "txid and backend within a transaction")
        return 1


def run_threads(url, variant, clients, rounds):
    stats = Stats()
    conns = [Client(url, variant, i) for i in range(clients)]
    start = threading.Barrier(clients)

    def work(cl):
        start.wait()
        rows = 0
        for r in range(rounds):
            try:
                rows += cl.run_round(r)
                with stats.lock:
                    stats.ok += 1
            except Exception as e:  # noqa: BLE001 - every failure is counted
                stats.fail(cl.n, r, e)
                if cl.conn.closed:
                    break
                try:
                    cl.conn.rollback()
                except Exception:  # noqa: BLE001 - the connection is gone
                    break
        with stats.lock:
            stats.rows += rows
        cl.conn.close()

    threads = [threading.Thread(target=work, args=(cl,)) for cl in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(stats.summary())


# --- asyncio and AsyncConnection --------------------------------------------


class AsyncClient:
    def __init__(self, variant, n):
        self.variant, self.n = variant, n
        self.pipeline = variant == "async-pipeline"
        self.conn = None

    async def connect(self, url):
        self.conn = await psycopg.AsyncConnection.connect(url, autocommit=True)

    async def fetch1(self, query, params):
        cur = await self.conn.execute(query, params)
        return await cur.fetchone()

    async def run_round(self, r):
        conn, c = self.conn, self.n
        v = c * 100000 + r
        rows = 0
        if self.pipeline:
            async with conn.pipeline():
                c1 = await conn.execute(A, (v,))
                c2 = await conn.execute(B, (str(c), r))
                expect((await c1.fetchone())[0], v + 1, "SELECT $1::int + 1")
                expect((await c2.fetchone())[0], f"{c}-{r}", "concatenation")
        else:
            expect((await self.fetch1(A, (v,)))[0], v + 1, "SELECT $1::int + 1")
            expect((await self.fetch1(B, (str(c), r)))[0], f"{c}-{r}", "concatenation")

        if r % 10 == 9:
            if self.pipeline:
                async with conn.pipeline():
                    rows += await self.transaction(r)
            else:
                rows += await self.transaction(r)

        if r % 25 == 24:
            try:
                if self.pipeline:
                    async with conn.pipeline():
                        await conn.execute(DIV, (0,))
                        await conn.execute(A, (v,))
                else:
                    await conn.execute(DIV, (0,))
                raise Mismatch("division by zero did not fail")
            except pgerrors.DivisionByZero:
                pass
            expect((await self.fetch1(A, (v,)))[0], v + 1, "query after an error")

        if r % 50 == 49:
            async with conn.transaction():
                expect((await self.fetch1("SELECT %s::int", (v,)))[0], v, "in a transaction")
                try:
                    await conn.execute(DIV, (0,))
                    raise Mismatch("division by zero did not fail")
                except pgerrors.DivisionByZero:
                    pass
                try:
                    await conn.execute("SELECT 1")
                    raise Mismatch("a query in an aborted transaction did not fail")
                except pgerrors.InFailedSqlTransaction:
                    pass
                raise psycopg.Rollback()
            expect(conn.info.transaction_status, TransactionStatus.IDLE, "status after the rollback")
        return rows

    async def transaction(self, r):
        conn, c = self.conn, self.n
        async with conn.transaction():
            cur = await conn.execute(TXID)
            await conn.execute(INSERT, (f"psycopg3/{self.variant}", c, r))
            cur2 = await conn.execute(TXID)
            first = await cur.fetchone()
            expect(await cur2.fetchone(), first, "txid and backend within a transaction")
        return 1


async def run_async(url, variant, clients, rounds):
    stats = Stats()
    conns = [AsyncClient(variant, i) for i in range(clients)]
    await asyncio.gather(*(cl.connect(url) for cl in conns))

    async def work(cl):
        rows = 0
        for r in range(rounds):
            try:
                rows += await cl.run_round(r)
                stats.ok += 1
            except Exception as e:  # noqa: BLE001 - every failure is counted
                stats.fail(cl.n, r, e)
                if cl.conn.closed:
                    break
                try:
                    await cl.conn.rollback()
                except Exception:  # noqa: BLE001 - the connection is gone
                    break
        stats.rows += rows
        await cl.conn.close()

    await asyncio.gather(*(work(cl) for cl in conns))
    print(stats.summary())


VARIANTS = ("default", "autocommit", "prepare0", "noprepare", "evict", "pipeline", "async", "async-pipeline")


def main():
    url, variant = sys.argv[1], sys.argv[2]
    clients, rounds = int(sys.argv[3]), int(sys.argv[4])
    if variant not in VARIANTS:
        sys.exit(f"unknown variant {variant}")
    if variant.startswith("async"):
        asyncio.run(run_async(url, variant, clients, rounds))
    else:
        run_threads(url, variant, clients, rounds)


if __name__ == "__main__":
    main()
