CREATE PROCEDURE archive_orders() LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(42);
  EXECUTE 'DECLARE old_orders CURSOR WITH HOLD FOR SELECT id FROM orders WHERE created < now() - interval ''1 year''';
  FOR i IN 1..100 LOOP
    EXECUTE 'MOVE FORWARD 1000 IN old_orders';
    INSERT INTO archive_log VALUES (now());
    COMMIT;
  END LOOP;
  EXECUTE 'CLOSE old_orders';
  PERFORM pg_advisory_unlock(42);
END;
$$;

CREATE FUNCTION prepare_session() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'SET search_path = app, public; LISTEN jobs';
END;
$$;
