"""One psycopg2 scenario: python3 psycopg2_scenario.py URL SCENARIO.

psycopg2 sends every statement as a simple Query with the values inlined.
Without autocommit (its default) it sends BEGIN before the first statement
of each transaction, which the program ends with commit() or rollback().
"""

import sys
import time

import psycopg2


def check(got, want, what):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


def one(cur, sql, *args):
    cur.execute(sql, args or None)
    return cur.fetchone()[0]


def main(url, scenario):
    options = {
        "options": "-c statement_timeout=5000",
        "options-tracked": "-c TimeZone=UTC",
    }.get(scenario)
    kw = {"options": options} if options else {}
    conn = psycopg2.connect(url, application_name="e2e-psycopg2", **kw)
    cur = conn.cursor()
    if scenario == "autocommit-set":
        # Autocommit: the SET is a transaction of its own, and the SELECT
        # after it runs in the next one.
        conn.autocommit = True
        cur.execute("SET statement_timeout = 5000")
        check(one(cur, "SELECT count(*) > 0 FROM pg_class"), True, "select")
    elif scenario == "readonly-autocommit":
        # With autocommit on, set_session(readonly=True) makes psycopg2
        # send SET default_transaction_read_only itself.
        conn.autocommit = True
        conn.set_session(readonly=True)
        check(one(cur, "SHOW transaction_read_only"), "on", "transaction_read_only")
    elif scenario == "readonly":
        # Without autocommit, psycopg2 sends BEGIN READ ONLY each time.
        conn.set_session(readonly=True)
        check(one(cur, "SHOW transaction_read_only"), "on", "first transaction")
        conn.commit()
        check(one(cur, "SHOW transaction_read_only"), "on", "second transaction")
        conn.commit()
    elif scenario == "client-encoding":
        # set_client_encoding sends SET client_encoding itself.
        conn.set_client_encoding("LATIN1")
        check(one(cur, "SHOW client_encoding"), "LATIN1", "client_encoding")
        conn.commit()
    elif scenario == "idle":
        # The implicit transaction stays open while the program sleeps.
        one(cur, "SELECT count(*) FROM e2e_jobs")
        time.sleep(1.5)
        conn.commit()
    elif scenario == "options":
        check(one(cur, "SHOW statement_timeout"), "5s", "statement_timeout")
        conn.commit()
    elif scenario == "options-tracked":
        check(one(cur, "SHOW TimeZone"), "UTC", "TimeZone")
        conn.commit()
    elif scenario == "implicit-set":
        # Default: BEGIN, SET, COMMIT. A SET in a transaction block lasts
        # past its COMMIT; the next transaction reads it back.
        cur.execute("SET statement_timeout = 5000")
        conn.commit()
        check(one(cur, "SHOW statement_timeout"), "5s", "statement_timeout after commit")
        conn.commit()
    elif scenario == "implicit-set-rollback":
        # The transaction is rolled back, and the SET with it.
        cur.execute("SET statement_timeout = 5000")
        conn.rollback()
        check(one(cur, "SHOW statement_timeout"), "0", "statement_timeout after rollback")
        conn.commit()
    elif scenario == "set-local":
        cur.execute("SET LOCAL statement_timeout = 5000")
        check(one(cur, "SHOW statement_timeout"), "5s", "statement_timeout inside")
        conn.commit()
        check(one(cur, "SHOW statement_timeout"), "0", "statement_timeout after commit")
        conn.commit()
    elif scenario == "advisory-lock":
        # Taken in one implicit transaction, released in a later one.
        one(cur, "SELECT pg_advisory_lock(%s)", 4243)
        conn.commit()
        one(cur, "SELECT count(*) FROM pg_class")
        conn.commit()
        check(one(cur, "SELECT pg_advisory_unlock(%s)", 4243), True, "unlock")
        conn.commit()
    elif scenario == "withhold-cursor":
        # A named cursor WITH HOLD: DECLARE … WITH HOLD in one
        # transaction, FETCH and CLOSE in the next.
        named = conn.cursor("e2e_hold", withhold=True)
        named.execute("SELECT generate_series(1, 10)")
        conn.commit()
        check(len(named.fetchmany(5)), 5, "rows fetched after commit")
        named.close()
        conn.commit()
    elif scenario == "named-cursor":
        # Without WITH HOLD the cursor lives inside its transaction.
        named = conn.cursor("e2e_cur")
        named.execute("SELECT generate_series(1, 10)")
        check(len(named.fetchmany(5)), 5, "rows fetched")
        named.close()
        conn.commit()
        one(cur, "SELECT 1")
        conn.commit()
    else:
        sys.exit(f"unknown scenario {scenario!r}")
    conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
