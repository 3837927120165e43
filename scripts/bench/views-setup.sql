-- Views for the view-heavy workload of scripts/bench-pooler.sh (SETUP_SQL):
-- a view over pgbench_accounts, a view that calls a plain SQL function, and
-- a table whose column default calls one.
CREATE OR REPLACE FUNCTION bench_bonus(b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT b / 100';
CREATE OR REPLACE VIEW bench_accounts AS SELECT aid, bid, abalance FROM pgbench_accounts;
CREATE OR REPLACE VIEW bench_bonus_v AS SELECT aid, abalance, bench_bonus(abalance) AS bonus FROM pgbench_accounts;
CREATE TABLE IF NOT EXISTS bench_log (aid int, tag text DEFAULT bench_bonus(7)::text);
