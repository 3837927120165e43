SELECT 1;
BEGIN;
SET LOCAL statement_timeout = '5s';
COMMIT;
