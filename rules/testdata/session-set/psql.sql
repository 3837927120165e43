\set ON_ERROR_STOP on
\set tenant 42
\echo 'seeding tenant' :tenant
\connect app_test
\c app_test postgres
\i setup/common.sql
\ir ../helpers.sql
SET search_path = :"schema", public; -- want session-set:critical
SELECT set_config('app.tenant_id', :'tenant', false); -- want session-set:critical
SELECT set_config('app.tenant_id', :'tenant', true);
SET statement_timeout = :timeout; -- want session-set:error
SELECT format('SET work_mem = %L', '64MB') \gexec
SELECT count(*) FROM orders WHERE tenant_id = :tenant \gset
\if :is_ci
  SET client_min_messages = warning; -- want session-set:error
\endif
SELECT 'SET search_path = x' \g /dev/null
COPY orders FROM STDIN WITH (FORMAT csv);
1,SET search_path = evil
2,LISTEN x
\.
SET lock_timeout = '2s'; -- want session-set:error
