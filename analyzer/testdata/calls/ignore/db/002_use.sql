-- pgpoolcheck:ignore session-set the migration runner connects directly, not through the pooler
SELECT sneaky();
SELECT sneaky(); -- want session-set
-- pgpoolcheck:ignore session-set the worker resets work_mem itself
SELECT both_ways(); -- want listen
