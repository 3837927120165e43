CREATE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'evil', false); -- want session-set
END
$$;

CREATE FUNCTION public.lock_it() RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_lock(777); -- want advisory-lock-session
$$;

-- Nothing of this one outlives its transaction: calls of it are fine.
CREATE FUNCTION harmless(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(n);
    RETURN n + 1;
END
$$;
