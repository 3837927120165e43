-- Not temporary, or dropped at the COMMIT of the transaction that made it.
BEGIN;
CREATE TEMP TABLE tmp_ids (id bigint) ON COMMIT DROP;
INSERT INTO tmp_ids SELECT id FROM orders WHERE status = 'stale';
DELETE FROM orders WHERE id IN (SELECT id FROM tmp_ids);
COMMIT;

START TRANSACTION;
CREATE TEMPORARY TABLE tmp_totals ON COMMIT DROP AS SELECT customer_id, sum(total) FROM orders GROUP BY 1;
SELECT * FROM tmp_totals;
END;

BEGIN;
SELECT * INTO TEMP TABLE tmp_copy FROM orders;
DROP TABLE tmp_copy;
COMMIT;

BEGIN;
CREATE TEMP TABLE tmp_a (id int);
CREATE TEMP VIEW tmp_v AS SELECT * FROM tmp_a;
DROP VIEW tmp_v;
DROP TABLE IF EXISTS tmp_a;
COMMIT;

-- ON COMMIT DROP also in autocommit: the table is gone when the statement ends
CREATE TEMP TABLE tmp_gone (id int) ON COMMIT DROP;

-- regular and unlogged tables, drops
CREATE UNLOGGED TABLE cache_entries (key text PRIMARY KEY, value jsonb);
CREATE TABLE temp (id int);
CREATE TABLE temporary_files (path text);
CREATE TABLE app.tmp (id int);
CREATE TABLE "pg_temp_backup".t (id int);
DROP TABLE IF EXISTS tmp_import;
DROP TABLE pg_temp.scratch;
CREATE VIEW temp_readings AS SELECT * FROM readings WHERE kind = 'temp';
SELECT temp, temporary FROM sensors;
SELECT count(*) INTO total_count FROM orders;
CREATE SEQUENCE temp_seq;
SELECT 'CREATE TEMP TABLE x (id int)' AS sql_text;
-- CREATE TEMP TABLE in a comment

-- functions that clean up after themselves run in one transaction
CREATE FUNCTION app.dedupe() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  temp_count int;
BEGIN
  CREATE TEMP TABLE dupes ON COMMIT DROP AS SELECT email FROM users GROUP BY email HAVING count(*) > 1;
  SELECT count(*) INTO temp_count FROM dupes;
  CREATE TEMP TABLE work_rows (id int);
  INSERT INTO work_rows SELECT 1;
  DROP TABLE work_rows;
END;
$$;

-- rolled back: the temporary table is dropped with the transaction
BEGIN;
CREATE TEMP TABLE tmp_try (id int);
INSERT INTO tmp_try VALUES (1);
ROLLBACK;

BEGIN;
SELECT * INTO TEMP tmp_abort FROM orders;
ABORT;

-- a temporary function or type dropped in the transaction that made it
BEGIN;
CREATE FUNCTION pg_temp.one() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE TYPE pg_temp.pair AS (a int, b int);
DROP FUNCTION pg_temp.one();
DROP TYPE pair;
COMMIT;
