-- target: pgpoolcheck
SELECT pg_try_advisory_lock(42); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock_all(); -- want advisory-lock-session:info
