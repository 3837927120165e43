-- Forms that do not change the session: no finding.
SET LOCAL search_path = app, public;
SET LOCAL statement_timeout = '5s';
SET LOCAL app.tenant_id = '42';
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
SET TRANSACTION READ ONLY, DEFERRABLE;
SET TRANSACTION SNAPSHOT '00000003-0000001B-1';
SET CONSTRAINTS ALL DEFERRED;
SET CONSTRAINTS fk_orders_customer IMMEDIATE;
SELECT set_config('app.tenant_id', '42', true);
SELECT set_config('search_path', 'tenant_7', 'true');
SELECT set_config('work_mem', '64MB', 'on'::boolean);
SELECT pg_catalog.set_config('app.user_id', $1, true);
SELECT current_setting('app.tenant_id', true);
SELECT current_setting('search_path');
SHOW search_path;
SHOW ALL;

-- nested SETs of DDL that store a default, not session SETs
ALTER ROLE app_user SET search_path = app, public;
ALTER ROLE app_user SET statement_timeout TO '30s';
ALTER ROLE app_user IN DATABASE shop SET work_mem = '64MB';
ALTER ROLE ALL SET idle_in_transaction_session_timeout = '5min';
ALTER ROLE app_user RESET search_path;
ALTER ROLE app_user IN DATABASE shop RESET ALL;
ALTER USER reporting SET default_transaction_read_only = on;
ALTER DATABASE shop SET timezone TO 'UTC';
ALTER DATABASE shop SET search_path = shop, public;
ALTER DATABASE shop RESET work_mem;
ALTER SYSTEM SET max_connections = 200;
ALTER SYSTEM RESET work_mem;
CREATE FUNCTION app.current_tenant() RETURNS bigint
  LANGUAGE sql STABLE
  SET search_path = app, pg_temp
  AS $$ SELECT nullif(current_setting('app.tenant_id', true), '')::bigint $$;
CREATE OR REPLACE FUNCTION app.secure_fn() RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path FROM CURRENT
  AS $$ BEGIN PERFORM 1; END $$;
ALTER FUNCTION app.current_tenant() SET search_path = app, pg_temp;
ALTER FUNCTION app.secure_fn() RESET search_path;
ALTER PROCEDURE app.cleanup(int) SET work_mem = '1GB';

-- words in strings, comments, identifiers and column names
-- SET search_path = evil; set_config('app.tenant_id', '1', false)
/* SET ROLE admin; RESET ALL; */
SELECT 'SET search_path = public' AS hint;
INSERT INTO settings (set_config, reset) VALUES ('x', 'y');
SELECT set_config FROM settings;
UPDATE settings SET setting = 'on' WHERE name = 'feature_x';
UPDATE app.pg_settings SET setting = 'x' WHERE name = 'work_mem';
SELECT my_set_config('app.tenant_id', '1', false);
SELECT util.set_config('app.tenant_id', '1', false);
CREATE TABLE reset (set text, session text);

-- a policy that reads the tenant is fine; setting it is the hazard
CREATE POLICY tenant_isolation ON orders
  USING (tenant_id = current_setting('app.tenant_id')::bigint);

-- SET LOCAL inside a transaction
BEGIN;
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SET LOCAL search_path = tenant_9;
SELECT set_config('app.tenant_id', '9', true);
COMMIT;

-- set and reset in one transaction: nothing reaches the pool
BEGIN;
SET statement_timeout = 0;
CREATE INDEX idx_orders_created ON orders (created_at);
RESET statement_timeout;
COMMIT;

BEGIN;
SET work_mem = '1GB';
SET search_path = reporting;
SELECT set_config('app.tenant_id', '3', false);
REFRESH MATERIALIZED VIEW reporting.daily;
SET search_path TO DEFAULT;
RESET ALL;
COMMIT;

-- rolled back: SET is transactional
BEGIN;
SET search_path = test_schema;
SELECT set_config('app.tenant_id', '99', false);
SELECT * FROM invoices;
ROLLBACK;

START TRANSACTION;
SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY;
ABORT;

-- a RESET that undoes a SET LOCAL of the same transaction
BEGIN;
SET LOCAL statement_timeout = '5s';
UPDATE accounts SET balance = 0 WHERE id = 1;
RESET statement_timeout;
COMMIT;
