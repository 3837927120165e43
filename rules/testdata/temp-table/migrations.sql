--liquibase formatted sql
--changeset alice:42-backfill
-- Deploy shop:backfill_totals to pg (sqitch)
BEGIN;
CREATE TEMP TABLE order_totals ON COMMIT DROP AS
  SELECT order_id, sum(qty * price) AS total FROM order_items GROUP BY order_id;
UPDATE orders o SET total = t.total FROM order_totals t WHERE t.order_id = o.id;
COMMIT;

-- Flyway V7__dedupe.sql without BEGIN: each statement commits on its own
-- behind a pooler, so the temp table may be missing for the next one
CREATE TEMP TABLE dupes AS SELECT email, min(id) AS keep FROM users GROUP BY email HAVING count(*) > 1; -- want temp-table:error
DELETE FROM users u USING dupes d WHERE u.email = d.email AND u.id <> d.keep;
DROP TABLE dupes;

-- pg_dump --schema-only of an unlogged cache table
CREATE UNLOGGED TABLE public.sessions (id text NOT NULL, data jsonb);
ALTER TABLE ONLY public.sessions ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);
