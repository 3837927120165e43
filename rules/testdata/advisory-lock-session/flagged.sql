-- Session-level advisory locks: held by the server connection, not the client.
SELECT pg_advisory_lock(42); -- want advisory-lock-session:error
SELECT pg_advisory_lock(1, 2); -- want advisory-lock-session:error
SELECT pg_advisory_lock_shared(42); -- want advisory-lock-session:error
SELECT pg_try_advisory_lock(42); -- want advisory-lock-session:error
SELECT pg_try_advisory_lock_shared(7, 8); -- want advisory-lock-session:error
SELECT pg_catalog.pg_advisory_lock(hashtext('migrations')); -- want advisory-lock-session:error
SELECT PG_ADVISORY_LOCK(42); -- want advisory-lock-session:error
SELECT "pg_try_advisory_lock"(42); -- want advisory-lock-session:error
SELECT pg_try_advisory_lock($1) AS locked; -- want advisory-lock-session:error

-- Rails / Flyway / Liquibase style migration lock
SELECT pg_try_advisory_lock(3860275187) AS acquired; -- want advisory-lock-session:error
SELECT pg_advisory_unlock(3860275187); -- want advisory-lock-session:info
SELECT pg_catalog.pg_advisory_unlock_all(); -- want advisory-lock-session:info
SELECT pg_advisory_unlock_shared(42); -- want advisory-lock-session:info

-- Que / good_job: the lock is taken in WHERE, FROM and CTEs
WITH RECURSIVE jobs AS (
  SELECT (j).*, pg_try_advisory_lock((j).job_id) AS locked -- want advisory-lock-session:error
  FROM (
    SELECT j FROM que_jobs AS j
    WHERE queue = $1 AND run_at <= now()
    ORDER BY priority, run_at, job_id LIMIT 1
  ) AS t1
  UNION ALL (
    SELECT (j).*, pg_try_advisory_lock((j).job_id) AS locked -- want advisory-lock-session:error
    FROM (
      SELECT (SELECT j FROM que_jobs AS j WHERE queue = $1 AND (priority, run_at, job_id) > (jobs.priority, jobs.run_at, jobs.job_id) ORDER BY priority, run_at, job_id LIMIT 1) AS j
      FROM jobs WHERE jobs.job_id IS NOT NULL LIMIT 1
    ) AS t1
  )
)
SELECT queue, priority, run_at, job_id, job_class, args, error_count
FROM jobs WHERE locked LIMIT 1;

SELECT "good_jobs".* FROM "good_jobs"
WHERE "good_jobs"."id" IN (
  SELECT "good_jobs"."id" FROM "good_jobs" WHERE "good_jobs"."finished_at" IS NULL
  ORDER BY priority DESC NULLS LAST LIMIT 1
) AND pg_try_advisory_lock(('x' || substr(md5('good_jobs' || '-' || "good_jobs"."active_job_id"::text), 1, 16))::bit(64)::bigint) -- want advisory-lock-session:error
LIMIT 1;

SELECT locked FROM pg_try_advisory_lock(12345) AS locked; -- want advisory-lock-session:error
SELECT * FROM jobs j WHERE EXISTS (SELECT 1 WHERE pg_try_advisory_lock(j.id)); -- want advisory-lock-session:error
SELECT CASE WHEN pg_try_advisory_lock(1) THEN 'got it' ELSE 'busy' END; -- want advisory-lock-session:error
SELECT coalesce(pg_try_advisory_lock(1), false); -- want advisory-lock-session:error
UPDATE jobs SET locked_at = now() WHERE id = $1 RETURNING pg_advisory_lock(id); -- want advisory-lock-session:error
VALUES (pg_advisory_lock(9)); -- want advisory-lock-session:error
SELECT pg_advisory_lock(1), pg_advisory_lock(2); -- want advisory-lock-session advisory-lock-session

-- EXPLAIN ANALYZE runs the statement
EXPLAIN ANALYZE SELECT pg_advisory_lock(77); -- want advisory-lock-session:error
EXPLAIN (ANALYZE, BUFFERS) SELECT pg_try_advisory_lock(78); -- want advisory-lock-session:error
