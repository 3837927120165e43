SELECT sneaky(); -- want session-set
CALL refresh_all();
SELECT harmless(1), count(*) FROM pg_class;
SELECT lock_it(); -- want advisory-lock-session
SELECT public.lock_it(); -- want advisory-lock-session
SELECT other.lock_it();
BEGIN;
SELECT 1 FROM users WHERE id = sneaky_id();
SELECT sneaky(); -- want session-set
COMMIT;
