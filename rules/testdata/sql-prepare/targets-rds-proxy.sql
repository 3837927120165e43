-- target: rds-proxy
PREPARE q AS SELECT 1; -- want sql-prepare:warning
