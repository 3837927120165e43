-- target: pgbouncer-legacy
SET TIME ZONE 'UTC'; -- want session-set:info
SET work_mem = '64MB'; -- want session-set:error
SET search_path = tenant_1; -- want session-set:critical
