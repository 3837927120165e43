"""SQL heads that code completes with values."""


def enter(cur, kind, key, schema, materialized):
    cur.execute(f"SELECT pg_advisory_{kind}({key})")  # want advisory-lock-session:error
    cur.execute("SET search_path TO " + schema)  # want session-set:critical
    cur.execute(f"""
        WITH j AS {materialized} (SELECT id FROM jobs LIMIT 1)
        SELECT pg_try_advisory_lock(id) FROM j -- want advisory-lock-session:error
    """)
    parts = []
    parts.append("LISTEN ")  # want listen:error
    parts.append(channel)
    cur.execute("".join(parts))


def copy_table(conn, fields):
    # A template filled in later (psycopg's sql.SQL): the hole stands for
    # column definitions, so the statement does not parse, and is read.
    stmt = sql.SQL("""
        create temp table testcopy (id serial primary key, {}) -- want temp-table:error
    """).format(fields)
    conn.execute(stmt)
