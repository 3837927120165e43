def run(conn, account):
    with conn.cursor() as cur:
        cur.execute("SELECT touch(%s)", (account,))
        cur.execute("SELECT with_lock()")
        # pgpoolcheck:ignore session-set this job connects to PostgreSQL directly
        cur.execute("SELECT sneaky()")
