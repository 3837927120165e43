-- Preloading through configuration, and look-alikes.
ALTER ROLE app_user SET session_preload_libraries = 'auto_explain';
ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements';
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
COPY orders FROM '/tmp/load.csv' WITH (FORMAT csv);
SELECT 'LOAD ''auto_explain''' AS sql_text;
-- LOAD 'auto_explain';
CREATE TABLE loads (load numeric, loaded_at timestamptz);
SELECT load FROM loads;
