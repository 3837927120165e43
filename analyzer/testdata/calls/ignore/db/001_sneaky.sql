CREATE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'evil', false); -- want session-set
END
$$;

CREATE FUNCTION both_ways() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('work_mem', '1GB', false); -- want session-set
    LISTEN jobs; -- want listen
END
$$;
