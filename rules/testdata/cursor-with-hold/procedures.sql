-- A WITH HOLD cursor declared in a procedure survives the procedure's own
-- COMMIT; an error in a later transaction of the call skips the CLOSE.
CREATE PROCEDURE app.export_batches() LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE 'DECLARE export_cur CURSOR WITH HOLD FOR SELECT id FROM orders'; -- want cursor-with-hold:warning
  COMMIT;
  LOOP
    EXECUTE 'MOVE FORWARD 1000 IN export_cur';
    GET DIAGNOSTICS n = ROW_COUNT;
    EXIT WHEN n = 0;
    INSERT INTO progress VALUES (now());
    COMMIT;
  END LOOP;
  EXECUTE 'CLOSE export_cur';
END;
$$;

-- never closed: it stays with the server connection after the call
CREATE PROCEDURE app.open_export() LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'DECLARE open_cur CURSOR WITH HOLD FOR SELECT 1'; -- want cursor-with-hold:error
  COMMIT;
END;
$$;

-- closed before the COMMIT: nothing outlives the transaction
CREATE PROCEDURE app.short_export() LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'DECLARE short_cur CURSOR WITH HOLD FOR SELECT 1';
  EXECUTE 'CLOSE ALL';
  COMMIT;
END;
$$;

-- a function has no transaction control: closed in the same transaction
CREATE FUNCTION app.fn_export() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'DECLARE fn_cur CURSOR WITH HOLD FOR SELECT 1';
  EXECUTE 'CLOSE fn_cur';
END;
$$;
