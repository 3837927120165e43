-- Pairing inside explicit transactions.

-- lock and unlock in one transaction: works, but an error before the
-- unlock leaves the lock behind: warning; the unlock is no finding
BEGIN;
SELECT pg_advisory_lock(42); -- want advisory-lock-session:warning
UPDATE counters SET n = n + 1 WHERE id = 1;
SELECT pg_advisory_unlock(42);
COMMIT;

START TRANSACTION;
SELECT pg_try_advisory_lock(7, 1); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock(7, 1);
END;

BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT pg_advisory_lock_shared(5); -- want advisory-lock-session:warning
SELECT pg_advisory_lock(6); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock_all();
ROLLBACK;

-- an unlock with a non-constant key may release any earlier lock
BEGIN;
SELECT pg_advisory_lock(hashtext('import')); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock(hashtext('import'));
COMMIT;

-- a different key releases nothing
BEGIN;
SELECT pg_advisory_lock(1); -- want advisory-lock-session:error
SELECT pg_advisory_unlock(2); -- want advisory-lock-session:info
ABORT;

-- lock in one transaction, unlock after the COMMIT: error + info
BEGIN;
SELECT pg_advisory_lock(99); -- want advisory-lock-session:error
INSERT INTO imports (started_at) VALUES (now());
COMMIT;
SELECT pg_advisory_unlock(99); -- want advisory-lock-session:info

-- an unlock before the lock releases nothing
BEGIN;
SELECT pg_advisory_unlock(3); -- want advisory-lock-session:info
SELECT pg_advisory_lock(3); -- want advisory-lock-session:error
COMMIT;

-- a savepoint does not end the transaction
BEGIN;
SAVEPOINT before_lock;
SELECT pg_advisory_lock(11); -- want advisory-lock-session:warning
ROLLBACK TO SAVEPOINT before_lock;
SELECT pg_advisory_unlock(11);
RELEASE SAVEPOINT before_lock;
COMMIT;

-- COMMIT AND CHAIN starts a new transaction
BEGIN;
SELECT pg_advisory_lock(12); -- want advisory-lock-session:error
COMMIT AND CHAIN;
SELECT pg_advisory_unlock(12); -- want advisory-lock-session:info
COMMIT;

-- autocommit statements are separate transactions
SELECT pg_advisory_lock(13); -- want advisory-lock-session:error
SELECT pg_advisory_unlock(13); -- want advisory-lock-session:info

-- locks stack: one unlock releases the later of two locks of a key
BEGIN;
SELECT pg_advisory_lock(21); -- want advisory-lock-session:error
SELECT pg_advisory_lock(21); -- want advisory-lock-session:warning
SELECT pg_advisory_unlock(21);
COMMIT;

-- an exclusive unlock does not release a shared lock
BEGIN;
SELECT pg_advisory_lock_shared(22); -- want advisory-lock-session:error
SELECT pg_advisory_unlock(22); -- want advisory-lock-session:info
COMMIT;
