-- target: pgpoolcheck
PREPARE q AS SELECT 1; -- want sql-prepare:warning
EXECUTE q; -- want sql-prepare:warning
