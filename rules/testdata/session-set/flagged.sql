-- Session-level SETs: each outlives its transaction on the pooled server
-- connection. Default target: pgbouncer.

-- pg_dump preamble
SET statement_timeout = 0; -- want session-set:error
SET lock_timeout = 0; -- want session-set:error
SET idle_in_transaction_session_timeout = 0; -- want session-set:error
SET client_encoding = 'UTF8'; -- want session-set:info
SET standard_conforming_strings = on; -- want session-set:info
SELECT pg_catalog.set_config('search_path', '', false); -- want session-set:critical
SET check_function_bodies = false; -- want session-set:error
SET xmloption = content; -- want session-set:error
SET client_min_messages = warning; -- want session-set:error
SET row_security = off; -- want session-set:critical
SET default_tablespace = ''; -- want session-set:error
SET default_table_access_method = heap; -- want session-set:error

-- plain forms
SET work_mem = '256MB'; -- want session-set:error
SET work_mem TO '64MB'; -- want session-set:error
set Search_Path to myapp, public; -- want session-set:critical
SET SESSION statement_timeout = '5s'; -- want session-set:error
SET SESSION search_path TO tenant_42; -- want session-set:critical
SET "search_path" = "$user", public; -- want session-set:critical
SET SCHEMA 'reporting'; -- want session-set:critical
SET session_replication_role = replica; -- want session-set:critical
SET session_replication_role TO DEFAULT; -- want session-set:warning
SET app.tenant_id = '42'; -- want session-set:critical
SET "myapp.current_user_id" TO 7; -- want session-set:critical
SET enable_seqscan = off; -- want session-set:error
SET jit = off; -- want session-set:error
SET synchronous_commit TO OFF; -- want session-set:error
SET maintenance_work_mem = '1GB'; -- want session-set:error

-- parameters PgBouncer tracks per client: info behind pgbouncer
SET TIME ZONE 'UTC'; -- want session-set:info
SET TIME ZONE LOCAL; -- want session-set:info
SET timezone = 'Europe/Berlin'; -- want session-set:info
SET TimeZone TO 'UTC'; -- want session-set:info
SET NAMES 'UTF8'; -- want session-set:info
SET DateStyle = ISO, MDY; -- want session-set:info
SET datestyle TO 'ISO'; -- want session-set:info
SET IntervalStyle = 'postgres'; -- want session-set:info
SET application_name = 'nightly-report'; -- want session-set:info

-- back to defaults: the same as RESET
SET work_mem TO DEFAULT; -- want session-set:warning
SET statement_timeout = DEFAULT; -- want session-set:warning

-- RESET runs on whatever connection the transaction gets
RESET work_mem; -- want session-set:warning
RESET search_path; -- want session-set:warning
RESET ALL; -- want session-set:warning

-- session characteristics
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE; -- want session-set:error
SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; -- want session-set:error

-- UPDATE pg_settings is set_config(…, false)
UPDATE pg_settings SET setting = '30s' WHERE name = 'statement_timeout'; -- want session-set:error
UPDATE pg_catalog.pg_settings SET setting = 'myapp' WHERE name = 'search_path'; -- want session-set:critical

-- a SET inside BEGIN … COMMIT still outlives the COMMIT
BEGIN;
SET search_path = app; -- want session-set:critical
SET statement_timeout = '1min'; -- want session-set:error
INSERT INTO audit_log (message) VALUES ('SET ROLE admin');
COMMIT;

START TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SET LOCAL lock_timeout = '1s';
SET maintenance_work_mem = '2GB'; -- want session-set:error
END;
