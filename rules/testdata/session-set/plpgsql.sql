-- SETs inside routine bodies run when the routine is called.
CREATE OR REPLACE FUNCTION app.switch_tenant(p_tenant bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant::text, false); -- want session-set:critical
  SET search_path = app, public; -- want session-set:critical
  SET LOCAL statement_timeout = '5s';
  PERFORM set_config('app.request_id', gen_random_uuid()::text, true);
END;
$$;

CREATE FUNCTION app.login(uid int) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  old text;
BEGIN
  IF uid > 0 THEN
    old := set_config('app.user_id', uid::text, false); -- want session-set:critical
  ELSE
    EXECUTE 'SET work_mem = ''256MB'''; -- want session-set:error
  END IF;
  RETURN old;
EXCEPTION WHEN others THEN
  RESET statement_timeout; -- want session-set:warning
  RETURN NULL;
END;
$fn$;

DO $$
BEGIN
  SET client_min_messages = warning; -- want session-set:error
  EXECUTE format('SET search_path = %I', 'tenant_1'); -- want session-set:critical
END
$$;

DO LANGUAGE plpgsql $do$
DECLARE
  is_local boolean := false;
BEGIN
  PERFORM set_config('work_mem', '1GB', is_local); -- want session-set:warning
END
$do$;

CREATE FUNCTION app.set_tenant_sql(t text) RETURNS text
LANGUAGE sql AS $$
  SELECT set_config('app.tenant_id', t, false); -- want session-set:critical
$$;

CREATE FUNCTION app.set_tenant_quoted(t text) RETURNS text
LANGUAGE sql AS '
  SELECT set_config(''app.tenant_id'', t, false); -- want session-set:critical
';

CREATE FUNCTION app.set_tenant_atomic(t text) RETURNS text
LANGUAGE sql
BEGIN ATOMIC
  SELECT set_config('app.tenant_id', t, false); -- want session-set:critical
END;

CREATE PROCEDURE app.reset_tenant()
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('app.tenant_id', '', false); -- want session-set:critical
  COMMIT;
END;
$$;

-- loop variable not declared: libpg_query refuses the body, the fallback
-- still finds the statements
CREATE FUNCTION app.bump_all() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR r IN SELECT id FROM tenants LOOP
    SET work_mem = '128MB'; -- want session-set:error
    UPDATE tenants SET touched = now() WHERE id = r.id;
  END LOOP;
END;
$$;

-- trigger function
CREATE FUNCTION app.audit_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.changed_by := current_setting('app.user_id', true);
  PERFORM pg_catalog.set_config('app.last_table', TG_TABLE_NAME, false); -- want session-set:critical
  RETURN NEW;
END;
$$;
