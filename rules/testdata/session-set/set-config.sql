-- set_config(name, value, is_local) with is_local false, in every spelling,
-- and anywhere in a statement.
SELECT set_config('app.tenant_id', '42', false); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', 'false'); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', 'off'); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', 'f'); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', FALSE); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', false::boolean); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', 'false'::bool); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', CAST('no' AS boolean)); -- want session-set:critical
SELECT set_config('app.tenant_id', '42', 0::boolean); -- want session-set:critical
SELECT pg_catalog.set_config('work_mem', '1GB', false); -- want session-set:error
SELECT PG_CATALOG.SET_CONFIG('statement_timeout', '0', false); -- want session-set:error
SELECT "set_config"('work_mem', '64MB', false); -- want session-set:error
SELECT set_config('TimeZone', 'UTC', false); -- want session-set:info
SELECT set_config('application_name', 'worker-3', false); -- want session-set:info

-- is_local only known at run time: a warning
SELECT set_config('app.tenant_id', $1, $2); -- want session-set:warning
SELECT set_config($1, $2, false); -- want session-set:error

-- anywhere in a statement
SELECT id, set_config('app.user_id', id::text, false) FROM users WHERE email = 'a@example.com'; -- want session-set:critical
SELECT * FROM orders WHERE set_config('app.tenant_id', '7', false) IS NOT NULL; -- want session-set:critical
SELECT * FROM set_config('app.tenant_id', '7', false); -- want session-set:critical
WITH s AS (SELECT set_config('search_path', 'tenant_7', false)) SELECT * FROM s; -- want session-set:critical
SELECT (SELECT set_config('work_mem', '32MB', false)) AS old; -- want session-set:error
VALUES (set_config('work_mem', '32MB', false)); -- want session-set:error
INSERT INTO config_log (value) VALUES ('x') RETURNING set_config('app.last', value, false); -- want session-set:critical
SELECT CASE WHEN $1 THEN set_config('app.mode', 'admin', false) END; -- want session-set:critical
SELECT length(set_config('work_mem', '32MB', false)); -- want session-set:error
SELECT
  u.id,
  set_config( -- want session-set:critical
    'app.tenant_id',
    u.tenant_id::text,
    false)
FROM users u;
