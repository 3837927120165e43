-- target: generic
SELECT pg_advisory_lock(42); -- want advisory-lock-session:error
SELECT pg_try_advisory_lock_shared(42); -- want advisory-lock-session:error
SELECT pg_advisory_unlock(42); -- want advisory-lock-session:info
