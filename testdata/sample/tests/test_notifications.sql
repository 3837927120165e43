-- Integration test for job notifications and query plans.
-- Run by the CI job with psql against the pooled test database.

\set ON_ERROR_STOP 1

-- Log plans of slow statements while the test runs.
LOAD 'auto_explain'; -- want session-load:warning
SET auto_explain.log_min_duration = 0; -- want session-set:critical
SET auto_explain.log_analyze = true; -- want session-set:critical
SET auto_explain.log_nested_statements TO on; -- want session-set:critical

-- Subscribe, enqueue, and expect the notification.
LISTEN billing_jobs; -- want listen:error
LISTEN "billing_jobs:cron"; -- want listen:error

BEGIN;
SELECT plan(4);

INSERT INTO billing.jobs (queue, job_class, args)
VALUES ('default', 'Billing::SendInvoice', '[42]')
RETURNING id;

SELECT ok(
    EXISTS (SELECT 1 FROM billing.jobs WHERE job_class = 'Billing::SendInvoice'),
    'job was enqueued'
);

NOTIFY billing_jobs, '{"id":0,"queue":"test"}';
SELECT pg_notify('billing_jobs:cron', 'tick');

SELECT is(
    (SELECT count(*) FROM pg_listening_channels() WHERE pg_listening_channels = 'billing_jobs'),
    1::bigint,
    'session is listening on billing_jobs'
);

-- The worker locks the job; the test checks that the lock is visible.
SELECT ok(
    pg_try_advisory_lock(id), -- want advisory-lock-session:warning
    'job lock acquired'
) FROM billing.jobs WHERE job_class = 'Billing::SendInvoice';

SELECT is(
    (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), -- want backend-pid:info
    1::bigint,
    'one advisory lock held by this backend'
);

SELECT pg_advisory_unlock_all();

SELECT * FROM finish();
ROLLBACK;

UNLISTEN "billing_jobs:cron"; -- want listen:info
UNLISTEN *; -- want listen:info

-- Leave the connection as we found it.
-- pgpoolcheck:ignore discard test harness resets its own dedicated connection
DISCARD ALL;
DISCARD PLANS; -- want discard:info
DISCARD SEQUENCES; -- want discard:info
