-- EXECUTE of a literal that holds several statements runs all of them.
CREATE FUNCTION app.prepare_session() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'SET search_path = app, public; LISTEN jobs'; -- want session-set listen
  EXECUTE 'NOTIFY jobs; LISTEN ' || quote_ident('done') || '; UNLISTEN old_jobs'; -- want listen listen:info
END;
$$;

-- a body that PL/pgSQL cannot compile (undeclared variable) is read
-- piece by piece; the SQL text of EXECUTE is read all the same
CREATE FUNCTION app.prepare_loose() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR r IN SELECT name FROM channels LOOP
    EXECUTE 'LISTEN a; LISTEN b'; -- want listen listen
  END LOOP;
  EXECUTE 'SELECT 1; SET work_mem = ''64MB''' INTO missing_var; -- want session-set
  EXECUTE format('LISTEN %I', r.name) USING r; -- want listen
  undeclared := 1;
END;
$$;
