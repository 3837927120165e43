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
