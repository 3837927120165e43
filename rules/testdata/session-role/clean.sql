-- Transaction-scoped role changes and look-alikes: no finding.
SET LOCAL ROLE admin;
SET LOCAL SESSION AUTHORIZATION alice;
SELECT set_config('role', 'tenant_admin', true);
SELECT set_config('role', current_user, 'on');

BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claim.sub', '42', true);
SELECT * FROM todos;
COMMIT;

-- switched and switched back in one transaction
BEGIN;
SET ROLE authenticated;
SELECT * FROM todos;
RESET ROLE;
COMMIT;

BEGIN;
SET SESSION AUTHORIZATION alice;
SELECT set_config('role', 'reader', false);
SELECT * FROM reports;
SET ROLE NONE;
SET SESSION AUTHORIZATION DEFAULT;
COMMIT;

-- pgTAP / Supabase tests: everything is rolled back
BEGIN;
SELECT plan(2);
SET ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"u1"}', false);
SELECT results_eq('SELECT count(*) FROM todos', ARRAY[1::bigint]);
SELECT * FROM finish();
ROLLBACK;

-- DDL about roles
CREATE ROLE app_user LOGIN;
GRANT app_user TO admin;
ALTER ROLE app_user SET role = 'app_reader';
ALTER DATABASE app SET role = 'app_reader';
ALTER ROLE app_user RESET ALL;
CREATE FUNCTION app.f() RETURNS void LANGUAGE sql SET role = 'app_owner' AS $$ SELECT 1 $$;

-- words only
SELECT 'SET ROLE admin' AS sql_text;
-- SET ROLE admin;
SELECT role, session_authorization FROM user_sessions WHERE role = 'admin';
SELECT current_role, session_user, current_setting('role');
UPDATE users SET role = 'admin' WHERE id = 1;
INSERT INTO members (role) VALUES ('owner');
