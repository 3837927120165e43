-- The transaction_* parameters apply to the current transaction only:
-- SET transaction_read_only = on is SET TRANSACTION READ ONLY.
BEGIN;
SET transaction_read_only TO on;
SET transaction_isolation = 'serializable';
SET transaction_deferrable = on;
COMMIT;
SET transaction_read_only TO off;
RESET transaction_isolation;
