-- A procedure that commits keeps its server connection for the whole CALL,
-- so the unlock after its COMMITs normally lands (a warning, with its own
-- message); an error in a later transaction ends the call before it, and
-- a block with an exception handler cannot COMMIT.
CREATE PROCEDURE app.backfill() LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(42); -- want advisory-lock-session:warning
  FOR i IN 1..100 LOOP
    UPDATE accounts SET migrated = true WHERE id % 100 = i;
    COMMIT;
  END LOOP;
  PERFORM pg_advisory_unlock(42);
END;
$$;

-- ROLLBACK does not release a session-level lock either
CREATE PROCEDURE app.retry_batch() LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_lock(7) THEN -- want advisory-lock-session:warning
    RETURN;
  END IF;
  DELETE FROM queue WHERE done;
  ROLLBACK;
  PERFORM pg_advisory_unlock_all();
END;
$$;

-- released before the COMMIT: held within one transaction (warning, the
-- message of one transaction)
CREATE PROCEDURE app.step() LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(9); -- want advisory-lock-session:warning
  UPDATE counters SET n = n + 1;
  PERFORM pg_advisory_unlock(9);
  COMMIT;
  PERFORM pg_advisory_xact_lock(9);
  UPDATE counters SET n = n + 1;
  COMMIT;
END;
$$;

-- a second lock taken after the COMMIT is released before the next one
CREATE PROCEDURE app.two_phases() LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(1); -- want advisory-lock-session:warning
  COMMIT;
  PERFORM pg_advisory_lock(2); -- want advisory-lock-session:warning
  PERFORM pg_advisory_unlock(2);
  COMMIT;
  PERFORM pg_advisory_unlock(1);
END;
$$;

-- in a top-level transaction the COMMIT ends the group: unchanged
BEGIN;
SELECT pg_advisory_lock(3); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock(3);
COMMIT;
