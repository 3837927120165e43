-- Dynamic SQL in PL/pgSQL: EXECUTE of a literal, of literals joined to
-- run-time values, and of format() with a constant format string.
CREATE FUNCTION app.subscribe(p_channel text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'LISTEN ' || quote_ident(p_channel); -- want listen
  EXECUTE format('LISTEN %I', p_channel || '_events'); -- want listen
  EXECUTE format('NOTIFY %I', p_channel);
  EXECUTE 'SELECT ' || quote_literal(p_channel);
  EXECUTE p_channel;
END;
$$;
