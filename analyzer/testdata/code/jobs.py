import logging

log = logging.getLogger(__name__)


def claim(cur, tenant_id, job_id):
    # Row-level security: the tenant for this request.
    cur.execute("SELECT set_config('app.tenant_id', %s, false)", (tenant_id,))  # want session-set:critical
    cur.execute("SELECT set_config('app.tenant_id', %s, true)", (tenant_id,))
    cur.execute(
        "SELECT pg_advisory_lock(%(id)s)",  # want advisory-lock-session
        {"id": job_id},
    )
    log.info("SET ROLE failed for %s", tenant_id)
    print("LISTEN carefully")
    cur.execute(f"SET ROLE {tenant_role}")  # want session-role:critical
    cur.execute("""
        CREATE TEMPORARY TABLE batch AS -- want temp-table
        SELECT * FROM jobs WHERE queue = %s
    """, ("default",))
    cur.execute('DECLARE c CURSOR WITH HOLD FOR SELECT 1')  # want cursor-with-hold
    cur.execute(r"PREPARE q AS SELECT $1")  # want sql-prepare
    return "could not SET timeout"
