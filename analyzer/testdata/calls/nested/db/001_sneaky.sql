CREATE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'evil', false); -- want session-set
END
$$;

-- Calls of itself are not reported again.
CREATE FUNCTION rec(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    LISTEN jobs; -- want listen
    IF n > 0 THEN
        PERFORM rec(n - 1);
    END IF;
END
$$;
