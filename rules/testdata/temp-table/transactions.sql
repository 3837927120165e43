-- Transaction context for temporary objects.

-- DISCARD TEMP in the same transaction drops every temporary table
BEGIN;
CREATE TEMP TABLE tmp_x (id int);
DISCARD TEMP; -- want discard:info
COMMIT;

-- dropped in a later transaction: the DROP may run on another connection
BEGIN;
CREATE TEMP TABLE tmp_y (id int); -- want temp-table:error
COMMIT;
BEGIN;
DROP TABLE tmp_y;
COMMIT;

-- dropping another table does not help
BEGIN;
CREATE TEMP TABLE tmp_z (id int); -- want temp-table:error
DROP TABLE tmp_other;
COMMIT;

-- ON COMMIT DROP with COMMIT AND CHAIN: dropped at the first COMMIT
BEGIN;
CREATE TEMP TABLE tmp_chain (id int) ON COMMIT DROP;
COMMIT AND CHAIN;
CREATE TEMP TABLE tmp_chain2 (id int); -- want temp-table:error
COMMIT;

-- ROLLBACK TO SAVEPOINT undoes only what came after the savepoint
BEGIN;
CREATE TEMP TABLE tmp_before (id int); -- want temp-table:error
SAVEPOINT a;
CREATE TEMP TABLE tmp_sp (id int);
ROLLBACK TO a;
RELEASE SAVEPOINT a;
COMMIT;

-- a DROP that ROLLBACK TO undoes drops nothing
BEGIN;
CREATE TEMP TABLE tmp_kept (id int); -- want temp-table:error
SAVEPOINT b;
DROP TABLE tmp_kept;
ROLLBACK TO b;
COMMIT;
