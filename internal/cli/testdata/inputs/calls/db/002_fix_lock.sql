-- The lock is now released at the end of the caller's transaction.
CREATE OR REPLACE FUNCTION with_lock() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(42);
    PERFORM sneaky();
END
$$;
