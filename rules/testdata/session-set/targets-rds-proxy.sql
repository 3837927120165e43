-- target: rds-proxy
-- RDS Proxy pins the session instead of breaking it: warnings.
SET work_mem = '64MB'; -- want session-set:warning
SET search_path = tenant_1; -- want session-set:warning
SELECT set_config('app.tenant_id', '1', false); -- want session-set:warning
SET TIME ZONE 'UTC'; -- want session-set:warning
SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; -- want session-set:warning
RESET ALL; -- want session-set:warning
SET LOCAL work_mem = '64MB';
