-- V2: background job queue (Que-style) plus change notifications.

CREATE TABLE billing.jobs (
    id          bigserial PRIMARY KEY,
    queue       text        NOT NULL DEFAULT 'default',
    priority    smallint    NOT NULL DEFAULT 100,
    run_at      timestamptz NOT NULL DEFAULT now(),
    job_class   text        NOT NULL,
    args        jsonb       NOT NULL DEFAULT '[]',
    error_count int         NOT NULL DEFAULT 0,
    last_error  text,
    finished_at timestamptz,
    expired_at  timestamptz
);

CREATE INDEX jobs_poll_idx ON billing.jobs (queue, priority, run_at, id)
    WHERE finished_at IS NULL AND expired_at IS NULL;

-- Pick the next job and hold a session advisory lock on its id while the
-- worker runs it. The worker unlocks with billing.unlock_job().
CREATE OR REPLACE FUNCTION billing.lock_job(p_queue text)
RETURNS SETOF billing.jobs
LANGUAGE sql AS $$
    WITH RECURSIVE candidates AS (
        SELECT (j).*, pg_try_advisory_lock((j).id) AS locked -- want advisory-lock-session:error
        FROM (
            SELECT j
            FROM billing.jobs AS j
            WHERE queue = p_queue
              AND run_at <= now()
              AND finished_at IS NULL
              AND expired_at IS NULL
            ORDER BY priority, run_at, id
            LIMIT 1
        ) AS t1
        UNION ALL (
            SELECT (j).*, pg_try_advisory_lock((j).id) AS locked -- want advisory-lock-session:error
            FROM (
                SELECT (
                    SELECT j
                    FROM billing.jobs AS j
                    WHERE queue = p_queue
                      AND run_at <= now()
                      AND finished_at IS NULL
                      AND expired_at IS NULL
                      AND (priority, run_at, id) > (candidates.priority, candidates.run_at, candidates.id)
                    ORDER BY priority, run_at, id
                    LIMIT 1
                ) AS j
                FROM candidates
                WHERE candidates.id IS NOT NULL
                LIMIT 1
            ) AS t1
        )
    )
    SELECT id, queue, priority, run_at, job_class, args, error_count, last_error, finished_at, expired_at
    FROM candidates
    WHERE locked
    LIMIT 1;
$$;

CREATE OR REPLACE FUNCTION billing.unlock_job(p_id bigint) RETURNS boolean
LANGUAGE sql AS $$
    SELECT pg_advisory_unlock(p_id); -- want advisory-lock-session:info
$$;

-- The safe variant used by the new worker: SKIP LOCKED inside the job's
-- own transaction, with a transaction-scoped lock on the queue.
CREATE OR REPLACE FUNCTION billing.claim_job(p_queue text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('billing.jobs:' || p_queue));
    SELECT id INTO v_id
    FROM billing.jobs
    WHERE queue = p_queue AND finished_at IS NULL AND run_at <= now()
    ORDER BY priority, run_at, id
    FOR UPDATE SKIP LOCKED
    LIMIT 1;
    RETURN v_id;
END;
$$;

-- Notify listeners when a job is enqueued. pg_notify is transactional and
-- fine behind a pooler; only the LISTEN side is session state.
CREATE OR REPLACE FUNCTION billing.notify_job_enqueued() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'billing_jobs',
        json_build_object('id', NEW.id, 'queue', NEW.queue, 'run_at', NEW.run_at)::text
    );
    RETURN NEW;
END;
$$;

CREATE TRIGGER jobs_notify_enqueued
    AFTER INSERT ON billing.jobs
    FOR EACH ROW
    WHEN (NEW.run_at <= now())
    EXECUTE FUNCTION billing.notify_job_enqueued();

-- Retry bookkeeping
CREATE OR REPLACE FUNCTION billing.fail_job(p_id bigint, p_error text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_count int;
BEGIN
    UPDATE billing.jobs
       SET error_count = error_count + 1,
           last_error  = left(p_error, 2000),
           run_at      = now() + make_interval(secs => power(error_count + 1, 4) + 3)
     WHERE id = p_id
    RETURNING error_count INTO v_count;

    IF v_count >= 25 THEN
        UPDATE billing.jobs SET expired_at = now() WHERE id = p_id;
    END IF;
END;
$$;

-- Singleton cron: only one node runs the scheduler. The lock stays with
-- whatever server connection ran this, not with the scheduler process.
CREATE OR REPLACE FUNCTION billing.try_become_scheduler() RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    RETURN pg_try_advisory_lock(hashtext('billing.scheduler')); -- want advisory-lock-session:error
END;
$$;

NOTIFY billing_jobs, 'schema V2 applied';
