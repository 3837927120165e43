-- target: generic
SELECT pg_backend_pid(); -- want backend-pid:info
