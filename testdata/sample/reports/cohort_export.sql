-- Cohort export for the data warehouse (written on Windows, CRLF).
-- Scheduled by the ETL runner through PgBouncer.

SET search_path = analytics, public; -- want session-set:critical
SET statement_timeout = '15min'; -- want session-set:error
SET SCHEMA 'analytics'; -- want session-set:critical
SET NAMES 'UTF8'; -- want session-set:info

CREATE TEMP TABLE cohort_users ( -- want temp-table:error
    user_id     bigint PRIMARY KEY,
    cohort      date   NOT NULL,
    first_order date
);

INSERT INTO cohort_users (user_id, cohort, first_order)
SELECT u.id,
       date_trunc('month', u.created_at)::date,
       min(o.created_at)::date
FROM users u
LEFT JOIN orders o ON o.user_id = u.id
GROUP BY u.id, u.created_at;

CREATE TEMPORARY VIEW cohort_sizes AS -- want temp-table:error
    SELECT cohort, count(*) AS users FROM cohort_users GROUP BY cohort;

CREATE TABLE pg_temp.cohort_retention AS -- want temp-table:error
SELECT c.cohort,
       date_trunc('month', o.created_at)::date AS active_month,
       count(DISTINCT o.user_id) AS active_users
FROM cohort_users c
JOIN orders o ON o.user_id = c.user_id
GROUP BY 1, 2;

-- Export staging that lives only inside the export transaction: fine.
BEGIN;
CREATE TEMP TABLE export_batch (LIKE cohort_retention) ON COMMIT DROP;
INSERT INTO export_batch SELECT * FROM cohort_retention WHERE active_month >= cohort;
COPY export_batch TO STDOUT WITH (FORMAT csv, HEADER true);
COMMIT;

CREATE UNLOGGED TABLE IF NOT EXISTS analytics.cohort_snapshot (
    cohort date, active_month date, active_users bigint, taken_at timestamptz DEFAULT now()
);

INSERT INTO analytics.cohort_snapshot (cohort, active_month, active_users)
SELECT cohort, active_month, active_users FROM cohort_retention
RETURNING cohort, active_month;

CREATE TEMP SEQUENCE export_row_seq; -- want temp-table:error
SELECT nextval('export_row_seq') AS row_no, s.* FROM cohort_sizes s ORDER BY cohort;

DISCARD TEMP; -- want discard:info
RESET statement_timeout; -- want session-set:warning
