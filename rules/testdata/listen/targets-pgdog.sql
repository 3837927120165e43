-- target: pgdog
-- PgDog relays LISTEN for its clients.
LISTEN job_created; -- want listen:info
UNLISTEN job_created; -- want listen:info
