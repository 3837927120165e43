-- Locks taken in routine bodies are taken when the routine is called.
CREATE OR REPLACE FUNCTION app.run_exclusive(job bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  got boolean;
BEGIN
  got := pg_try_advisory_lock(job); -- want advisory-lock-session:error
  IF NOT got THEN
    RETURN false;
  END IF;
  IF pg_try_advisory_lock(job + 1) THEN -- want advisory-lock-session:error
    RAISE NOTICE 'second lock';
  END IF;
  PERFORM pg_advisory_lock_shared(1); -- want advisory-lock-session:error
  RETURN true;
END;
$$;

-- lock and unlock in one body: warning
CREATE FUNCTION app.refresh_stats() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(1001); -- want advisory-lock-session:warning
  BEGIN
    REFRESH MATERIALIZED VIEW stats;
  EXCEPTION WHEN others THEN
    PERFORM pg_advisory_unlock(1001);
    RAISE;
  END;
  PERFORM pg_advisory_unlock(1001);
END;
$$;

DO $$
BEGIN
  IF NOT pg_try_advisory_lock(hashtext('seed')) THEN -- want advisory-lock-session:error
    RAISE EXCEPTION 'seed already running';
  END IF;
  FOR i IN 1..10 LOOP
    INSERT INTO seeds VALUES (i);
  END LOOP;
END
$$;

CREATE FUNCTION app.lock_sql(k bigint) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_lock(k); -- want advisory-lock-session:error
$$;

CREATE FUNCTION app.lock_quoted(k bigint) RETURNS boolean LANGUAGE sql AS
'SELECT pg_try_advisory_lock(k)'; -- want advisory-lock-session:error

CREATE FUNCTION app.lock_atomic(k bigint) RETURNS boolean LANGUAGE sql
BEGIN ATOMIC
  SELECT pg_try_advisory_lock(k); -- want advisory-lock-session:error
END;

CREATE PROCEDURE app.unlock_all() LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_unlock_all(); -- want advisory-lock-session:info
END;
$$;

-- EXECUTE of a literal runs that SQL
CREATE FUNCTION app.dyn() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'SELECT pg_advisory_lock(5)'; -- want advisory-lock-session:error
END;
$$;

-- undeclared loop variable: the fallback path
CREATE FUNCTION app.lock_each() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR r IN SELECT id FROM accounts LOOP
    PERFORM pg_advisory_lock(r.id); -- want advisory-lock-session:error
  END LOOP;
END;
$$;

-- trigger function
CREATE FUNCTION app.serialize_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(NEW.account_id);
  PERFORM pg_advisory_lock(NEW.account_id); -- want advisory-lock-session:error
  RETURN NEW;
END;
$$;
