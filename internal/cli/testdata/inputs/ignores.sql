-- pgpoolcheck:ignore listen the worker connects directly, not through the pooler
LISTEN jobs;
SET work_mem = '1GB'; -- pgpoolcheck:ignore session-set reporting job only, runs in session mode
-- pgpoolcheck:ignore session-set
SET maintenance_work_mem = '2GB';
-- pgpoolcheck:ignore no-such-rule because reasons
LOAD 'auto_explain';
-- pgpoolcheck:ignore discard nothing to discard here
SELECT 1;
SELECT pg_advisory_lock(1),
       -- pgpoolcheck:ignore advisory-lock-session second lock is released by the caller
       pg_advisory_lock(2);
