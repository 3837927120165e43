"""Several statements in one query string run in one implicit transaction."""


def report(cur):
    # What the sql-prepare fix recommends, sent as one simple query.
    cur.execute("PREPARE totals AS SELECT sum(amount) FROM ledger; EXECUTE totals; DEALLOCATE totals;")
    cur.execute("CREATE TEMP TABLE staged (id int) ON COMMIT DROP; INSERT INTO staged VALUES (1); SELECT * FROM staged")
    cur.execute("INSERT INTO jobs DEFAULT VALUES; SELECT currval('jobs_id_seq')")
    cur.execute("LISTEN probe; UNLISTEN probe")
    # Session state still outlives the implicit transaction.
    cur.execute("SET work_mem = '64MB'; SELECT 1")  # want session-set:error
    cur.execute("PREPARE kept AS SELECT 1; EXECUTE kept")  # want sql-prepare:error
    cur.execute("SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)")  # want advisory-lock-session:warning


def separate(cur):
    # One statement per call: each in its own transaction.
    cur.execute("PREPARE one AS SELECT 1")  # want sql-prepare:error
    cur.execute("EXECUTE one")  # want sql-prepare:error


def explicit(cur):
    cur.execute("BEGIN; PREPARE two AS SELECT 1; COMMIT")  # want sql-prepare:error
