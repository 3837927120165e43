-- target: generic
SET ROLE admin; -- want session-role:critical
SET SESSION AUTHORIZATION alice; -- want session-role:critical
RESET ROLE; -- want session-role:warning
