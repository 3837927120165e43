-- The fix: the setting lasts until the end of the caller's transaction.
CREATE OR REPLACE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'evil', true);
END
$$;
