-- target: rds-proxy
SET ROLE admin; -- want session-role:warning
SELECT set_config('role', 'admin', false); -- want session-role:warning
SET LOCAL ROLE admin;
