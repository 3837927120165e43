-- target: pgpoolcheck
LISTEN job_created; -- want listen:warning
