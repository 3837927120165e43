SET statement_timeout = '5min';
SET client_encoding = 'UTF8';
SET search_path = app, public;
SELECT set_config('app.tenant_id', '42', false);

BEGIN;
SET LOCAL lock_timeout = '1s';
SELECT pg_advisory_lock(7);
UPDATE jobs SET queue = 'x' WHERE id = 1;
SELECT pg_advisory_unlock(7);
COMMIT;

LISTEN jobs;
SELECT currval('jobs_id_seq');
