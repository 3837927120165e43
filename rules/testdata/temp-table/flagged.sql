-- Temporary objects live until the session ends.
CREATE TEMP TABLE import_rows (id bigint, payload jsonb); -- want temp-table:error
CREATE TEMPORARY TABLE staging (LIKE orders INCLUDING ALL); -- want temp-table:error
CREATE GLOBAL TEMPORARY TABLE gtt (id int); -- want temp-table:error
CREATE LOCAL TEMP TABLE ltt (id int); -- want temp-table:error
CREATE TEMP TABLE IF NOT EXISTS seen_ids (id bigint PRIMARY KEY); -- want temp-table:error
create temp table "Mixed Case" (id int); -- want temp-table:error
CREATE TEMP TABLE keep_rows (id int) ON COMMIT PRESERVE ROWS; -- want temp-table:error
CREATE TEMP TABLE new_users AS SELECT * FROM users WHERE created_at > now() - interval '1 day'; -- want temp-table:error
CREATE TEMPORARY TABLE ids AS (SELECT id FROM orders) WITH NO DATA; -- want temp-table:error
CREATE TEMP VIEW active_users AS SELECT * FROM users WHERE active; -- want temp-table:error
CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT 1 AS x; -- want temp-table:error
CREATE TEMP SEQUENCE batch_seq; -- want temp-table:error
CREATE TEMPORARY SEQUENCE IF NOT EXISTS row_seq START 100; -- want temp-table:error
SELECT * INTO TEMP old_orders FROM orders WHERE created_at < '2020-01-01'; -- want temp-table:error
SELECT id, email INTO TEMPORARY TABLE emails FROM users; -- want temp-table:error
SELECT 1 AS x INTO TEMP TABLE one_row; -- want temp-table:error
CREATE TABLE pg_temp.scratch (id int); -- want temp-table:error
CREATE VIEW pg_temp.v_scratch AS SELECT 1 AS x; -- want temp-table:error
CREATE SEQUENCE pg_temp.s_scratch; -- want temp-table:error
CREATE TABLE pg_temp.copy_of_users AS SELECT * FROM users; -- want temp-table:error
CREATE FUNCTION pg_temp.normalize_email(e text) RETURNS text LANGUAGE sql AS $$ SELECT lower(trim(e)) $$; -- want temp-table:error
CREATE OR REPLACE FUNCTION pg_temp.helper() RETURNS int AS 'SELECT 1' LANGUAGE sql; -- want temp-table:error

-- ON COMMIT DELETE ROWS keeps the table for the session, even in a transaction
CREATE TEMP TABLE scratch_rows (id int) ON COMMIT DELETE ROWS; -- want temp-table:error
BEGIN;
CREATE TEMP TABLE tx_rows (id int) ON COMMIT DELETE ROWS; -- want temp-table:error
INSERT INTO tx_rows VALUES (1);
COMMIT;

-- a plain temp table inside BEGIN … COMMIT outlives the COMMIT
BEGIN;
CREATE TEMP TABLE orders_to_fix AS SELECT id FROM orders WHERE total < 0; -- want temp-table:error
UPDATE orders SET total = 0 WHERE id IN (SELECT id FROM orders_to_fix);
COMMIT;

-- created and dropped in separate transactions: the DROP may run elsewhere
CREATE TEMP TABLE t_sep (id int); -- want temp-table:error
INSERT INTO t_sep VALUES (1);
DROP TABLE t_sep;

-- pg_temp objects inside routine bodies
CREATE FUNCTION app.load_batch() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS batch (id int); -- want temp-table:error
  INSERT INTO batch SELECT id FROM queue;
  EXECUTE 'CREATE TEMP TABLE batch2 (id int)'; -- want temp-table:error
END;
$$;

DO $$
BEGIN
  CREATE TEMPORARY TABLE tmp_migrate AS SELECT * FROM legacy; -- want temp-table:error
END
$$;

-- the temporary schema under its real name
CREATE TABLE pg_temp_3.by_real_name (id int); -- want temp-table:error

-- a DROP of another schema's table of the same name leaves the temporary one
BEGIN;
CREATE TEMP TABLE shadowed (id int); -- want temp-table:error
DROP TABLE public.shadowed;
COMMIT;
