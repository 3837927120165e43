-- target: generic
LISTEN job_created; -- want listen:error
UNLISTEN *; -- want listen:info
