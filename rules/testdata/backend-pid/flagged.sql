-- Backend identity changes between transactions.
SELECT pg_backend_pid(); -- want backend-pid:info
SELECT pg_catalog.pg_backend_pid() AS pid; -- want backend-pid:info
SELECT inet_client_addr(), inet_client_port(); -- want backend-pid backend-pid

SELECT locktype, objid FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'; -- want backend-pid:info
SELECT * FROM pg_stat_activity WHERE pid = pg_backend_pid(); -- want backend-pid:info
INSERT INTO worker_heartbeats (pid, host) VALUES (pg_backend_pid(), inet_client_addr()); -- want backend-pid backend-pid
SELECT CASE WHEN pg_backend_pid() % 2 = 0 THEN 'even' END; -- want backend-pid

CREATE FUNCTION app.whoami() RETURNS int LANGUAGE sql AS $$
  SELECT pg_backend_pid(); -- want backend-pid:info
$$;
