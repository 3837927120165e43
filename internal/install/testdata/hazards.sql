SET search_path = app;
SELECT pg_advisory_lock(42);
LISTEN jobs;
