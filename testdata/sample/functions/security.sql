-- Functions of the accounts schema. SECURITY DEFINER functions pin their
-- search_path with a SET clause: that is stored with the function and
-- applied per call, so it is not session state.

CREATE OR REPLACE FUNCTION accounts.verify_password(p_email text, p_password text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
    v_hash text;
BEGIN
    SELECT password_hash INTO v_hash
    FROM accounts.users
    WHERE lower(email) = lower(p_email)
      AND locked_at IS NULL;
    IF v_hash IS NULL THEN
        RETURN false;
    END IF;
    RETURN v_hash = crypt(p_password, v_hash);
END;
$$;

REVOKE ALL ON FUNCTION accounts.verify_password(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION accounts.verify_password(text, text) TO api;

CREATE OR REPLACE FUNCTION accounts.rotate_api_key(p_user bigint)
RETURNS text
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, accounts, pg_temp
SET statement_timeout = '2s'
AS $$
DECLARE
    v_key text := encode(gen_random_bytes(24), 'base64');
BEGIN
    SET LOCAL lock_timeout = '500ms';
    UPDATE accounts.api_keys
       SET revoked_at = now()
     WHERE user_id = p_user AND revoked_at IS NULL;
    INSERT INTO accounts.api_keys (user_id, key_hash)
    VALUES (p_user, crypt(v_key, gen_salt('bf')));
    RETURN v_key;
END;
$$;

-- Simple SQL functions, dollar-quoted and single-quoted.
CREATE OR REPLACE FUNCTION accounts.display_name(u accounts.users)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(nullif(trim(u.first_name || ' ' || u.last_name), ''), u.email);
$$;

CREATE OR REPLACE FUNCTION accounts.is_admin(p_user bigint) RETURNS boolean
LANGUAGE sql STABLE
AS 'SELECT EXISTS (SELECT 1 FROM accounts.memberships WHERE user_id = p_user AND role = ''admin'')';

-- Legacy helper from the pre-RLS days. Switches the whole session.
CREATE OR REPLACE FUNCTION accounts.use_tenant_schema(p_schema text) RETURNS text
LANGUAGE sql VOLATILE
AS 'SELECT set_config(''search_path'', p_schema || '', public'', false)'; -- want session-set:critical

CREATE OR REPLACE FUNCTION accounts.use_tenant_schema_tx(p_schema text) RETURNS text
LANGUAGE sql VOLATILE
AS $$ SELECT set_config('search_path', p_schema || ', public', true) $$;

-- SQL-standard bodies.
CREATE OR REPLACE FUNCTION accounts.membership_count(p_user bigint) RETURNS bigint
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT count(*) FROM accounts.memberships WHERE user_id = p_user;
END;

CREATE OR REPLACE FUNCTION accounts.record_login(p_user bigint) RETURNS void
LANGUAGE sql
BEGIN ATOMIC
    UPDATE accounts.users SET last_login_at = now() WHERE id = p_user;
    INSERT INTO accounts.login_events (user_id, at, backend_pid)
    VALUES (p_user, now(), pg_backend_pid()); -- want backend-pid:info
END;

CREATE OR REPLACE PROCEDURE accounts.lock_user(p_user bigint, p_reason text)
LANGUAGE sql
BEGIN ATOMIC
    UPDATE accounts.users SET locked_at = now(), lock_reason = p_reason WHERE id = p_user;
    DELETE FROM accounts.sessions WHERE user_id = p_user;
END;

-- Impersonation for the support console. The role switch is session-wide.
CREATE OR REPLACE FUNCTION accounts.impersonate(p_role text) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_role NOT IN ('support_readonly', 'support_write') THEN
        RAISE EXCEPTION 'role % not allowed', p_role;
    END IF;
    PERFORM set_config('role', p_role, false); -- want session-role:critical
    PERFORM set_config('accounts.impersonated_by', session_user, false); -- want session-set:critical
END;
$$;

CREATE OR REPLACE FUNCTION accounts.impersonate_tx(p_role text) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM set_config('role', p_role, true);
    PERFORM set_config('accounts.impersonated_by', session_user, true);
END;
$$;

-- Stored configuration: none of these change the current session.
ALTER FUNCTION accounts.display_name(accounts.users) SET search_path = pg_catalog, accounts;
ALTER FUNCTION accounts.is_admin(bigint) SET search_path FROM CURRENT;
ALTER FUNCTION accounts.rotate_api_key(bigint) RESET statement_timeout;
ALTER ROLE api SET search_path = accounts, public;
ALTER ROLE api SET idle_in_transaction_session_timeout = '30s';
ALTER ROLE api IN DATABASE accounts RESET ALL;
ALTER DATABASE accounts SET timezone = 'UTC';
ALTER DATABASE accounts SET accounts.feature_flags = 'sso,scim';
ALTER SYSTEM SET log_min_duration_statement = '500ms';
ALTER SYSTEM RESET shared_preload_libraries;
SELECT pg_reload_conf();

COMMENT ON FUNCTION accounts.impersonate(text) IS 'Uses set_config(''role'', ..., false): replace with impersonate_tx.';
