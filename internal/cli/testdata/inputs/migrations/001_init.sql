-- Initial schema for the job queue.
CREATE TABLE jobs (
    id bigserial PRIMARY KEY,
    queue text NOT NULL,
    payload jsonb NOT NULL,
    run_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX jobs_queue_run_at ON jobs (queue, run_at);

CREATE FUNCTION jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobs', NEW.queue);
    RETURN NEW;
END;
$$;

CREATE FUNCTION lock_queue(q text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RETURN pg_try_advisory_lock(hashtext(q));
END;
$$;
