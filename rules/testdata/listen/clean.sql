-- Sending notifications is safe through a pooler.
NOTIFY job_created;
NOTIFY job_created, '{"id": 42}';
SELECT pg_notify('job_created', json_build_object('id', 42)::text);
SELECT pg_catalog.pg_notify('river_insert', '{"queue":"default"}');
SELECT pg_notification_queue_usage();

CREATE FUNCTION app.notify_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('table_changed', TG_TABLE_NAME);
  NOTIFY table_changed;
  RETURN NEW;
END;
$$;

CREATE TRIGGER jobs_notify AFTER INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION app.notify_trg();

-- words only: a column called listen, strings, comments
-- LISTEN job_created;
CREATE TABLE channels (listen boolean, unlisten boolean, channel text);
SELECT listen, channel FROM channels WHERE listen;
SELECT 'LISTEN job_created' AS how;
/* UNLISTEN *; */

-- subscribed and unsubscribed in one transaction
BEGIN;
LISTEN tmp_channel;
NOTIFY tmp_channel;
UNLISTEN tmp_channel;
COMMIT;

BEGIN;
LISTEN a;
LISTEN b;
UNLISTEN *;
COMMIT;

-- LISTEN takes effect at COMMIT: a rolled-back one never does
BEGIN;
LISTEN never_active;
ROLLBACK;

-- UNLISTEN * cancels every LISTEN of the transaction
BEGIN;
LISTEN tmp_a;
LISTEN tmp_b;
UNLISTEN *;
COMMIT;
