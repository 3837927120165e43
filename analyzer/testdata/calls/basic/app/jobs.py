def lock(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT lock_it()")  # want advisory-lock-session
        cur.execute("SELECT harmless(%s)", (1,))
