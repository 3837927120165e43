-- target: rds-proxy
-- RDS Proxy pins the client instead of leaking the lock: warnings.
SELECT pg_advisory_lock(42); -- want advisory-lock-session:warning
SELECT pg_try_advisory_lock(42); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock(42); -- want advisory-lock-session:info
SELECT pg_advisory_xact_lock(42);
