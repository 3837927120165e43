"""Cases of psycopg 3 behaviour through a transaction-mode pooler with a
pool of one server (internal/drivers/psycopg_test.go).

Usage: psycopg3_cases.py URL CASE SUFFIX

SUFFIX makes the names of the types and tables a run creates its own.
Prints one line of JSON: {"ok": true} or {"ok": false, "error": "..."}.
Every case also passes directly against PostgreSQL.
"""

import json
import sys

import psycopg

URL, CASE, SUFFIX = sys.argv[1], sys.argv[2], sys.argv[3]


def count_prepared(conn):
    """Named statements of the session, read with the extended protocol
    and not prepared itself (as psycopg's own tests count them)."""
    cur = conn.execute(
        "select count(*) from pg_prepared_statements where name != ''", prepare=False
    )
    return cur.fetchone()[0]


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def left_in_transaction():
    """A client prepares inside a transaction and leaves without ending
    it; the next client sees no statement it did not prepare, and its own
    count is its own."""
    a = psycopg.connect(URL)
    a.prepare_threshold = 0
    for i in range(3):
        check(a.execute("select %s::int + 40", [i]).fetchone()[0] == i + 40, "a's result")
    check(count_prepared(a) >= 1, "a sees its statement")
    a.close()  # inside the transaction a's first statement began

    b = psycopg.connect(URL, autocommit=True)
    check(count_prepared(b) == 0, f"b sees {count_prepared(b)} statements it did not prepare")
    b.prepare_threshold = 0
    check(b.execute("select %s::int + 40", [2]).fetchone()[0] == 42, "b's result")
    n = count_prepared(b)
    check(n == 1, f"b sees {n} statements after preparing one")
    b.close()


def make_type(conn, typ, table):
    conn.execute(f"CREATE TYPE {typ} AS ENUM ('foo', 'bar', 'baz')")
    conn.execute(f"CREATE TABLE {table} (id integer, bar {typ}[])")


def insert(conn, typ, table):
    conn.cursor().execute(
        f"INSERT INTO {table} (bar) VALUES (%(enum_col)s::{typ}[])",
        {"enum_col": ["foo"]},
    )


def next_client(typ, table):
    """A later client makes the type and table again and prepares the
    same INSERT: it must not get a statement planned against a type that
    is gone ("cache lookup failed for type N")."""
    b = psycopg.connect(URL, autocommit=True)
    b.prepare_threshold = 0
    try:
        make_type(b, typ, table)
        for _ in range(2):
            insert(b, typ, table)
        n = b.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        check(n == 2, f"{n} rows inserted by the next client, want 2")
    finally:
        b.execute(f"DROP TABLE IF EXISTS {table}")
        b.execute(f"DROP TYPE IF EXISTS {typ}")
        b.close()


def change_type_savepoint():
    """psycopg's test_change_type_savepoint, then another client."""
    typ, table = f"prepenum_{SUFFIX}", f"preptable_{SUFFIX}"
    a = psycopg.connect(URL)
    a.prepare_threshold = 0
    with a.transaction():
        for _ in range(3):
            try:
                with a.transaction():
                    make_type(a, typ, table)
                    insert(a, typ, table)
                    raise ZeroDivisionError()
            except ZeroDivisionError:
                pass
    a.close()
    next_client(typ, table)


def change_type_rollback():
    """psycopg's test_change_type_execute (the type made and rolled back
    three times), then another client."""
    typ, table = f"prepenum_{SUFFIX}", f"preptable_{SUFFIX}"
    a = psycopg.connect(URL)
    a.prepare_threshold = 0
    for _ in range(3):
        make_type(a, typ, table)
        insert(a, typ, table)
        a.rollback()
    a.close()
    next_client(typ, table)


def change_type_left():
    """The type made, used by a prepared statement, dropped and made again
    inside a transaction the client leaves: another client then."""
    typ, table = f"prepenum_{SUFFIX}", f"preptable_{SUFFIX}"
    a = psycopg.connect(URL)
    a.prepare_threshold = 0
    make_type(a, typ, table)
    insert(a, typ, table)
    a.execute(f"DROP TABLE {table}")
    a.execute(f"DROP TYPE {typ}")
    make_type(a, typ, table)
    insert(a, typ, table)
    a.close()  # inside the transaction
    next_client(typ, table)


CASES = {
    "left-in-transaction": left_in_transaction,
    "change-type-savepoint": change_type_savepoint,
    "change-type-rollback": change_type_rollback,
    "change-type-left": change_type_left,
}

try:
    CASES[CASE]()
except Exception as e:  # noqa: BLE001 - reported to the test
    print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))
else:
    print(json.dumps({"ok": True}))
