-- V3: application roles. Roles are cluster-wide, so create them only if
-- they are missing (another database on the cluster may have them).

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'billing_app') THEN
        CREATE ROLE billing_app NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'billing_readonly') THEN
        CREATE ROLE billing_readonly NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'billing_migrator') THEN
        EXECUTE 'CREATE ROLE billing_migrator NOLOGIN';
    END IF;
END
$$;

DO $do$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['billing_worker', 'billing_web'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('CREATE ROLE %I LOGIN IN ROLE billing_app', r);
        END IF;
    END LOOP;
END
$do$;

GRANT USAGE ON SCHEMA billing TO billing_readonly;
GRANT SELECT ON ALL TABLES IN SCHEMA billing TO billing_readonly;
ALTER DEFAULT PRIVILEGES IN SCHEMA billing GRANT SELECT ON TABLES TO billing_readonly;

-- Per-role defaults are stored in the catalog, not in the session: fine.
ALTER ROLE billing_app SET search_path = billing, public;
ALTER ROLE billing_app SET statement_timeout = '15s';
ALTER ROLE billing_readonly SET default_transaction_read_only = on;
ALTER ROLE billing_worker IN DATABASE billing SET work_mem = '64MB';

-- Ownership changes are done as the migrator role.
SET ROLE billing_migrator; -- want session-role:critical
ALTER TABLE billing.jobs OWNER TO billing_migrator;
ALTER TABLE billing.invoices OWNER TO billing_migrator;
RESET ROLE; -- want session-role:warning

-- Seed the scheduler lock row while replication triggers are off.
SET session_replication_role = replica; -- want session-set:critical
INSERT INTO billing.jobs (queue, job_class, args) VALUES ('cron', 'Billing::Scheduler', '[]');
SET session_replication_role = DEFAULT; -- want session-set:warning
