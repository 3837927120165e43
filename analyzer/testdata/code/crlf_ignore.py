import psycopg


def lock(cur, key):
    # pgpoolcheck:ignore listen the notifier runs on a dedicated connection
    cur.execute("LISTEN refresh")
    cur.execute(
        "SELECT pg_advisory_lock(%s)",  # want advisory-lock-session
        (key,),
    )
    cur.execute("""
        SET statement_timeout = 0 -- want session-set
    """)
    cur.execute("SET ROLE app")  # pgpoolcheck:ignore session-role reviewed: role switch is reset by the caller
