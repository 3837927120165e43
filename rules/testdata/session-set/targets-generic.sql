-- target: generic
-- Nothing is repaired: the tracked parameters are errors too.
SET client_encoding = 'UTF8'; -- want session-set:error
SET NAMES 'LATIN1'; -- want session-set:error
SET TIME ZONE 'America/New_York'; -- want session-set:error
SET DateStyle TO ISO, DMY; -- want session-set:error
SET IntervalStyle = iso_8601; -- want session-set:error
SET standard_conforming_strings = off; -- want session-set:error
SET application_name = 'api'; -- want session-set:error
SELECT set_config('application_name', 'api', false); -- want session-set:error
SET work_mem = '64MB'; -- want session-set:error
SET search_path = tenant_1; -- want session-set:critical
SELECT set_config('app.tenant_id', '1', false); -- want session-set:critical
RESET timezone; -- want session-set:warning
SET LOCAL TIME ZONE 'UTC';
