-- Session-level role changes: the privileges stay on the pooled connection.
SET ROLE admin; -- want session-role:critical
SET ROLE "app-owner"; -- want session-role:critical
set role postgres; -- want session-role:critical
SET SESSION ROLE reporting; -- want session-role:critical
SET SESSION AUTHORIZATION 'alice'; -- want session-role:critical
SET SESSION AUTHORIZATION bob; -- want session-role:critical
SELECT set_config('role', 'tenant_admin', false); -- want session-role:critical
SELECT pg_catalog.set_config('role', 'tenant_admin', 'off'); -- want session-role:critical
SELECT set_config('session_authorization', 'alice', false); -- want session-role:critical
SELECT set_config('role', $1, $2); -- want session-role:warning

-- test suites: switch to the RLS role, check, switch back
BEGIN;
SET ROLE authenticated; -- want session-role:critical
SELECT set_config('request.jwt.claims', '{"sub":"1"}', false); -- want session-set:critical
SELECT * FROM todos;
COMMIT;
RESET ROLE; -- want session-role:warning

-- going back on whatever connection this transaction gets
RESET ROLE; -- want session-role:warning
SET ROLE NONE; -- want session-role:warning
RESET SESSION AUTHORIZATION; -- want session-role:warning
SET SESSION AUTHORIZATION DEFAULT; -- want session-role:warning

-- in routine bodies
CREATE FUNCTION app.become_owner() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  SET ROLE app_owner; -- want session-role:critical
  EXECUTE 'SET ROLE app_owner'; -- want session-role:critical
  PERFORM set_config('role', 'app_owner', false); -- want session-role:critical
END;
$$;

DO $$
BEGIN
  SET SESSION AUTHORIZATION admin; -- want session-role:critical
END
$$;

-- going back to the session user through set_config
SELECT set_config('role', 'none', false); -- want session-role:warning
