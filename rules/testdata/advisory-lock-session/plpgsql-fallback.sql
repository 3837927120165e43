-- libpg_query refuses to compile this body (r is not declared), so the
-- scanner falls back to parsing its pieces: commands, assignments and
-- IF/WHILE/RETURN expressions are still checked.
CREATE FUNCTION jobs.claim_all() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR r IN SELECT id FROM jobs.queue LOOP
    ok := pg_try_advisory_lock(r.id); -- want advisory-lock-session
    IF pg_try_advisory_lock(2) THEN -- want advisory-lock-session
      RAISE NOTICE 'claimed %', r.id;
    END IF;
    PERFORM pg_advisory_lock(3); -- want advisory-lock-session
    PERFORM pg_advisory_xact_lock(4);
  END LOOP;
END;
$$;
