-- PREPARE TRANSACTION refuses a transaction that declared a WITH HOLD
-- cursor: the transaction rolls back and the cursor is gone.
BEGIN;
DECLARE tp_cur CURSOR WITH HOLD FOR SELECT id FROM orders;
FETCH 10 FROM tp_cur;
PREPARE TRANSACTION 'tp_cursor';

-- COMMIT keeps it
BEGIN;
DECLARE kept_cur CURSOR WITH HOLD FOR SELECT id FROM orders; -- want cursor-with-hold:error
COMMIT;
