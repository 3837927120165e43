-- Transaction context for SET.

-- a SET reset in an earlier or later transaction is still a finding
BEGIN;
SET statement_timeout = 0; -- want session-set:error
COMMIT;
RESET statement_timeout; -- want session-set:warning

-- RESET before SET in one transaction
BEGIN;
RESET work_mem; -- want session-set:warning
SET work_mem = '1GB'; -- want session-set:error
COMMIT;

-- a different parameter is not reset
BEGIN;
SET work_mem = '1GB'; -- want session-set:error
RESET statement_timeout; -- want session-set:warning
COMMIT;

-- RESET ALL does not reset the role
BEGIN;
SET ROLE admin; -- want session-role:critical
RESET ALL; -- want session-set:warning
COMMIT;

-- ROLLBACK TO SAVEPOINT undoes only what came after the savepoint
BEGIN;
SET work_mem = '8MB'; -- want session-set:error
SAVEPOINT s1;
SET search_path = tenant_5;
ROLLBACK TO SAVEPOINT s1;
SET statement_timeout = '1s'; -- want session-set:error
COMMIT;

-- COMMIT AND CHAIN ends the transaction that made the SET
BEGIN;
SET work_mem = '512MB'; -- want session-set:error
COMMIT AND CHAIN;
RESET work_mem; -- want session-set:warning
COMMIT;

-- a transaction left open at the end of the file
BEGIN;
SET lock_timeout = '5s'; -- want session-set:error

-- A RESET that a ROLLBACK TO SAVEPOINT undoes does not pair with the SET.
BEGIN;
SET work_mem = '256MB'; -- want session-set:error
SAVEPOINT before_reset;
RESET work_mem;
ROLLBACK TO SAVEPOINT before_reset;
COMMIT;
