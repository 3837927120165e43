-- Housekeeping procedures run by pg_cron and by the ops CLI.

-- Purge old events in batches, committing after each batch so the
-- transaction stays short. A transaction-level lock would be released by
-- the first COMMIT, so the procedure takes a session lock and releases it
-- at the end (but not when a batch fails, hence a warning: the whole CALL
-- keeps one server connection, so the unlock normally lands).
CREATE OR REPLACE PROCEDURE ops.purge_events(p_keep interval, p_batch int DEFAULT 10000)
LANGUAGE plpgsql
AS $$
DECLARE
    v_deleted int;
BEGIN
    IF NOT pg_try_advisory_lock(hashtext('ops.purge_events')) THEN -- want advisory-lock-session:warning
        RAISE NOTICE 'purge already running';
        RETURN;
    END IF;
    LOOP
        DELETE FROM ops.events
        WHERE id IN (
            SELECT id FROM ops.events
            WHERE created_at < now() - p_keep
            ORDER BY id
            LIMIT p_batch
        );
        GET DIAGNOSTICS v_deleted = ROW_COUNT;
        COMMIT;
        EXIT WHEN v_deleted < p_batch;
    END LOOP;
    PERFORM pg_advisory_unlock(hashtext('ops.purge_events'));
END;
$$;

-- Same job, one transaction per call, transaction-level lock: safe.
CREATE OR REPLACE PROCEDURE ops.purge_events_once(p_keep interval)
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('ops.purge_events'));
    DELETE FROM ops.events WHERE created_at < now() - p_keep;
END;
$$;

-- Refresh the materialized views one by one with more sort memory. The
-- CALL keeps one server connection and RESETs at the end, so the pair is
-- clean (if a refresh fails, the committed SET stays: keep it SET LOCAL).
CREATE OR REPLACE PROCEDURE ops.refresh_views()
LANGUAGE plpgsql
AS $$
DECLARE
    v_view regclass;
BEGIN
    SET work_mem = '512MB';
    FOR v_view IN
        SELECT c.oid::regclass
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'm' AND n.nspname = 'reporting'
    LOOP
        EXECUTE format('REFRESH MATERIALIZED VIEW CONCURRENTLY %s', v_view);
        COMMIT;
    END LOOP;
    RESET work_mem;
END;
$$;

-- Rebuilds the per-tenant counters using a scratch table. The temp table
-- stays in the server session after the call returns.
CREATE OR REPLACE FUNCTION ops.rebuild_counters() RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_rows integer;
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS counter_scratch ( -- want temp-table:error
        tenant_id bigint PRIMARY KEY,
        documents bigint NOT NULL
    );
    TRUNCATE counter_scratch;
    INSERT INTO counter_scratch
    SELECT tenant_id, count(*) FROM app.documents GROUP BY tenant_id;
    UPDATE app.tenant_counters tc
       SET documents = cs.documents
      FROM counter_scratch cs
     WHERE cs.tenant_id = tc.tenant_id;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END;
$$;

-- Dynamic SQL via EXECUTE is not a prepared statement.
CREATE OR REPLACE FUNCTION ops.table_sizes(p_schema text)
RETURNS TABLE (table_name text, total_bytes bigint)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = p_schema LOOP
        table_name := r.tablename;
        EXECUTE 'SELECT pg_total_relation_size($1)' INTO total_bytes USING format('%I.%I', p_schema, r.tablename);
        RETURN NEXT;
    END LOOP;
END;
$$;

-- Who is holding the queue? Used by the ops dashboard.
CREATE OR REPLACE FUNCTION ops.my_connection() RETURNS TABLE (pid int, addr inet, port int)
LANGUAGE sql STABLE
AS $$
    SELECT pg_backend_pid(), inet_client_addr(), inet_client_port(); -- want backend-pid:info backend-pid:info backend-pid:info
$$;

CALL ops.purge_events(interval '90 days'); -- want advisory-lock-session:warning
CALL ops.refresh_views();

-- Two-phase commit for the cross-database ledger transfer: this is not
-- a prepared statement.
BEGIN;
UPDATE ops.transfers SET state = 'prepared' WHERE id = 77;
PREPARE TRANSACTION 'transfer-77';
COMMIT PREPARED 'transfer-77';
