-- target: pgdog
SELECT pg_advisory_lock(42); -- want advisory-lock-session:warning
BEGIN;
SELECT pg_advisory_lock(43); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock(43);
COMMIT;
SELECT pg_advisory_unlock(42); -- want advisory-lock-session:info
