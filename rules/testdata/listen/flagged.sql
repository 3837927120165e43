-- LISTEN registers the server connection.
LISTEN job_created; -- want listen:error
LISTEN "graphile_worker:jobs"; -- want listen:error
listen river_insert; -- want listen:error
LISTEN "que_listener_1"; -- want listen:error

BEGIN;
LISTEN orders; -- want listen:error
COMMIT;

-- UNLISTEN runs on whatever connection this transaction gets
UNLISTEN job_created; -- want listen:info
UNLISTEN *; -- want listen:info

-- in routine bodies
CREATE FUNCTION app.subscribe() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LISTEN cache_invalidation; -- want listen:error
  EXECUTE 'LISTEN ' || quote_ident('dynamic_channel'); -- want listen:error
END;
$$;

DO $$
BEGIN
  EXECUTE 'LISTEN config_changed'; -- want listen:error
END
$$;

-- UNLISTEN of another channel, or before the LISTEN, cancels nothing
BEGIN;
LISTEN keep_me; -- want listen:error
UNLISTEN other; -- want listen:info
COMMIT;

BEGIN;
UNLISTEN *; -- want listen:info
LISTEN after_unlisten; -- want listen:error
COMMIT;

-- RELEASE SAVEPOINT keeps what came after the savepoint
BEGIN;
SAVEPOINT s;
LISTEN still_active; -- want listen:error
RELEASE SAVEPOINT s;
COMMIT;
