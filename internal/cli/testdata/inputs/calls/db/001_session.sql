-- Helpers the application calls.
CREATE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'evil', false);
END
$$;

CREATE FUNCTION touch(id bigint) RETURNS void LANGUAGE sql AS $$
    UPDATE accounts SET seen_at = now() WHERE accounts.id = touch.id;
$$;

CREATE FUNCTION with_lock() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_lock(42);
    PERFORM sneaky();
END
$$;
