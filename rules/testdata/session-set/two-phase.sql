-- SET survives PREPARE TRANSACTION (it acts like COMMIT for parameters),
-- unlike temporary tables, WITH HOLD cursors and LISTEN.
BEGIN;
SET statement_timeout = '5s'; -- want session-set:error
UPDATE accounts SET balance = balance - 10 WHERE id = 1;
PREPARE TRANSACTION 'tp_set';
