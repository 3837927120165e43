-- target: rds-proxy
SELECT pg_backend_pid(); -- want backend-pid:info
