-- One script creates a routine, calls it, then replaces it: each call
-- runs the definition in force where it stands.
CREATE FUNCTION enter_tenant() RETURNS void LANGUAGE sql AS $$
    SELECT set_config('search_path', 'tenant_a', true)
$$;

SELECT enter_tenant();

CREATE OR REPLACE FUNCTION enter_tenant() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'tenant_a', false); -- want session-set
END
$$;

SELECT enter_tenant(); -- want session-set

-- The other way round: a hazard fixed later in the script.
CREATE FUNCTION grab() RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_lock(42) -- want advisory-lock-session
$$;

SELECT grab(); -- want advisory-lock-session

CREATE OR REPLACE FUNCTION grab() RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(42)
$$;

SELECT grab();
