-- target: rds-proxy
DECLARE c CURSOR WITH HOLD FOR SELECT 1; -- want cursor-with-hold:warning
