"""One psycopg 3 scenario: python3 psycopg3_scenario.py URL SCENARIO.

psycopg 3 sends statements with the extended protocol (the unnamed
statement, Parse to Sync in one round trip). A statement run
prepare_threshold times (5 by default) is prepared as _pg3_N with Parse
and Sync, then bound in its own round trip each time it runs again.
"""

import sys

import psycopg


def check(got, want, what):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


def main(url, scenario):
    kw = {"autocommit": True}
    if scenario in ("prepare0", "pipeline"):
        kw["prepare_threshold"] = 0
    elif scenario == "set-in-transaction":
        kw["autocommit"] = False
    elif scenario == "noprepare":
        kw["prepare_threshold"] = None
    conn = psycopg.connect(url, application_name="e2e-psycopg3", **kw)
    if scenario == "evict":
        conn.prepare_threshold = 0
        conn.prepared_max = 2
    if scenario in ("prepare0", "repeat", "noprepare"):
        # prepare0: prepared on the first run; repeat: on the sixth
        # (after prepare_threshold=5 runs); noprepare: never.
        for i in range(7):
            check(conn.execute("SELECT %s::int + 1", (i,)).fetchone()[0], i + 1, "select")
        prepared = conn.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE '\\_pg3\\_%%'", prepare=False).fetchone()[0]
        check(prepared > 0, scenario != "noprepare", "_pg3_ statements on the server")
    elif scenario == "evict":
        # Three statements and room for two: the third evicts the first
        # with DEALLOCATE _pg3_0, sent as SQL.
        for q in ("SELECT %s::int + 1", "SELECT %s::int + 2", "SELECT %s::int + 3"):
            check(conn.execute(q, (1,)).fetchone()[0] > 1, True, q)
    elif scenario == "pipeline":
        # Pipeline mode: Parse _pg3_0 and three Bind/Execute, one Sync at
        # the end of the pipeline: one transaction.
        with conn.pipeline():
            curs = [conn.execute("SELECT %s::int + 1", (i,)) for i in range(3)]
        check([c.fetchone()[0] for c in curs], [1, 2, 3], "pipeline results")
    elif scenario == "pipeline-error":
        # The first statement of the pipeline fails: the server skips
        # the rest up to the Sync, so the lock is never taken.
        try:
            with conn.pipeline():
                conn.execute("SELECT 1 / 0", prepare=False)
                conn.execute("SELECT pg_advisory_lock(4247)", prepare=False)
                conn.execute("SELECT 1", prepare=False)
        except psycopg.errors.DivisionByZero:
            pass
        else:
            sys.exit("the pipeline did not fail")
        held = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4247").fetchone()[0]
        check(held, 0, "advisory locks held")
    elif scenario == "set-in-transaction":
        # Not autocommit: BEGIN, SET, COMMIT; the SET outlives the COMMIT.
        conn.execute("SET statement_timeout = 5000")
        conn.commit()
        check(conn.execute("SHOW statement_timeout").fetchone()[0], "5s", "statement_timeout after commit")
        conn.commit()
    elif scenario == "set-local":
        with conn.transaction():
            conn.execute("SET LOCAL statement_timeout = 5000")
            check(conn.execute("SHOW statement_timeout").fetchone()[0], "5s", "inside")
        check(conn.execute("SHOW statement_timeout").fetchone()[0], "0", "after commit")
    elif scenario == "savepoint-rollback":
        # A nested transaction block is a savepoint: Rollback undoes the
        # SET made in it, and the outer transaction commits without it.
        with conn.transaction():
            with conn.transaction():
                conn.execute("SET statement_timeout = 5000")
                check(conn.execute("SHOW statement_timeout").fetchone()[0], "5s", "inside the savepoint")
                raise psycopg.Rollback()
        check(conn.execute("SHOW statement_timeout").fetchone()[0], "0", "after the outer commit")
    elif scenario == "listen":
        got = []
        conn.add_notify_handler(lambda n: got.append(n.channel))
        conn.execute("LISTEN e2e_jobs")
        conn.execute("NOTIFY e2e_jobs, 'job 1'")
        conn.execute("SELECT 1")
        check(got, ["e2e_jobs"], "notifications")
    else:
        sys.exit(f"unknown scenario {scenario!r}")
    conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
