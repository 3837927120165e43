BEGIN;
SET LOCAL statement_timeout = '5s';
SELECT pg_advisory_xact_lock(1);
CREATE TEMP TABLE scratch (a int) ON COMMIT DROP;
INSERT INTO scratch VALUES (1);
COMMIT;
SELECT 'SET ROLE admin' AS not_sql, pg_notify('jobs', 'x'); -- LISTEN in a comment
