-- target: pgpoolcheck
-- pgpoolcheck replays the client's SETs: info.
SET work_mem = '64MB'; -- want session-set:info
SET search_path = tenant_1; -- want session-set:info
SELECT set_config('app.tenant_id', '1', false); -- want session-set:info
SET application_name = 'api'; -- want session-set:info
RESET ALL; -- want session-set:info
