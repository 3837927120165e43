"""Load through a PostgreSQL pooler with psycopg2, checking every result.

Usage: python3 psycopg2_load.py DSN VARIANT CLIENTS ROUNDS

Variants:
  plain        autocommit connections; BEGIN/COMMIT sent by hand
  implicit     psycopg2's default: every statement opens a transaction that
               the client commits (or rolls back) itself
  named-cursor autocommit, and the transaction step reads through a
               server-side named cursor (DECLARE … FETCH), several FETCHes

CLIENTS threads each run ROUNDS rounds (see ../drivers_test.go for the
round) and one line of JSON is printed: ok (rounds that passed every
check), errors, first_error and rows (rows inserted and committed).
"""

import sys
import threading

import psycopg2
import psycopg2.extensions

from loadstats import Mismatch, Stats, expect

DIV_BY_ZERO = "22012"


class Client:
    def __init__(self, dsn, variant, n):
        self.variant = variant
        self.n = n
        self.conn = psycopg2.connect(dsn)
        self.implicit = variant == "implicit"
        self.conn.autocommit = not self.implicit

    def end(self):
        """Ends the implicit transaction of the implicit variant."""
        if self.implicit:
            self.conn.commit()

    def run_round(self, r):
        conn, c = self.conn, self.n
        v = c * 100000 + r
        rows = 0
        with conn.cursor() as cur:
            cur.execute("SELECT %s::int + 1", (v,))
            expect(cur.fetchone()[0], v + 1, "SELECT $1::int + 1")
            cur.execute("SELECT %s::text || '-' || %s::int", (str(c), r))
            expect(cur.fetchone()[0], f"{c}-{r}", "concatenation")
            self.end()

            if r % 10 == 9:
                rows += self.transaction(cur, r)

            if r % 25 == 24:
                # An error outside a transaction, then more queries.
                try:
                    cur.execute("SELECT 1 / %s::int", (0,))
                    raise Mismatch("division by zero did not fail")
                except psycopg2.Error as e:
                    expect(e.pgcode, DIV_BY_ZERO, "error code")
                if self.implicit:
                    conn.rollback()
                cur.execute("SELECT %s::int", (v,))
                expect(cur.fetchone()[0], v, "query after an error")
                self.end()

            if r % 50 == 49:
                # An error inside a transaction, rolled back.
                if not self.implicit:
                    cur.execute("BEGIN")
                cur.execute("SELECT %s::int", (v,))
                expect(cur.fetchone()[0], v, "in a transaction")
                try:
                    cur.execute("SELECT 1 / %s::int", (0,))
                    raise Mismatch("division by zero did not fail")
                except psycopg2.Error as e:
                    expect(e.pgcode, DIV_BY_ZERO, "error code")
                try:
                    cur.execute("SELECT 1")
                    raise Mismatch("a query in an aborted transaction did not fail")
                except psycopg2.Error as e:
                    expect(e.pgcode, "25P02", "error code in an aborted transaction")
                if self.implicit:
                    conn.rollback()
                else:
                    cur.execute("ROLLBACK")
                expect(conn.get_transaction_status(), psycopg2.extensions.TRANSACTION_STATUS_IDLE, "status after ROLLBACK")
        return rows

    def transaction(self, cur, r):
        """A transaction: one backend, one txid, an INSERT that commits."""
        conn, c = self.conn, self.n
        if self.variant == "named-cursor":
            conn.autocommit = False
        elif not self.implicit:
            cur.execute("BEGIN")
        cur.execute("SELECT txid_current(), pg_backend_pid()")
        txid, pid = cur.fetchone()
        if self.variant == "named-cursor":
            # Several FETCHes from one cursor; the server must stay.
            total = 20 + c
            with conn.cursor(name=f"load_cursor_{c}") as named:
                named.itersize = 7
                named.execute("SELECT g FROM generate_series(1, %s) g", (total,))
                got = sum(row[0] for row in named)
            expect(got, total * (total + 1) // 2, "sum through a named cursor")
        cur.execute(
            "INSERT INTO driver_rows (variant, client, round) VALUES (%s, %s, %s)",
            (f"psycopg2/{self.variant}", c, r),
        )
        cur.execute("SELECT txid_current(), pg_backend_pid()")
        expect(cur.fetchone(), (txid, pid), "txid and backend within a transaction")
        if self.variant == "named-cursor":
            conn.commit()
            conn.autocommit = True
        elif self.implicit:
            conn.commit()
        else:
            cur.execute("COMMIT")
        return 1


def main():
    dsn, variant = sys.argv[1], sys.argv[2]
    clients, rounds = int(sys.argv[3]), int(sys.argv[4])
    if variant not in ("plain", "implicit", "named-cursor"):
        sys.exit(f"unknown variant {variant}")
    stats = Stats()
    # Every client connects before any starts, so all of them are
    # connected at once: more clients than the pool has servers.
    conns = [Client(dsn, variant, i) for i in range(clients)]
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
                try:
                    cl.conn.rollback()
                    cl.conn.autocommit = not cl.implicit
                    if not cl.implicit:
                        with cl.conn.cursor() as cur:
                            cur.execute("ROLLBACK")
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


if __name__ == "__main__":
    main()
