-- PostgreSQL refuses to PREPARE TRANSACTION a transaction that operated
-- on temporary objects: the PREPARE fails and the transaction rolls back,
-- so the temporary objects it created are gone.
BEGIN;
CREATE TEMP TABLE tp_rows (id int);
INSERT INTO tp_rows VALUES (1);
PREPARE TRANSACTION 'tp_rows';

BEGIN;
CREATE VIEW pg_temp.tp_view AS SELECT 1 AS x;
CREATE SEQUENCE pg_temp.tp_seq;
PREPARE TRANSACTION 'tp_objects';

-- created outside the prepared transaction: still a finding
CREATE TEMP TABLE tp_outside (id int); -- want temp-table:error
BEGIN;
INSERT INTO tp_outside VALUES (1);
PREPARE TRANSACTION 'tp_outside';

-- COMMIT PREPARED and ROLLBACK PREPARED act on the prepared transaction,
-- not on the temporary table the session created before
CREATE TEMP TABLE tp_before (id int); -- want temp-table:error
COMMIT PREPARED 'tp_outside';
ROLLBACK PREPARED 'tp_rows';
