-- target: pgdog
-- PgDog replays SET on every server connection the client gets.
SET work_mem = '64MB'; -- want session-set:info
SET search_path = tenant_1; -- want session-set:info
SELECT set_config('app.tenant_id', '1', false); -- want session-set:info
SET TIME ZONE 'UTC'; -- want session-set:info
RESET work_mem; -- want session-set:info
