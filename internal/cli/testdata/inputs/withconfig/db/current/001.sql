SET TIME ZONE 'UTC';
LOAD 'auto_explain';
SELECT pg_backend_pid();
