-- LOAD affects one server process only.
LOAD 'auto_explain'; -- want session-load:warning
LOAD '$libdir/plugins/auto_explain'; -- want session-load:warning
load 'pg_hint_plan'; -- want session-load:warning
BEGIN;
LOAD 'auto_explain'; -- want session-load:warning
SET LOCAL auto_explain.log_min_duration = 0;
COMMIT;

DO $$
BEGIN
  LOAD 'plpgsql_check'; -- want session-load:warning
END
$$;
