-- Transaction-level advisory locks and look-alikes: no finding.
SELECT pg_advisory_xact_lock(42);
SELECT pg_advisory_xact_lock_shared(42);
SELECT pg_try_advisory_xact_lock(42);
SELECT pg_try_advisory_xact_lock_shared(1, 2);
SELECT pg_catalog.pg_advisory_xact_lock(hashtext('migrations'));

BEGIN;
SELECT pg_advisory_xact_lock(hashtext('nightly_rollup'));
INSERT INTO rollups SELECT date_trunc('day', created_at), count(*) FROM events GROUP BY 1;
COMMIT;

-- graphile-worker / river take transaction-level locks
SELECT id FROM river_job
WHERE state = 'available' AND pg_try_advisory_xact_lock(hashtext(queue))
LIMIT 10;

-- comments, strings, identifiers
-- pg_advisory_lock(1) is taken by the worker, see SELECT pg_advisory_unlock_all()
/* SELECT pg_advisory_lock(42); */
SELECT 'pg_advisory_lock(42)' AS how_not_to;
SELECT my_pg_advisory_lock_wrapper(42);
SELECT pg_advisory_lock_held FROM worker_state;
CREATE TABLE locks (pg_advisory_lock bigint, pg_advisory_unlock bigint);
COMMENT ON FUNCTION app.with_lock(bigint) IS 'wraps pg_advisory_lock';

-- a user function that happens to share the name, in another schema
SELECT myschema.pg_advisory_lock(42);

-- looking at locks is not taking them
SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted;

-- plain EXPLAIN only plans the statement
EXPLAIN SELECT pg_advisory_lock(42);
EXPLAIN (ANALYZE off, COSTS off) SELECT pg_try_advisory_lock(42);
