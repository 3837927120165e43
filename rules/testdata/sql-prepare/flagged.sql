-- SQL-level prepared statements live on the server connection.
PREPARE get_user (bigint) AS SELECT * FROM users WHERE id = $1; -- want sql-prepare:error
PREPARE ins_event AS INSERT INTO events (kind) VALUES ($1); -- want sql-prepare:error
prepare "Upper" as select 1; -- want sql-prepare:error
EXECUTE get_user(42); -- want sql-prepare:error
EXECUTE ins_event('login'); -- want sql-prepare:error
EXPLAIN EXECUTE get_user(1); -- want sql-prepare:error
EXPLAIN ANALYZE EXECUTE get_user(1); -- want sql-prepare:error
EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE get_user(2); -- want sql-prepare:error
CREATE TABLE user_snapshot AS EXECUTE get_user(42); -- want sql-prepare:error
CREATE TEMP TABLE tmp_user AS EXECUTE get_user(42); -- want sql-prepare:error temp-table:error
DEALLOCATE get_user; -- want sql-prepare:error
DEALLOCATE PREPARE ins_event; -- want sql-prepare:error
DEALLOCATE ALL; -- want sql-prepare:info
DEALLOCATE PREPARE ALL; -- want sql-prepare:info

-- prepared in a transaction: PREPARE outlives COMMIT and ROLLBACK
BEGIN;
PREPARE q1 AS SELECT count(*) FROM orders WHERE status = $1; -- want sql-prepare:error
EXECUTE q1('open');
COMMIT;
EXECUTE q1('closed'); -- want sql-prepare:error

-- pgTAP style: the prepared statement survives the ROLLBACK
BEGIN;
SELECT plan(1);
PREPARE expected AS VALUES (1); -- want sql-prepare:error
SELECT results_eq('SELECT 1', 'expected');
SELECT * FROM finish();
ROLLBACK;

-- EXECUTE of a statement prepared in another transaction
BEGIN;
EXECUTE q2; -- want sql-prepare:error
COMMIT;

-- LANGUAGE sql bodies
CREATE FUNCTION app.run_prepared() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'PREPARE fn_q AS SELECT 1'; -- want sql-prepare:error
END;
$$;

-- autocommit statements are separate transactions
PREPARE auto_q AS SELECT 1; -- want sql-prepare
EXECUTE auto_q; -- want sql-prepare
