-- An extension script: psql refuses to run it directly, CREATE EXTENSION
-- replaces @extschema@ with the extension's schema.
\echo Use "CREATE EXTENSION jobq" to load this file. \quit

CREATE FUNCTION @extschema@.claim(p_id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_lock(p_id) THEN -- want advisory-lock-session
    RETURN false;
  END IF;
  PERFORM @extschema@.mark_running(p_id);
  RETURN true;
END;
$$;

CREATE FUNCTION @extschema@.claim_xact(p_id bigint) RETURNS boolean LANGUAGE sql AS $$
  SELECT pg_try_advisory_xact_lock(p_id)
$$;

SELECT pg_catalog.pg_extension_config_dump('@extschema@.jobs', '');
