-- target: rds-proxy
LISTEN job_created; -- want listen:warning
