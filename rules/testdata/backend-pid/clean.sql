-- Other processes' pids, and look-alikes.
SELECT pid, state, query FROM pg_stat_activity WHERE datname = 'app';
SELECT pg_cancel_backend(12345);
SELECT pg_blocking_pids(12345);
SELECT inet_server_addr(), inet_server_port();
SELECT 'pg_backend_pid()' AS how;
-- SELECT pg_backend_pid();
CREATE TABLE sessions (pg_backend_pid int, client_addr inet);
SELECT pg_backend_pid FROM sessions;
SELECT app.pg_backend_pid();
-- Test-suite reset scripts kick everyone else off the database: the
-- statement leaves out its own backend, whichever it is.
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid();
SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid != pg_catalog.pg_backend_pid()::int;
